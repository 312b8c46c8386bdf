// The demo's workload (run by `npm run demo`, see demo.mjs): the example app on convex-test, with a
// virtual clock. Sends DEMO_JOBS emails through emailPool at maxParallelism DEMO_PARALLELISM, each
// working about DEMO_DURATION_MS and failing an attempt at DEMO_FAIL_RATE (retried by the pool),
// shows progress, then reports from the app's own tables (jobs, attempts, outcomes) and the
// component's config, and draws running jobs, retries and failures over time (chart.ts) to DEMO_OUT,
// by default demo-out/running-j<jobs>-p<parallelism>-d<duration-ms>-f<fail-rate>-s<seed>[-k<keys>].svg.
// With DEMO_KEYS = N, email i is sent with poolKey k<i mod N> (the pool's `key`; emailPool leaves
// keyParallelism at the component's default, 1), and the report adds each key's progress from the
// pool's own keyStatus, with per-key concurrency and start order from the app's attempts table.
// It also writes the operator's view of the run to DEMO_REPORT (default demo-out/report.html) and
// the figures it shows beside it (report.json): built by report.ts and reportFigures.ts only from
// the pool's own stats (sampled as the run goes), list and keyStatus (poolReadings.ts), not from
// the app's tables.
// Then, unless DEMO_COMPARE_JOBS is 0, a second run on a fresh backend (executorRun.ts): that many
// jobs of ~2 s, once as ordinary actions through emailPool at DEMO_PARALLELISM and once as tasks of
// llmPool's executor, side by side in the report and in the printed summary.
/// <reference types="vite/client" />
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { convexTest } from "convex-test";
import type { GenericDataModel, GenericMutationCtx } from "convex/server";
import { expect, it, vi } from "vitest";
import { DEFAULT_RETRY_BEHAVIOR, type KeyStatus } from "convex-workpool";
import workpoolTest, { register } from "../src/test.js";
import { api } from "../example/convex/_generated/api.js";
import type { Doc } from "../example/convex/_generated/dataModel.js";
import { rateChecks } from "../bench/checks.js";
import { emailPool } from "../example/convex/pools.js";
import schema from "../example/convex/schema.js";
import { runningChart } from "./chart.js";
import { runExecutorComparison } from "./executorRun.js";
import { listAllJobs, readKeys, readStats } from "./poolReadings.js";
import { reportHtml } from "./report.js";
import { actionsStarted, type ExecutorComparison } from "./reportComparison.js";
import { figureValues, summarizeJobs, type ReportData, type StatsSample } from "./reportFigures.js";
import { startVirtualClock, step as clockStep } from "../test/virtualClock.js";

/** Who the demo acts as when it operates the example app's pools (jobs.ts checks its caller:
 * the "admin" role claim, operators.ts). */
const DEMO_ADMIN = { subject: "demo-admin", role: "admin" };

const modules = import.meta.glob("../example/convex/**/*.ts");

function envNumber(name: string, def: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? def : Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}

const jobs = envNumber("DEMO_JOBS", 200);
const parallelism = envNumber("DEMO_PARALLELISM", 10);
const durationMs = envNumber("DEMO_DURATION_MS", 1000);
const failRate = envNumber("DEMO_FAIL_RATE", 0.1);
const seed = envNumber("DEMO_SEED", 1);
/** How many pool keys the emails are spread over; 0 for none (unkeyed emails). */
const keys = envNumber("DEMO_KEYS", 0);
/** With DEMO_PRIORITY_MIX=1, email i is "high" when i is a multiple of 10, else "low" when a
 * multiple of 3, else "normal". */
