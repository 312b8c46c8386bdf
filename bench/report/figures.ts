/**
 * The figures the report shows, from one side's measurements of one scenario: per-job counts of
 * function calls, documents and bytes, start lag percentiles, utilization. Numbers only: it never
 * formats them (bench/report/format.ts does) and never compares two runs.
 */
import type { Usage } from "../instrument.js";
import type { Measured } from "../results.js";

export const perJob = (r: Measured, n: number) => n / r.scenario.jobs;

/** The nearest-rank `p`th percentile of `sorted` (ascending); NaN when it is empty. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Start lag percentiles (virtual ms); NaN when no job started (e.g. all canceled). */
export function lagStats(lags: number[]) {
  const s = [...lags].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), max: s.length ? s[s.length - 1] : NaN };
}

export function poolCallsPerJob(r: Measured) {
  const i = r.counters.invocations.pool;
  return perJob(r, i.query + i.mutation + i.action);
}
export function appCallsPerJob(r: Measured) {
  const i = r.counters.invocations.app;
  return perJob(r, i.query + i.mutation + i.action);
}
/** Usage per job, app and pool together (the app's share is the same on both sides). */
const usagePerJob = (r: Measured, field: keyof Usage) =>
  perJob(r, r.counters.usage.app[field] + r.counters.usage.pool[field]);
export const docsReadPerJob = (r: Measured) => usagePerJob(r, "docsRead");
export const docsWrittenPerJob = (r: Measured) => usagePerJob(r, "docsWritten");
export const kbReadPerJob = (r: Measured) => usagePerJob(r, "bytesRead") / 1000;
export const kbWrittenPerJob = (r: Measured) => usagePerJob(r, "bytesWritten") / 1000;
/**
 * Whether a function (keyed `component:module:function (type)`) is a pool's loop: ours is
 * `mainLoop/main:main`; the peer's is its `loop` module (its pass `loop:run`, and `loop:getBatch`,
 * the read its batch worker makes) with its batch worker (`peer/batchWorker:*`: the mutation that
 * runs the pass, and `lib:ping`, which wakes it).
 */
export function isLoopFunction(key: string): boolean {
  const [component, module] = key.split(":");
  return (
    (component === "ours" && module === "mainLoop/main") ||
    (component === "peer" && module === "loop") ||
    component === "peer/batchWorker"
  );
}
/** The loop's own usage per job (`isLoopFunction`). */
function loopUsagePerJob(r: Measured, field: keyof Usage): number {
  let sum = 0;
  for (const [key, usage] of r.counters.usageByFunction)
    if (isLoopFunction(key)) sum += usage[field];
  return perJob(r, sum);
}
export const loopDocsReadPerJob = (r: Measured) => loopUsagePerJob(r, "docsRead");
export const loopDocsWrittenPerJob = (r: Measured) => loopUsagePerJob(r, "docsWritten");
export const loopKbWrittenPerJob = (r: Measured) => loopUsagePerJob(r, "bytesWritten") / 1000;
/** Σ attempt busy time / (maxParallelism × makespan), for action scenarios that run their jobs. */
export const utilization = (r: Measured) =>
  r.scenario.kind === "action" && r.scenario.expectKind !== "canceled"
    ? r.busyMs / (r.scenario.maxParallelism * Math.max(1, r.makespanMs))
    : NaN;
export const lagP50 = (r: Measured) => lagStats(r.lags).p50;

/** The high-priority jobs' start lags, p50 and max. */
export const highLag = (r: Measured) => lagStats(r.priorityChecks?.highLags ?? []);

/** The bench's price list for its cost estimate: $2 per million function calls, and $0.20 per GiB
 * of database bandwidth (documents read and written, each at least 1 KiB: instrument.ts). */
export const DOLLARS_PER_CALL = 2 / 1_000_000;
export const DOLLARS_PER_GIB = 0.2;
const GIB = 2 ** 30;

/** The bench app's executor action (bench/app/tasks.ts): the app exports it, but it is the pool's
 * runner, so the executor figures count it with the pool's calls. */
export const EXECUTOR_FUNCTION = "app:tasks:run (action)";

/** Executor actions the run started. */
export const executorActions = (r: Measured) => r.counters.byFunction.get(EXECUTOR_FUNCTION) ?? 0;

/** Pool function calls per job, the executor actions included (the same as `poolCallsPerJob`
 * without executors). */
export const poolCallsWithExecutorsPerJob = (r: Measured) =>
  poolCallsPerJob(r) + perJob(r, executorActions(r));

/** All function calls per job: the app's (its enqueue mutations, the jobs' own actions, onComplete)
 * and the pool's. */
export const allCallsPerJob = (r: Measured) => poolCallsPerJob(r) + appCallsPerJob(r);

/** Billed bandwidth per job (KiB, each document at least 1 KiB): the pool's functions' alone, or
 * the app's too. NaN for runs older than its measurement. */
export function billedKibPerJob(r: Measured, scope: "pool" | "all"): number {
  const sum = (u: Usage) => u.billedBytesRead + u.billedBytesWritten;
  const { app, pool } = r.counters.usage;
  return perJob(r, scope === "pool" ? sum(pool) : sum(pool) + sum(app)) / 1024;
}

/** Estimated billed dollars per job (`DOLLARS_PER_CALL`, `DOLLARS_PER_GIB`): the pool's calls (its
 * executor actions included) and bandwidth, or (`all`) every function call and all bandwidth. */
export function billedCostPerJob(r: Measured, scope: "pool" | "all"): number {
  const calls = scope === "pool" ? poolCallsWithExecutorsPerJob(r) : allCallsPerJob(r);
  return calls * DOLLARS_PER_CALL + ((billedKibPerJob(r, scope) * 1024) / GIB) * DOLLARS_PER_GIB;
}

/** Seconds of action time the run held (virtual clock): every action's, the ones actions called
 * included; NaN for runs older than its measurement. */
export const actionSeconds = (r: Measured) =>
  r.actions ? (r.actions.topLevel.ms + r.actions.nested.ms) / 1000 : NaN;

/** A tenant's p50 and p99 wait (virtual ms). */
export type TenantFigures = { tenant: string; p50: number; p99: number };

/** The waits of a tenant run (scenarios 11a, 11b): the big tenant's (the first to enqueue) and
 * each small tenant's, p50 and p99; undefined for other runs. */
export function tenantFigures(r: Measured) {
  if (!r.tenantWaits?.length) return undefined;
  const [big, ...small] = r.tenantWaits.map(({ tenant, waits }) => {
    const s = [...waits].sort((a, b) => a - b);
    return { tenant, p50: percentile(s, 50), p99: percentile(s, 99) };
  });
  return { big, small };
}

/** The best, median and worst of the small tenants' p50 (or p99) waits. */
export function acrossTenants(small: TenantFigures[], p: "p50" | "p99") {
  const s = small.map((t) => t[p]).sort((a, b) => a - b);
  return { best: s[0] ?? NaN, median: percentile(s, 50), worst: s.at(-1) ?? NaN };
}
