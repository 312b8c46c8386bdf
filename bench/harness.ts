/**
 * Runs one scenario on one pool ("ours" or "peer") on a fresh convex-test backend with a virtual
 * clock, and measures it: function calls, documents and bytes (from convex-test, see instrument.ts),
 * start lag, makespan, utilization and concurrency (from what the jobs recorded), and onComplete
 * calls per result kind (from the rows onComplete wrote).
 */
/// <reference types="vite/client" />
import { convexTest } from "convex-test";
import { vi } from "vitest";
import peerTest from "@convex-dev/workpool/test";
import batchWorkerTest from "@convex-dev/batch-worker/test";
import oursTest from "../src/test.js";
import { api } from "./app/_generated/api.js";
import { probe } from "./app/probe.js";
import schema from "./app/schema.js";
import { installInstrumentation, resetCounters, type Counters } from "./instrument.js";
import { startVirtualClock, step } from "../test/virtualClock.js";

export type SideName = "ours" | "peer";

export const appModules = import.meta.glob("./app/**/*.ts");

export type Scenario = {
  id: string;
  title: string;
  /** A few words for the summary table of docs/BENCHMARKS.md (default: the title). */
  short?: string;
  /** What the workload is and why it matters to a user, for docs/BENCHMARKS.md. */
  about?: string;
  kind: "action" | "mutation";
  jobs: number;
  maxParallelism: number;
  /** How long each action attempt works (virtual ms). */
  ms: number;
  /** The first `failTimes` attempts of each job throw. */
  failTimes: number;
  retry?: { maxAttempts: number; initialBackoffMs: number; base: number };
  runAfter?: number;
  /** Call cancelAll this long (virtual ms) after enqueueing. */
  cancelAllAfter?: number;
  /** Enqueue one job every this many ms instead of all at once. */
  trickleEveryMs?: number;
  /** The result kind every onComplete must get. */
  expectKind: "success" | "failed" | "canceled";
  /** Virtual time allowed for the whole scenario. */
  deadlineMs: number;
};

export type Result = {
  side: SideName;
  scenario: Scenario;
  counters: Counters;
  lags: number[];
  makespanMs: number;
  busyMs: number;
  maxConcurrency: number;
  completions: Record<string, number>;
  lost: number;
  duplicates: number;
  wrongKind: number;
  wallSeconds: number;
  finished: boolean;
  /** The backend, for inspection after the run. */
  backend: ReturnType<typeof newBackend>;
};

/** Virtual time the harness keeps running after the last onComplete (counted: the loop winding
 * down is part of the cost), and to catch late duplicate onComplete calls. */
export const SETTLE_MS = 5_000;
/** Virtual step between real ticks. */
export const STEP_MS = Number(process.env.BENCH_STEP_MS || 10);
const CHUNK = 100;

let warmedUp = false;

/** Loads every module once: convex-test imports lazily, which is real I/O the fake clock does not wait for. */
async function warmUp() {
  if (warmedUp) return;
  const all = {
    ...appModules,
    ...oursTest.modules,
    ...peerTest.modules,
    ...batchWorkerTest.modules,
  };
  await Promise.all(
    Object.entries(all)
      .filter(([path]) => !/\.(test|config)\.ts$/.test(path))
      .map(([, load]) => load()),
  );
  warmedUp = true;
}

export function newBackend(side: SideName) {
  const t = convexTest({ schema, modules: appModules, transactionLimits: true } as any);
  if (side === "ours") oursTest.register(t as any, "ours");
  else peerTest.register(t as any, "peer");
  return t;
}

export async function runScenario(side: SideName, sc: Scenario): Promise<Result> {
  installInstrumentation();
  await warmUp();
  const wallStart = performance.now();
  startVirtualClock();
  probe.reset();
  const t = newBackend(side);
  const counters = resetCounters();
  const t0 = Date.now();
  const ids: string[] = [];
  const enqueueArgs = {
    side,
    maxParallelism: sc.maxParallelism,
    kind: sc.kind,
    ms: sc.ms,
    failTimes: sc.failTimes,
    retry: sc.retry,
    runAfter: sc.runAfter,
  };
  const deadline = t0 + sc.deadlineMs;
  try {
    if (sc.trickleEveryMs) {
      for (let i = 0; i < sc.jobs; i++) {
        const due = t0 + i * sc.trickleEveryMs;
        while (Date.now() < due) await step(Math.min(STEP_MS, due - Date.now()));
        ids.push(...(await t.mutation(api.pools.enqueue, { ...enqueueArgs, keys: [`j${i}`] })));
      }
    } else {
      for (let i = 0; i < sc.jobs; i += CHUNK) {
        const keys = Array.from({ length: Math.min(CHUNK, sc.jobs - i) }, (_, j) => `j${i + j}`);
        ids.push(...(await t.mutation(api.pools.enqueue, { ...enqueueArgs, keys })));
      }
    }
    if (sc.cancelAllAfter !== undefined) {
      const at = t0 + sc.cancelAllAfter;
      while (Date.now() < at) await step(Math.min(STEP_MS, at - Date.now()));
      await t.mutation(api.pools.cancelAll, { side, maxParallelism: sc.maxParallelism });
    }
    while (probe.onCompleteCalls < sc.jobs && Date.now() < deadline) await step(STEP_MS);
    const settleEnd = Date.now() + SETTLE_MS;
    while (Date.now() < settleEnd) await step(STEP_MS);
  } finally {
    vi.useRealTimers();
  }
  const finished = probe.onCompleteCalls >= sc.jobs;
  // Read results (convex-test's own helper: not counted; counters are detached first).
  resetCounters();
  const rows = (await t.run(
    async (ctx: any) => await ctx.db.query("completions").collect(),
  )) as Array<{
    workId: string;
    kind: string;
    at: number;
  }>;
  const completions: Record<string, number> = { success: 0, failed: 0, canceled: 0 };
  const perId = new Map<string, number>();
  for (const r of rows) {
    completions[r.kind] = (completions[r.kind] ?? 0) + 1;
    perId.set(r.workId, (perId.get(r.workId) ?? 0) + 1);
  }
  const idSet = new Set(ids);
  let lost = 0;
  let duplicates = 0;
  for (const id of ids) {
    const n = perId.get(id) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicates += n - 1;
  }
  for (const [id, n] of perId) if (!idSet.has(id)) duplicates += n; // onComplete for an unknown job
  const wrongKind = rows.filter((r) => r.kind !== sc.expectKind).length;
  const lastAt = rows.length ? Math.max(...rows.map((r) => r.at)) : Date.now();
  const firstStart = new Map<string, number>();
  for (const a of probe.attempts) if (!firstStart.has(a.key)) firstStart.set(a.key, a.start);
  const lags = [...firstStart].map(([key, start]) => start - probe.enqueuedAt.get(key)!);
  const busyMs = probe.attempts.reduce((sum, a) => sum + ((a.end ?? lastAt) - a.start), 0);
  return {
    side,
    scenario: sc,
    counters,
    lags,
    makespanMs: lastAt - t0,
    busyMs,
    maxConcurrency: probe.maxRunning,
    completions,
    lost,
    duplicates,
    wrongKind,
    wallSeconds: (performance.now() - wallStart) / 1000,
    finished,
    backend: t,
  };
}