const priorityMix = process.env.DEMO_PRIORITY_MIX === "1";
/** emailPool's rate limit from DEMO_RATE ("starts,periodMs"), if any. */
const rate = ((raw) => {
  if (!raw) return undefined;
  const [starts, periodMs] = raw.split(",").map(Number);
  return { starts, periodMs };
})(process.env.DEMO_RATE);
/** Jobs of the second run, executor tasks beside ordinary actions; 0 skips it. */
const compareJobs = envNumber("DEMO_COMPARE_JOBS", 100);
/** How long each job of the second run waits (virtual ms, ±25%): I/O, such as a model call. */
const COMPARE_DURATION_MS = 2000;
const tty = process.env.DEMO_TTY === "1";
const svgPath = resolve(
  process.env.DEMO_OUT ||
    `demo-out/running-j${jobs}-p${parallelism}-d${durationMs}-f${failRate}-s${seed}` +
      `${keys ? `-k${keys}` : ""}.svg`,
);
const reportPath = resolve(process.env.DEMO_REPORT || "demo-out/report.html");
/** report.json: the page's data and figures, beside the page. */
const reportJsonPath = reportPath.replace(/\.html$/i, "") + ".json";
/** How often (virtual ms) the progress loop reads the app's tables and samples the pool's stats. */
const SAMPLE_EVERY_MS = 100;
/** The virtual clock's step (ms): small, so that a job's start is seen within ~10 ms. */
const STEP_MS = 10;

/** The pool key of email `i`, or undefined without keys. */
const poolKeyOf = (i: number) => (keys ? `k${i % keys}` : undefined);

type Priority = "high" | "normal" | "low";
const PRIORITIES: Priority[] = ["high", "normal", "low"];
/** The priority of email `i` with --priority-mix, or undefined without. */
const priorityOf = (i: number): Priority | undefined =>
  !priorityMix ? undefined : i % 10 === 0 ? "high" : i % 3 === 0 ? "low" : "normal";

/** Why retries appear late (with keys: why a key can sit idle); printed in the report and under
 * the chart. */
const RETRY_NOTE = keys
  ? "A retry keeps its key's slot: the key's next job waits for it, backoff included; once due, " +
    "it queues behind jobs already due."
  : "A retry waits its backoff, then queues behind jobs already due (the pool starts jobs in " +
    "due order), so with a backlog, retries start late.";

const out = (s: string) => process.stdout.write(s);

type Interval = { start: number; end: number };

