/**
 * The pool's rate limit (`config.rateLimit`: at most `starts` attempts start in any interval of
 * `periodMs`): how many starts a pass may make, recording the ones it made, and when the next one
 * is allowed. Owns `loopState.startLog`; only the loop calls it, and it never starts work itself.
 *
 * The log keeps the starts of the last period in a few buckets, each labeled with the time of its
 * latest start. Counting a start as if it happened at its bucket's label (never earlier than it did)
 * can only overcount the starts of a window, so the limit holds over every window; the cost is that
 * a start may wait up to one bucket's width longer than it had to.
 */
import type { Config } from "../config.js";
import type { Pass } from "./pass.js";

/** Buckets per period: a start waits at most 1/50 of the period longer than an exact log would
 * make it, so a long backlog runs at 98 % of the limit or more (the promise is 90 %), while the log
 * stays about a kilobyte in the loop's state row, which every pass rewrites. (The loop wakes at the
 * instant a window frees, not on a segment boundary, so short periods keep that pace too.) */
export const RATE_LOG_BUCKETS = 50;

export type RateLimit = NonNullable<Config["rateLimit"]>;

/** How wide one bucket of the log is, for this limit. */
function bucketMs(limit: RateLimit): number {
  return Math.ceil(limit.periodMs / RATE_LOG_BUCKETS);
}

/** The log's buckets still inside the window that ends now (older ones are dropped). */
function liveBuckets(pass: Pass, limit: RateLimit) {
  return (pass.state.startLog ?? []).filter((bucket) => bucket.at > pass.now - limit.periodMs);
}

/** Starts this pass may make under the rate limit (Infinity without one). */
export function startsAllowed(pass: Pass): number {
  const limit = pass.config.rateLimit;
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  const used = liveBuckets(pass, limit).reduce((sum, bucket) => sum + bucket.n, 0);
  return Math.max(0, limit.starts - used);
}

/** Records `n` starts made at this pass's time, and drops what left the window. */
export function recordStarts(pass: Pass, n: number): void {
  const limit = pass.config.rateLimit;
  if (limit === undefined) {
    delete pass.state.startLog;
    return;
  }
  const log = liveBuckets(pass, limit);
  if (n > 0) {
    const last = log[log.length - 1];
    // A bucket takes starts for one bucket width after its first; its label moves to the latest.
    if (last !== undefined && pass.now - (last.from ?? last.at) < bucketMs(limit)) {
      last.at = pass.now;
      last.n += n;
    } else {
      log.push({ from: pass.now, at: pass.now, n });
    }
  }
  if (log.length > 0) pass.state.startLog = log;
  else delete pass.state.startLog;
}

/** When the next start is allowed, if none is allowed now. */
export function nextStartAllowedAt(pass: Pass): number | undefined {
  const limit = pass.config.rateLimit;
  if (limit === undefined || startsAllowed(pass) > 0) return undefined;
  // The window frees its oldest bucket first: that is enough for at least one start.
  const oldest = liveBuckets(pass, limit)[0];
  return oldest === undefined ? undefined : oldest.at + limit.periodMs;
}

/** Takes back a start recorded at `at` whose task never started (its executor gave it back
 * untaken): the bucket that counted it counts one fewer, so the task's next hand-over is not
 * charged a second time. A start whose bucket already left the window costs nothing now. */
export function refundStart(pass: Pass, at: number): void {
  const limit = pass.config.rateLimit;
  if (limit === undefined) return;
  const log = liveBuckets(pass, limit);
  const bucket = log.find((b) => (b.from ?? b.at) <= at && at <= b.at && b.n > 0);
  if (bucket === undefined) return;
  bucket.n--;
  const kept = log.filter((b) => b.n > 0);
  if (kept.length > 0) pass.state.startLog = kept;
  else delete pass.state.startLog;
}
