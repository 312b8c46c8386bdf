/**
 * Counting what the loop does, for its report and for `stats`: the report's counters live in
 * `loopState.stats` and a report is one structured JSON log line at REPORT level; `stats` reads the
 * loop's running totals (of finished jobs, and of each kind of event), its per-second event counts (`loopState.thisSecond`, then
 * the `eventCounts` ring) and its floor under the pending jobs. Written only by the loop; never
 * changes job state.
 */
import type { EventKind, EventTotals, SecondEvents } from "../model/validators.js";
import { countDueStarts, type LoopState, type Pass } from "./pass.js";
import { CURSOR_MARGIN_SEGMENTS, SEGMENT_MS } from "../model/segments.js";

/** How often a busy pool logs its report: once a minute is enough to graph, cheap to store. */
export const REPORT_INTERVAL_MS = 60_000;
/** The most due pending jobs counted for the report's backlog; past it the report says "at least". */
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

export function emptyTotals(): EventTotals {
  return { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 };
}

/** The seconds `stats().lastMinute` covers: the current one and the 59 before it. */
export const LAST_MINUTE_SECONDS = 60;

/** How far below a pass's clock the pending floor stays: an enqueue whose clock runs up to this
 * much behind the loop's (or that began that long before the pass) still lands above it, and the
 * floor's read stays below every job such an enqueue inserts (no conflict with it). The same
 * second the pending tables' cursors allow (segments.ts). */
export const PENDING_FLOOR_MARGIN_MS = CURSOR_MARGIN_SEGMENTS * SEGMENT_MS;

/** The whole second (since epoch) an instant falls in. */
export function secondOf(ms: number): number {
  return Math.floor(ms / 1000);
}

/** Counts one event of this pass, for the report, `stats().lastMinute` and `stats().totals`. */
export function countEvent(pass: Pass, kind: EventKind, n = 1): void {
  pass.state.stats[kind] += n;
  // A loop row from before `totals` starts them at zero: the totals count from the upgrade on.
  const totals = (pass.state.totals ??= emptyTotals());
  totals[kind] += n;
  const second = secondOf(pass.now);
  const current = pass.state.thisSecond;
  if (current === undefined || current.second !== second) {
    pass.state.thisSecond = {
      second,
      started: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      retried: 0,
    };
  }
  pass.state.thisSecond![kind] += n;
}

/** Counts an attempt the pass started `lagMs` after it was due. */
export function recordStart(pass: Pass, lagMs: number): void {
  countEvent(pass, "started");
  const { stats } = pass.state;
  stats.startLagMsTotal += lagMs;
  stats.startLagMsMax = Math.max(stats.startLagMsMax, lagMs);
}

/** Uncounts an attempt counted started at `at` that never started (its executor gave it back
 * untaken, or it was canceled before it started): `started` counts attempts whose handler began,
 * not hand-overs (review 2026-11-27 L1). The second it was counted in loses it: the loop's current
 * second, or its `eventCounts` ring row while that still holds that second. */
export async function uncountStart(pass: Pass, at: number): Promise<void> {
  const { stats } = pass.state;
  stats.started = Math.max(0, stats.started - 1);
  if (pass.state.totals) pass.state.totals.started = Math.max(0, pass.state.totals.started - 1);
  const second = secondOf(at);
  const current = pass.state.thisSecond;
  if (current !== undefined && current.second === second) {
    current.started = Math.max(0, current.started - 1);
    return;
  }
  const { db } = pass.ctx;
  const row = await db
    .query("eventCounts")
    .withIndex("by_slot", (q) => q.eq("slot", slotOf(second)))
    .first();
  if (row !== null && row.second === second && row.started > 0) {
    await db.patch("eventCounts", row._id, { started: row.started - 1 });
  }
}

/** Counts a job the pass finished (with its outcome's event). */
export function recordFinish(pass: Pass, kind: "succeeded" | "failed" | "canceled"): void {
  countEvent(pass, kind);
  pass.state.finishedTotal = (pass.state.finishedTotal ?? 0) + 1;
}

/** The ring slot of a second. */
export function slotOf(second: number): number {
  return second % LAST_MINUTE_SECONDS;
}

/**
 * Moves an earlier second's counts out of `loopState` into its slot of the `eventCounts` ring,
 * once, by the first pass of a later second: at most one ring write per second with events,
 * however many passes it had.
 */
export async function flushEarlierSecond(pass: Pass): Promise<void> {
  const done = pass.state.thisSecond;
  if (done === undefined || done.second >= secondOf(pass.now)) return;
  const { db } = pass.ctx;
  const slot = slotOf(done.second);
  const row = await db
    .query("eventCounts")
    .withIndex("by_slot", (q) => q.eq("slot", slot))
    .first();
  if (row) await db.replace("eventCounts", row._id, { slot, ...done });
  else await db.insert("eventCounts", { slot, ...done });
  pass.state.thisSecond = undefined;
}

/** Sums the events of the last minute as seen at `now`: the ring's seconds within it, plus the
 * loop's current second. */
export function sumLastMinute(
  now: number,
  ring: ReadonlyArray<SecondEvents>,
  current: SecondEvents | undefined,
): Record<EventKind, number> {
  const from = secondOf(now) - LAST_MINUTE_SECONDS + 1;
  const sum = { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 };
  const seconds = current === undefined ? ring : [...ring, current];
  for (const events of seconds) {
    // The ring keeps a second until its slot's next use; the loop's current second is never in it
    // (it is flushed only once a later second began), so no second is counted twice.
    if (events.second < from) continue;
    for (const kind of Object.keys(sum) as EventKind[]) sum[kind] += events[kind];
  }
  return sum;
}

/** The last minute as seen at `now`, second by second, oldest first: LAST_MINUTE_SECONDS entries,
 * a second without events as zeros (the ring's and the loop's current second, as `sumLastMinute`
 * adds them). */
export function secondsOfLastMinute(
  now: number,
  ring: ReadonlyArray<SecondEvents>,
  current: SecondEvents | undefined,
): SecondEvents[] {
  const from = secondOf(now) - LAST_MINUTE_SECONDS + 1;
  const series = Array.from({ length: LAST_MINUTE_SECONDS }, (_, i) => ({
    second: from + i,
    ...emptyTotals(),
  }));
  for (const events of current === undefined ? ring : [...ring, current]) {
    const i = events.second - from;
    // Only the counts: a ring row is a document (`_id`, `_creationTime`, `slot`).
    const { second, started, succeeded, failed, canceled, retried } = events;
    if (i >= 0 && i < LAST_MINUTE_SECONDS) {
      series[i] = { second, started, succeeded, failed, canceled, retried };
    }
  }
  return series;
}

/**
 * Raises `loopState.pendingFloor` to the due time of the oldest pending job, so that `stats` and
 * `list` read pending jobs from there rather than across the index entries of every job that left
 * "pending". Called by passes that moved jobs out of "pending". It reads only below the pass's
 * clock less PENDING_FLOOR_MARGIN_MS, where no enqueue inserts: it conflicts with none.
 */
export async function advancePendingFloor(pass: Pass): Promise<void> {
  const floor = pass.state.pendingFloor ?? 0;
  const below = pass.now - PENDING_FLOOR_MARGIN_MS;
  if (below <= floor) return;
  const oldest = await pass.ctx.db
    .query("work")
    .withIndex("by_state", (q) =>
      q.eq("state.kind", "pending").gte("listAt", floor).lt("listAt", below),
    )
    .first();
  pass.state.pendingFloor = oldest?.listAt ?? below;
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