/** The most intervals open at one moment, and the step series of how many are open over time. */
function concurrency(intervals: Interval[]) {
  const events = intervals.flatMap((i) => [
    { at: i.start, d: 1 },
    { at: i.end, d: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  let running = 0;
  let max = 0;
  const series: Array<{ at: number; running: number }> = [];
  for (const e of events) {
    running += e.d;
    max = Math.max(max, running);
    if (series.length && series[series.length - 1].at === e.at)
      series[series.length - 1].running = running;
    else series.push({ at: e.at, running });
  }
  return { max, series };
}

/** One key of a run with keys: the pool's counts, and what the app's tables say of its emails. */
type KeyRow = {
  key: string;
  /** The app's `jobs` rows with this poolKey. */
  emails: number;
  /** The pool's keyStatus at the end of the run (jobs.keyProgress). */
  status: KeyStatus;
  /** The key's finished emails by outcome, from the app's `outcomes` table. */
  outcomes: { succeeded: number; failed: number; canceled: number };
  /** The most attempts of the key's emails running at one moment. */
  atOnce: number;
  /** Whether the key's emails first started in queue order: by priority, then as sent. */
  inOrder: boolean;
  /** Whether each email started only after the key's previous email's last attempt ended (its
   * retries included: a retry keeps its key's slot). */
  oneAfterAnother: boolean;
  /** Emails of the key that were retried and had a next email waiting behind them. */
  retriedAhead: number;
};

/**
 * Each key's row: the pool's own keyStatus, and from the app's tables how many of its emails ran at
 * once and whether they started in queue order: a key's queue is ordered by priority, then due
 * time, and all emails are sent before the clock moves, so by priority, then as sent (email i was
 * sent i-th; its app key is email-i).
 */
async function keyRows(
  keyCount: number,
  keyStatus: (key: string) => Promise<KeyStatus>,
  rows: { jobs: Doc<"jobs">[]; attempts: Doc<"attempts">[]; outcomes: Doc<"outcomes">[] },
  end: number,
): Promise<KeyRow[]> {
  const sentIndex = (appKey: string) => Number(appKey.slice("email-".length));
  const rank = (job: Doc<"jobs">) => PRIORITIES.indexOf(job.priority ?? "normal");
  const emailsOf = new Map<string, Doc<"jobs">[]>();
  for (const job of rows.jobs) {
    if (job.poolKey === undefined) continue;
    const list = emailsOf.get(job.poolKey) ?? [];
    if (list.length === 0) emailsOf.set(job.poolKey, list);
    list.push(job);
  }
  const attemptsOf = new Map<string, Doc<"attempts">[]>();
  for (const a of rows.attempts) {
    const list = attemptsOf.get(a.key) ?? [];
    if (list.length === 0) attemptsOf.set(a.key, list);
    list.push(a);
  }
  const outcomeOf = new Map(rows.outcomes.map((o) => [o.key, o.kind]));
  const result: KeyRow[] = [];
  for (let k = 0; k < keyCount; k++) {
    const key = `k${k}`;
    const emails = (emailsOf.get(key) ?? [])
      .sort((a, b) => rank(a) - rank(b) || sentIndex(a.key) - sentIndex(b.key))
      .map((job) => job.key);
    const attempts = emails.map((e) => attemptsOf.get(e) ?? []);
    const firstStart = attempts.map((as) =>
      as.length ? Math.min(...as.map((a) => a.startedAt)) : undefined,
    );
    const lastEnd = attempts.map((as) =>
      as.length && as.every((a) => a.endedAt !== undefined)
        ? Math.max(...as.map((a) => a.endedAt!))
        : undefined,
    );
    const started = (i: number) => firstStart[i] !== undefined;
    const kinds = emails.map((e) => outcomeOf.get(e));
    result.push({
      key,
      emails: emails.length,
      status: await keyStatus(key),
      outcomes: {
        succeeded: kinds.filter((kind) => kind === "success").length,
        failed: kinds.filter((kind) => kind === "failed").length,
        canceled: kinds.filter((kind) => kind === "canceled").length,
      },
      atOnce: concurrency(
        attempts.flat().map((a) => ({ start: a.startedAt, end: a.endedAt ?? end })),
      ).max,
      // An email that never started is fine only when no later email of the key started.
      inOrder: emails.every(
        (_, i) =>
          i === 0 || !started(i) || (started(i - 1) && firstStart[i - 1]! <= firstStart[i]!),
      ),
      oneAfterAnother: emails.every(
        (_, i) =>
          i === 0 ||
          !started(i) ||
          (lastEnd[i - 1] !== undefined && lastEnd[i - 1]! <= firstStart[i]!),
      ),
      retriedAhead: attempts.filter((as, i) => as.length > 1 && i + 1 < emails.length).length,
    });
  }
  return result;
}

/** The per-key section of the report: a summary, then a table of some keys. */
function keyReport(rows: KeyRow[], table = 20): string {
  const sum = (pick: (row: KeyRow) => number) => rows.reduce((n, row) => n + pick(row), 0);
  const sizes = rows.map((row) => row.emails);
  const parallelisms = [...new Set(rows.map((row) => row.status.parallelism))];
  const counted = (row: KeyRow) =>
    row.status.pending +
    row.status.running +
    row.status.succeeded +
    row.status.failed +
    row.status.canceled;
  const disagree = rows.filter(
    (row) =>
      counted(row) !== row.emails ||
      row.status.succeeded !== row.outcomes.succeeded ||
      row.status.failed !== row.outcomes.failed ||
      row.status.canceled !== row.outcomes.canceled,
  );
  const outOfOrder = rows.filter((row) => !row.inOrder);
  const overlapping = rows.filter((row) => !row.oneAfterAnother);
  const atOnce = Math.max(0, ...rows.map((row) => row.atOnce));
  const names = (bad: KeyRow[]) =>
    bad
      .slice(0, 10)
      .map((row) => row.key)
      .join(", ") + (bad.length > 10 ? ", …" : "");
  const lines: Array<[string, string]> = [
    [
      "keys",
      `${rows.length} (email i has key k<i mod ${rows.length}>), ` +
        `${Math.min(...sizes) === Math.max(...sizes) ? sizes[0] : `${Math.min(...sizes)} to ${Math.max(...sizes)}`} emails each; ` +
        `keyParallelism ${parallelisms.join(" / ")}`,
    ],
    [
      "finished",
      `${sum((row) => row.status.succeeded)} succeeded, ${sum((row) => row.status.failed)} failed, ` +
        `${sum((row) => row.status.canceled)} canceled; ${sum((row) => row.status.pending)} pending, ` +
        `${sum((row) => row.status.running)} running` +
        (disagree.length
          ? `; DISAGREES with the app's jobs and outcomes tables for ${disagree.length} keys: ${names(disagree)}`
          : " (the app's jobs and outcomes tables agree, key by key)"),
    ],
    [
      "at once",
      `at most ${atOnce} email${atOnce === 1 ? "" : "s"} of one key running at a time (attempts table; limit ${Math.min(...parallelisms)})` +
        (atOnce > Math.min(...parallelisms) ? "  EXCEEDED" : ""),
    ],
    [
      "order",
      outOfOrder.length
        ? `OUT OF ORDER: ${outOfOrder.length} keys started emails out of queue order: ${names(outOfOrder)}`
        : `every key's emails started in queue order, by priority then as sent (${rows.length} of ${rows.length} keys)`,
    ],
    [
      "retries",
      overlapping.length
        ? `OVERLAP: ${overlapping.length} keys started an email before the previous one finished: ${names(overlapping)}`
        : `each key's next email started only after the previous one's last attempt ended ` +
          `(${sum((row) => row.retriedAhead)} retried emails held their key's next email back)`,
    ],
  ];
  // The first keys, and any key with a problem.
  const shown = rows.filter(
    (row, i) =>
      i < table || disagree.includes(row) || outOfOrder.includes(row) || overlapping.includes(row),
  );
  const header = [
    "key",
    "emails",
    "succeeded",
    "failed",
    "canceled",
    "pending",
    "running",
    "at once",
  ];
  const width = Math.max(3, ...shown.map((row) => row.key.length));
  const cell = (v: string | number, i: number) =>
    i === 0 ? String(v).padEnd(width) : String(v).padStart(header[i].length);
  const tableLines = [
    [...header.map((h, i) => cell(h, i)), "in order"].join("  "),
    ...shown.map((row) =>
      [
        ...[
          row.key,
          row.emails,
          row.status.succeeded,
          row.status.failed,
          row.status.canceled,
          row.status.pending,
          row.status.running,
          row.atOnce,
        ].map(cell),
        row.inOrder ? "yes" : "NO",
      ].join("  "),
    ),
    ...(shown.length < rows.length
      ? [`… ${rows.length - shown.length} more keys (counted in the lines above)`]
      : []),
  ];
  return (
    `\nper-key progress (emailPool's keyStatus of each key at the end of the run)\n` +
    lines.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join("\n") +
    `\n\n${tableLines.map((l) => `  ${l}`).join("\n")}\n`
  );
}

/** The printed summary's rows of the second run, one per side. */
function comparisonRows(c: ExecutorComparison | undefined): Array<[string, string]> {
  if (!c) return [];
  return (["actions", "tasks"] as const).map((name) => {
    const side = c[name];
    const makespan = (side.jobs.lastFinishedAt ?? 0) - (side.jobs.firstEnqueuedAt ?? 0);
    const peak = Math.max(...side.samples.map((x) => x.running));
    const started = actionsStarted(side);
    return [
      name === "actions" ? "as actions" : "as tasks",
      `${side.jobs.succeeded}/${side.jobs.total} succeeded in ${(makespan / 1000).toFixed(2)} s virtual, ` +
        `peak ${peak} running (${side.pool}, maxParallelism ${side.final.maxParallelism}), ` +
        `${started} action${started === 1 ? "" : "s"} started (${Object.keys(side.actions).join(", ")})`,
    ];
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

it("runs the example app's email workload", async () => {
  const wallStart = performance.now();
  startVirtualClock();
  const t = convexTest(schema, modules);
  // With a rate limit, the pool's own DEBUG lines say when it started each attempt (what the limit
  // counts; the function itself begins a little later): collect their times, print none.
  const poolStarts: number[] = [];
  if (rate) {
    vi.spyOn(console, "debug").mockImplementation((line: string) => {
      if (line.includes('"event":"started"')) poolStarts.push(Date.now());
    });
    vi.spyOn(console, "info").mockImplementation(() => {});
  }
  const logLevel = rate ? "DEBUG" : undefined;
  register(t, "emailPool", { logLevel });
  register(t, "scrapePool", { logLevel });
  // Load the app's and the component's modules now: convex-test imports them on first use, which is
  // real I/O the fake clock does not wait for, so the first jobs would appear to start late.
  await Promise.all(
    Object.entries({ ...modules, ...workpoolTest.modules })
      .filter(([path]) => path.split("/").pop()!.split(".").length === 2) // not *.config.ts, *.test.ts
      .map(([, load]) => load()),
  );

  // The pool's maxParallelism, as stored in its component's config table (read with convex-test's
  // runInComponent, which exists at run time but is not in convex-test's types).
  const withComponents = t as unknown as {
    runInComponent<R>(
      name: string,
      fn: (ctx: GenericMutationCtx<GenericDataModel>) => Promise<R>,
    ): Promise<R>;
  };
  const readLimit = async (): Promise<number> =>
    await withComponents.runInComponent("emailPool", async (ctx) => {
      const row = await ctx.db.query("config").first();
      return row?.maxParallelism as number;
    });

  out(
    `convex-workpool demo: ${jobs} emails through emailPool, maxParallelism ${parallelism}, ` +
      `~${durationMs} ms each, fail rate ${failRate} per attempt (retries: 5 attempts), seed ${seed}\n`,
  );
  if (keys) {
    out(
      `keys: ${keys}, email i has pool key k<i mod ${keys}>; emailPool's keyParallelism is the ` +
        `component's default, 1: one email of a key at a time, in order\n`,
    );
  }
  if (priorityMix) {
    out(`priority mix: every 10th email high, every 3rd of the rest low, the others normal\n`);
  }
  if (rate) out(`rate limit: at most ${rate.starts} starts in any ${rate.periodMs} ms\n`);
  out(`embedded backend: convex-test, virtual clock\n\n`);

  await t
    .withIdentity(DEMO_ADMIN)
    .mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: parallelism });
  if (rate)
    await t
      .withIdentity(DEMO_ADMIN)
      .mutation(api.jobs.setRateLimit, { pool: "emailPool", rateLimit: rate });
  const t0 = Date.now();
  const CHUNK = 100;
  for (let i = 0; i < jobs; i += CHUNK) {
    const emails = Array.from({ length: Math.min(CHUNK, jobs - i) }, (_, j) => ({
      key: `email-${i + j}`,
      to: `user${i + j}@example.com`,
      poolKey: poolKeyOf(i + j),
      priority: priorityOf(i + j),
    }));
    await t.mutation(api.emails.sendEmails, { emails, ms: durationMs, failRate, seed });
  }

  const snapshot = async () =>
    await t.run(async (ctx) => {
      const outcomes = await ctx.db.query("outcomes").collect();
      const attempts = await ctx.db.query("attempts").collect();
      return {
        done: outcomes.length,
        failed: outcomes.filter((o) => o.kind === "failed").length,
        running: attempts.filter((a) => a.endedAt === undefined).length,
        retries: attempts.filter((a) => a.attempt > 1).length,
      };
    });
  let limit = await readLimit();
  const line = (s: Awaited<ReturnType<typeof snapshot>>) =>
    `[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s virtual] done ${String(s.done).padStart(String(jobs).length)}/${jobs}` +
    ` | running ${String(s.running).padStart(String(limit).length)}/${limit} | retries ${s.retries} | failed ${s.failed}`;

  // Generous bound on virtual time: every job failing all 5 attempts, with backoff, one at a time
  // (per slot: at most `keys` slots with keys, keyParallelism being 1).
  const slots = keys ? Math.min(parallelism, keys) : parallelism;
  const deadline =
    t0 +
    60_000 +
    Math.ceil(jobs / slots) * 5 * (durationMs * 1.25 + 4000) +
    (rate ? Math.ceil((jobs * 5) / rate.starts) * rate.periodMs : 0);
  let nextPlainTenth = 1;
  let step = 0;
  let s = await snapshot();
  // The pool's stats over time, for the report page's charts.
  const samples: StatsSample[] = [];
  const sample = async () => samples.push({ at: Date.now(), ...(await readStats(t, emailPool)) });
  await sample();
  while (s.done < jobs && Date.now() < deadline) {
    await clockStep(STEP_MS);
    if (++step % (SAMPLE_EVERY_MS / STEP_MS) !== 0) continue;
    s = await snapshot();
    await sample();
    limit = await readLimit();
    if (tty) out(`\r${line(s)}\x1b[K`);
    else if (s.done >= (nextPlainTenth * jobs) / 10) {
      out(`${line(s)}\n`);
      while (s.done >= (nextPlainTenth * jobs) / 10) nextPlainTenth++;
    }
  }
  s = await snapshot();
  await sample();
  if (tty) out(`\r${line(s)}\x1b[K\n`);

  // The report, from the app's own records.
  const { jobRows, attemptRows, outcomeRows } = await t.run(async (ctx) => ({
    jobRows: await ctx.db.query("jobs").collect(),
    attemptRows: await ctx.db.query("attempts").collect(),
    outcomeRows: await ctx.db.query("outcomes").collect(),
  }));
  const count = (kind: string) => outcomeRows.filter((o) => o.kind === kind).length;
  const firstStart = new Map(
    attemptRows.filter((a) => a.attempt === 1).map((a) => [a.key, a.startedAt]),
  );
  const lags = jobRows
    .filter((j) => firstStart.has(j.key))
    .map((j) => firstStart.get(j.key)! - j.enqueuedAt)
    .sort((a, b) => a - b);
  const end = Math.max(t0, ...outcomeRows.map((o) => o.finishedAt));
  const makespanMs = end - t0;
  const { max, series } = concurrency(
    attemptRows.map((a) => ({ start: a.startedAt, end: a.endedAt ?? end })),
  );
  let busyMs = 0;
  for (let i = 0; i + 1 < series.length; i++)
    busyMs += series[i].running * (series[i + 1].at - series[i].at);
  const meanRunning = busyMs / Math.max(makespanMs, 1);
  // Retries: when a failed attempt's job started again, and how long after.
  const attemptAt = new Map(attemptRows.map((a) => [`${a.key}#${a.attempt}`, a]));
  const retries = attemptRows
    .filter((a) => a.attempt > 1)
    .map((a) => ({
      failedAt: attemptAt.get(`${a.key}#${a.attempt - 1}`)?.endedAt,
      startedAt: a.startedAt,
    }))
    .filter((r): r is { failedAt: number; startedAt: number } => r.failedAt !== undefined);
  const retryWaits = retries.map((r) => r.startedAt - r.failedAt).sort((a, b) => a - b);
  // Per key (with keys): the pool's keyStatus of each key (jobs.keyProgress), with the app's tables.
  const perKey = keys
    ? await keyRows(
        keys,
        async (key) =>
          await t.withIdentity(DEMO_ADMIN).query(api.jobs.keyProgress, { pool: "emailPool", key }),
        { jobs: jobRows, attempts: attemptRows, outcomes: outcomeRows },
        end,
      )
    : [];
  const keyParallelism = Math.min(...perKey.map((row) => row.status.parallelism));
  /** With keys, at most keys × keyParallelism jobs can run at once. */
  const keyLimit = keys ? keys * keyParallelism : undefined;
  mkdirSync(dirname(svgPath), { recursive: true });
  writeFileSync(
    svgPath,
    runningChart({
      title:
        `Jobs running, emailPool: jobs ${jobs}, parallelism ${parallelism}, duration-ms ${durationMs}, ` +
        `fail-rate ${failRate}, seed ${seed}, ` +
        (keys ? `keys ${keys} (keyParallelism ${keyParallelism})` : "no keys"),
      limit,
      keyLimit,
      t0,
      end,
      running: series,
      retriedFailures: retries.map((r) => r.failedAt),
      retryStarts: retries.map((r) => r.startedAt),
      jobFailures: outcomeRows.filter((o) => o.kind === "failed").map((o) => o.finishedAt),
      note: RETRY_NOTE,
    }),
  );

  /** Start lag per priority (with --priority-mix): how priority reorders the queue. */
  const priorityRows = (): Array<[string, string]> => {
    if (!priorityMix) return [];
    const priorityOfJob = new Map(jobRows.map((j) => [j.key, j.priority ?? "normal"]));
    return PRIORITIES.map((priority) => {
      const own = jobRows
        .filter((j) => priorityOfJob.get(j.key) === priority && firstStart.has(j.key))
        .map((j) => firstStart.get(j.key)! - j.enqueuedAt)
        .sort((a, b) => a - b);
      return [
        `lag ${priority}`,
        `${own.length} emails: start lag p50 ${percentile(own, 50)} ms, max ${own[own.length - 1]} ms`,
      ];
    });
  };
  /** The rate limit as kept (with --rate): the pool's starts, window by window. */
  const rateRows = (): Array<[string, string]> => {
    if (!rate || poolStarts.length === 0) return [];
    const { busiest, spanMs, achieved } = rateChecks(poolStarts, rate);
    return [
      [
        "rate limit",
        `${rate.starts} per ${rate.periodMs} ms: busiest window ${busiest} starts ` +
          `(counted when the pool starts an attempt; the function begins a moment later)`,
      ],
      [
        "achieved",
        `${poolStarts.length} starts in ${(spanMs / 1000).toFixed(1)} s: ` +
          `${(100 * achieved).toFixed(1)}% of the limit's pace`,
      ],
    ];
  };

  // The second run: the same jobs as ordinary actions and as executor tasks, on a fresh backend.
  let comparison: ExecutorComparison | undefined;
  if (compareJobs > 0) {
    out(
      `\nexecutor run: ${compareJobs} jobs of ~${COMPARE_DURATION_MS} ms, enqueued at once as emailPool ` +
        `actions (maxParallelism ${parallelism}) and as llmPool executor tasks\n`,
    );
    const compareLine = (done: { actions: number; tasks: number }, at: number, c0: number) =>
      `[${((at - c0) / 1000).toFixed(1).padStart(6)}s virtual] actions done ${done.actions}/${compareJobs}` +
      ` | tasks done ${done.tasks}/${compareJobs}`;
    const c0 = Date.now();
    comparison = await runExecutorComparison({
      jobs: compareJobs,
      durationMs: COMPARE_DURATION_MS,
      seed,
      parallelism,
      modules,
      sampleEveryMs: SAMPLE_EVERY_MS,
      stepMs: STEP_MS,
      progress: (done, at) => {
        if (tty) out(`\r${compareLine(done, at, c0)}\x1b[K`);
      },
    });
    if (tty) out(`\n`);
  }

  // The operator's page, from the pool's own readings only (the rate limit from its config).
  const report: ReportData = {
    settings: {
      pool: "emailPool",
      workload: { jobs, durationMs, failRate, seed, priorityMix },
      keys,
      rateLimit:
        (await withComponents.runInComponent("emailPool", async (ctx) => {
          const row = await ctx.db.query("config").first();
          return row?.rateLimit as ReportData["settings"]["rateLimit"];
        })) ?? undefined, // null when unset: convex-test returns values as Convex values
      retry: DEFAULT_RETRY_BEHAVIOR, // emailPool retries actions with the default behavior
    },
    sampleEveryMs: SAMPLE_EVERY_MS,
    samples,
    final: await readStats(t, emailPool),
    jobs: summarizeJobs(await listAllJobs(t, emailPool)),
    keys: await readKeys(
      t,
      emailPool,
      Array.from({ length: keys }, (_, k) => `k${k}`),
    ),
    comparison,
  };
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, reportHtml(report));
  writeFileSync(
    reportJsonPath,
    JSON.stringify({ figures: figureValues(report), data: report }, null, 2) + "\n",
  );

  const rows: Array<[string, string]> = [
    [
      "jobs",
      `${jobs}: ${count("success")} succeeded, ${count("failed")} failed, ${count("canceled")} canceled` +
        (s.done < jobs ? `, ${jobs - s.done} UNFINISHED` : ""),
    ],
    [
      "attempts",
      `${attemptRows.length} (${attemptRows.length - firstStart.size} retries` +
        (retryWaits.length
          ? `, started p50 ${(percentile(retryWaits, 50) / 1000).toFixed(1)} s after the failed attempt)`
          : ")"),
    ],
    ["", RETRY_NOTE],
    ["makespan", `${(makespanMs / 1000).toFixed(2)} s virtual (first enqueue to last onComplete)`],
    ["throughput", `${(jobs / Math.max(makespanMs / 1000, 1e-9)).toFixed(2)} jobs/s`],
    [
      "start lag",
      `p50 ${percentile(lags, 50)} ms, p95 ${percentile(lags, 95)} ms, min ${lags[0]} ms ` +
        `(enqueue to first attempt; all jobs are enqueued at once, so mostly queueing)`,
    ],
    [
      "concurrency",
      `highest ${max} running at once; maxParallelism ${limit} (component config)` +
        (max > limit ? "  EXCEEDED" : "") +
        (keyLimit !== undefined && keyLimit < limit
          ? `; ${keys} keys × keyParallelism ${keyParallelism} allow at most ${keyLimit}`
          : ""),
    ],
    [
      "mean running",
      `${meanRunning.toFixed(2)} over the makespan (${((100 * meanRunning) / limit).toFixed(0)}% of the limit)`,
    ],
    ...priorityRows(),
    ...rateRows(),
    ...comparisonRows(comparison),
    ["chart", svgPath],
    ["report page", `${reportPath} (its figures: ${reportJsonPath})`],
    ["wall time", `${((performance.now() - wallStart) / 1000).toFixed(1)} s real`],
  ];
  out(`\nreport\n${rows.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join("\n")}\n`);
  if (keys) out(keyReport(perKey));

  expect(s.done, "every job finished").toBe(jobs);
  // The pool's own figures (the report page's) agree with the app's records.
  expect(report.final, "the pool's stats at the end").toMatchObject({ pending: 0, running: 0 });
  expect(report.jobs, "the pool's list").toMatchObject({
    total: jobs,
    succeeded: count("success"),
    failed: count("failed"),
    canceled: count("canceled"),
    attempts: attemptRows.length,
  });
  if (rate) {
    expect(poolStarts.length, "every attempt's start was heard").toBe(attemptRows.length);
    expect(rateChecks(poolStarts, rate).busiest, "starts in one window").toBeLessThanOrEqual(
      rate.starts,
    );
  }
  expect(max, "never more running than maxParallelism").toBeLessThanOrEqual(limit);
  if (comparison) {
    for (const side of [comparison.actions, comparison.tasks]) {
      expect(side.jobs, `${side.pool}'s list in the executor run`).toMatchObject({
        total: compareJobs,
        succeeded: compareJobs,
      });
      const peak = Math.max(...side.samples.map((x) => x.running));
      expect(peak, `${side.pool} within its maxParallelism`).toBeLessThanOrEqual(
        side.final.maxParallelism,
      );
    }
    // Ordinary actions: an action per job (none fails), plus the action runners that ran them
    // (jobs started together share one); executor actions: fewer than jobs once an executor has
    // more than one job to run.
    expect(actionsStarted(comparison.actions), "actions").toBeGreaterThanOrEqual(compareJobs);
    expect(actionsStarted(comparison.tasks), "executor actions").toBeGreaterThanOrEqual(1);
    if (compareJobs > 1) {
      expect(actionsStarted(comparison.tasks), "executor actions").toBeLessThan(compareJobs);
    }
  }
  for (const row of perKey) {
    expect(
      row.atOnce,
      `never more of key ${row.key} running than its parallelism`,
    ).toBeLessThanOrEqual(row.status.parallelism);
    expect(row.inOrder, `key ${row.key}'s emails started in queue order`).toBe(true);
    if (row.status.parallelism === 1) {
      expect(row.oneAfterAnother, `key ${row.key}'s emails ran one after another`).toBe(true);
    }
    expect(row.status, `key ${row.key}'s keyStatus agrees with the app's tables`).toMatchObject({
      pending: 0,
      running: 0,
      ...row.outcomes,
    });
  }
  vi.useRealTimers();
});
