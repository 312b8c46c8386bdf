/**
 * The pool's rate limit (`config.rateLimit`: at most `starts` attempts start in any interval of
 * `periodMs`): how many starts a pass may make, recording the ones it made, and when the next one
 * is allowed. Owns `loopState.startLog`; only the loop calls it, and it never starts work itself.
 * The log's rules (buckets, windows) are model/startOrder.ts's, shared with the keys' own limits.
 */
import type { Config } from "../config.js";
import {
  liveBuckets,
  logStarts,
  nextAllowedAt,
  rateRoom,
  type StartLog,
} from "../model/startOrder.js";
import type { Pass } from "./pass.js";

export type RateLimit = NonNullable<Config["rateLimit"]>;

/** Starts this pass may make under the rate limit (Infinity without one). */
export function startsAllowed(pass: Pass): number {
  return rateRoom(pass.state.startLog, pass.config.rateLimit, pass.now);
}

/** Records `n` starts made at this pass's time, and drops what left the window. */
export function recordStarts(pass: Pass, n: number): void {
  const limit = pass.config.rateLimit;
  const log = limit === undefined ? undefined : logStarts(pass.state.startLog, limit, pass.now, n);
  setLog(pass, log);
}

/** When the next start is allowed, if none is allowed now. */
export function nextStartAllowedAt(pass: Pass): number | undefined {
  return nextAllowedAt(pass.state.startLog, pass.config.rateLimit, pass.now);
}

/** Takes back a start recorded at `at` whose task never started (its executor gave it back
 * untaken): the bucket that counted it counts one fewer, so the task's next hand-over is not
 * charged a second time. A start whose bucket already left the window costs nothing now. */
export function refundStart(pass: Pass, at: number): void {
  const limit = pass.config.rateLimit;
  if (limit === undefined) return;
  const log = liveBuckets(pass.state.startLog, limit, pass.now);
  const bucket = log.find((b) => (b.from ?? b.at) <= at && at <= b.at && b.n > 0);
  if (bucket === undefined) return;
  bucket.n--;
  setLog(
    pass,
    log.filter((b) => b.n > 0),
  );
}

function setLog(pass: Pass, log: StartLog | undefined): void {
  if (log !== undefined && log.length > 0) {
    pass.state.startLog = log.map((b) => ({ from: b.from ?? b.at, at: b.at, n: b.n }));
  } else delete pass.state.startLog;
}
