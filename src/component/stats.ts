/**
 * Counting what the loop does and reporting it: counters live in `loopState.stats` (written only by
 * the loop), and a report is one structured JSON log line at REPORT level. Never changes job state.
 */
import { countDueStarts, type LoopState, type Pass } from "./pass.js";

/** How often a busy pool logs its report: once a minute is enough to graph, cheap to store. */
export const REPORT_INTERVAL_MS = 60_000;
/** The most due pending rows counted for the report's backlog; past it the report says "at least". */
export const BACKLOG_SCAN_LIMIT = 500;

export type Stats = LoopState["stats"];

export function emptyStats(now: number): Stats {
  return {
    since: now,
    started: 0,
    succeeded: 0,
    failed: 0,
    retried: 0,
    canceled: 0,
    recovered: 0,
    staleCompletions: 0,
    startLagMsTotal: 0,
    startLagMsMax: 0,
  };
}

export function recordStart(stats: Stats, lagMs: number): void {
  stats.started++;
  stats.startLagMsTotal += lagMs;
  stats.startLagMsMax = Math.max(stats.startLagMsMax, lagMs);
}

function hasActivity(stats: Stats): boolean {
  return (
    stats.started +
      stats.succeeded +
      stats.failed +
      stats.retried +
      stats.canceled +
      stats.recovered +
      stats.staleCompletions >
    0
  );
}

/** Logs the report and resets the counters when the interval has passed, or when the loop is about
 * to sleep (idle, or until a later segment) with something to report. */
export async function maybeReport(pass: Pass, goingQuiet: boolean): Promise<void> {
  const { stats } = pass.state;
  const due = pass.now - stats.since >= REPORT_INTERVAL_MS;
  if (!due && !(goingQuiet && hasActivity(stats))) return;
  const backlog = await countDueStarts(pass, BACKLOG_SCAN_LIMIT);
  const { startLagMsTotal, ...counters } = stats;
  const deliveries = await pass.ctx.db.query("deliveryStats").first();
  pass.log.report("report", {
    ...counters,
    periodMs: pass.now - stats.since,
    running: pass.state.running,
    maxParallelism: pass.config.maxParallelism,
    backlog: backlog,
    backlogIsLowerBound: backlog === BACKLOG_SCAN_LIMIT,
    startLagMsAvg: stats.started > 0 ? Math.round(startLagMsTotal / stats.started) : 0,
    // Callbacks that could not be delivered since the pool began (deliver.ts).
    onCompleteFailuresTotal: deliveries?.failures ?? 0,
  });
  pass.state.stats = emptyStats(pass.now);
}
