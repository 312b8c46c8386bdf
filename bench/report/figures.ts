/**
 * The figures the report shows, from one side's measurements of one scenario: per-job counts of
 * function calls, documents and bytes, start lag percentiles, utilization. Numbers only: it never
 * formats them (bench/report/format.ts does) and never compares two runs.
 */
import type { Usage } from "../instrument.js";
import type { Measured } from "../results.js";

export const perJob = (r: Measured, n: number) => n / r.scenario.jobs;

function percentile(sorted: number[], p: number): number {
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
/** Σ attempt busy time / (maxParallelism × makespan), for action scenarios that run their jobs. */
export const utilization = (r: Measured) =>
  r.scenario.kind === "action" && r.scenario.expectKind !== "canceled"
    ? r.busyMs / (r.scenario.maxParallelism * Math.max(1, r.makespanMs))
    : NaN;
export const lagP50 = (r: Measured) => lagStats(r.lags).p50;

/** The high-priority jobs' start lags, p50 and max. */
export const highLag = (r: Measured) => lagStats(r.priorityChecks?.highLags ?? []);
