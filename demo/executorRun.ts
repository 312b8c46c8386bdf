// The demo's second run (workload.demo.ts calls it after the email run): the same jobs, `jobs` waits
// of about `durationMs` (seeded, ±25%; none fails), once as ordinary actions (emails through
// emailPool at the demo's maxParallelism: an action per job, run by the pool's action runners)
// and once as executor tasks
// (summaries through llmPool: llm.run runs up to 50 at once per action), all enqueued at one instant
// on a fresh convex-test backend, so both sides share a clock. Reads each pool as the report does:
// `stats` sampled as the run goes and `list` at its end (poolReadings.ts), and the actions its
// component started from its scheduler records. Steps the virtual clock; writes nothing.
import { convexTest } from "convex-test";
import type { Workpool } from "convex-workpool";
import { api } from "../example/convex/_generated/api.js";
import { SUMMARIZE_CONCURRENCY } from "../example/convex/llm.js";
import { emailPool, llmPool } from "../example/convex/pools.js";
import schema from "../example/convex/schema.js";
import { register } from "../src/test.js";
import { step as clockStep } from "../test/virtualClock.js";
import { listAllJobs, readScheduled, readStats } from "./poolReadings.js";
import type { ComparisonSide, ExecutorComparison } from "./reportComparison.js";
import { summarizeJobs, type StatsSample } from "./reportFigures.js";

/** Who the demo acts as when it operates the example app's pools (jobs.ts checks its caller:
 * the "admin" role claim, operators.ts). */
const DEMO_ADMIN = { subject: "demo-admin", role: "admin" };

/** The scheduled functions that are actions, by the name the component's scheduler records: the
 * worker that runs one attempt of a lone ordinary action and the action runner that runs many
 * (each calls the jobs' actions), and the app's executor. Everything else a pool schedules (its
 * loop, onComplete deliveries) is a mutation. */
const ACTION_NAMES = {
  actions: ["runners/worker:runAction", "runners/actionRunner:run"],
  tasks: ["llm:run"],
} as const;
/** Jobs per enqueue mutation: emails.sendEmails loops, llm.summarizePages is one batch. */
const CHUNK = 100;
/** Slack on the deadline beyond every wave of jobs at the longest duration (virtual ms). */
const DEADLINE_SLACK_MS = 60_000;

export type ComparisonOptions = {
  jobs: number;
  durationMs: number;
  seed: number;
  /** emailPool's maxParallelism for the actions side. */
  parallelism: number;
  /** The app's modules (import.meta.glob), already imported. */
  modules: Record<string, () => Promise<unknown>>;
  /** How often to sample stats, and the clock's step (virtual ms). */
  sampleEveryMs: number;
  stepMs: number;
  /** Called after each sample with the jobs finished on each side. */
  progress?: (done: { actions: number; tasks: number }, at: number) => void;
};

/** Runs both sides at once (see the file comment) and returns what the report shows of them. */
export async function runExecutorComparison(o: ComparisonOptions): Promise<ExecutorComparison> {
  const t = convexTest(schema, o.modules);
  register(t, "emailPool");
  register(t, "llmPool");
  await t.withIdentity(DEMO_ADMIN).mutation(api.jobs.setMaxParallelism, {
    pool: "emailPool",
    maxParallelism: o.parallelism,
  });
  const sim = { ms: o.durationMs, failRate: 0, seed: o.seed };
  // Job i has the same app key on both sides, so the same seeded duration.
  const keyOf = (i: number) => `io-${i}`;
  for (let i = 0; i < o.jobs; i += CHUNK) {
    const n = Math.min(CHUNK, o.jobs - i);
    const at = Array.from({ length: n }, (_, j) => keyOf(i + j));
    await t.mutation(api.emails.sendEmails, {
      emails: at.map((key) => ({ key, to: `${key}@example.com` })),
      ...sim,
    });
    await t.mutation(api.llm.summarizePages, {
      pages: at.map((key) => ({ key, url: `https://news.example/${key}` })),
      ...sim,
    });
  }

  const pools: Record<"actions" | "tasks", Workpool> = { actions: emailPool, tasks: llmPool };
  const samples: Record<"actions" | "tasks", StatsSample[]> = { actions: [], tasks: [] };
  const sample = async () => {
    for (const side of ["actions", "tasks"] as const) {
      samples[side].push({ at: Date.now(), ...(await readStats(t, pools[side])) });
    }
  };
  const done = async () =>
    await t.run(async (ctx) => {
      const rows = await ctx.db.query("outcomes").collect();
      return {
        actions: rows.filter((row) => row.pool === "emailPool").length,
        tasks: rows.filter((row) => row.pool === "llmPool").length,
      };
    });
  const deadline =
    Date.now() +
    DEADLINE_SLACK_MS +
    Math.ceil(o.jobs / Math.min(o.parallelism, SUMMARIZE_CONCURRENCY)) * o.durationMs * 1.25;
  await sample();
  let finished = await done();
  for (let stepNo = 1; Math.min(finished.actions, finished.tasks) < o.jobs; stepNo++) {
    if (Date.now() >= deadline) break;
    await clockStep(o.stepMs);
    if (stepNo % (o.sampleEveryMs / o.stepMs) !== 0) continue;
    await sample();
    finished = await done();
    o.progress?.(finished, Date.now());
  }
  await sample();

  const side = async (
    name: "actions" | "tasks",
    extra: Pick<ComparisonSide, "pool" | "runs" | "concurrency">,
  ): Promise<ComparisonSide> => {
    const scheduled = await readScheduled(t, extra.pool);
    const actions: Record<string, number> = {};
    for (const action of ACTION_NAMES[name]) {
      if (scheduled[action]) actions[action] = scheduled[action];
    }
    const jobs = summarizeJobs(await listAllJobs(t, pools[name]));
    // An action runner calls each job's action, an action of its own (a worker's runs in its
    // slot, counted with it): every attempt not run by a worker is one more action.
    const runnerAttempts = jobs.attempts - (scheduled["runners/worker:runAction"] ?? 0);
    if (name === "actions" && actions["runners/actionRunner:run"] && runnerAttempts > 0) {
      actions[`${extra.runs} (by action runners)`] = runnerAttempts;
    }
    return {
      ...extra,
      samples: samples[name],
      final: await readStats(t, pools[name]),
      jobs,
      actions,
    };
  };
  return {
    workload: { jobs: o.jobs, durationMs: o.durationMs, seed: o.seed },
    actions: await side("actions", { pool: "emailPool", runs: "emails:send" }),
    tasks: await side("tasks", {
      pool: "llmPool",
      runs: "llm:run, task summarize",
      concurrency: SUMMARIZE_CONCURRENCY,
    }),
  };
}
