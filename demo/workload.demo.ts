// The demo's workload (run by `npm run demo`, see demo.mjs): the example app on convex-test, with a
// virtual clock. Sends DEMO_JOBS emails through emailPool at maxParallelism DEMO_PARALLELISM, each
// working about DEMO_DURATION_MS and failing an attempt at DEMO_FAIL_RATE (retried by the pool),
// shows progress, then reports from the app's own tables (jobs, attempts, outcomes) and the
// component's config, and draws running jobs, retries and failures over time (chart.ts) to DEMO_OUT,
// by default demo-out/running-j<jobs>-p<parallelism>-d<duration-ms>-f<fail-rate>-s<seed>.svg.
/// <reference types="vite/client" />
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { convexTest } from "convex-test";
import type { GenericDataModel, GenericMutationCtx } from "convex/server";
import { expect, it, vi } from "vitest";
import workpoolTest, { register } from "../src/test.js";
import { api } from "../example/convex/_generated/api.js";
import schema from "../example/convex/schema.js";
import { runningChart } from "./chart.js";
import { startVirtualClock, step as clockStep } from "../test/virtualClock.js";

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
const tty = process.env.DEMO_TTY === "1";
const svgPath = resolve(
  process.env.DEMO_OUT ||
    `demo-out/running-j${jobs}-p${parallelism}-d${durationMs}-f${failRate}-s${seed}.svg`,
);

/** Why retries appear late; printed in the report and under the chart. */
const RETRY_NOTE =
  "A retry waits its backoff, then queues behind jobs already due (the pool starts jobs in " +
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

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

it("runs the example app's email workload", async () => {
  const wallStart = performance.now();
  startVirtualClock();
  const t = convexTest(schema, modules);
  register(t, "emailPool");
  register(t, "scrapePool");
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
  out(`embedded backend: convex-test, virtual clock\n\n`);

  await t.mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: parallelism });
  const t0 = Date.now();
  const CHUNK = 100;
  for (let i = 0; i < jobs; i += CHUNK) {
    const emails = Array.from({ length: Math.min(CHUNK, jobs - i) }, (_, j) => ({
      key: `email-${i + j}`,
      to: `user${i + j}@example.com`,
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

  // Generous bound on virtual time: every job failing all 5 attempts, with backoff, one at a time.
  const deadline = t0 + 60_000 + Math.ceil(jobs / parallelism) * 5 * (durationMs * 1.25 + 4000);
  let nextPlainTenth = 1;
  let step = 0;
  let s = await snapshot();
  while (s.done < jobs && Date.now() < deadline) {
    await clockStep(10);
    if (++step % 10 !== 0) continue;
    s = await snapshot();
    limit = await readLimit();
    if (tty) out(`\r${line(s)}\x1b[K`);
    else if (s.done >= (nextPlainTenth * jobs) / 10) {
      out(`${line(s)}\n`);
      while (s.done >= (nextPlainTenth * jobs) / 10) nextPlainTenth++;
    }
  }
  s = await snapshot();
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
  mkdirSync(dirname(svgPath), { recursive: true });
  writeFileSync(
    svgPath,
    runningChart({
      title:
        `Jobs running over time, emailPool: jobs ${jobs}, parallelism ${parallelism}, duration-ms ${durationMs}, ` +
        `fail-rate ${failRate}, seed ${seed}`,
      limit,
      t0,
      end,
      running: series,
      retriedFailures: retries.map((r) => r.failedAt),
      retryStarts: retries.map((r) => r.startedAt),
      jobFailures: outcomeRows.filter((o) => o.kind === "failed").map((o) => o.finishedAt),
      note: RETRY_NOTE,
    }),
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
        (max > limit ? "  EXCEEDED" : ""),
    ],
    [
      "mean running",
      `${meanRunning.toFixed(2)} over the makespan (${((100 * meanRunning) / limit).toFixed(0)}% of the limit)`,
    ],
    ["chart", svgPath],
    ["wall time", `${((performance.now() - wallStart) / 1000).toFixed(1)} s real`],
  ];
  out(`\nreport\n${rows.map(([k, v]) => `  ${k.padEnd(12)} ${v}`).join("\n")}\n`);

  expect(s.done, "every job finished").toBe(jobs);
  expect(max, "never more running than maxParallelism").toBeLessThanOrEqual(limit);
  vi.useRealTimers();
});
