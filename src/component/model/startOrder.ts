/**
 * The rules of the start order, as pure functions: which due work goes next. Levels are strict
 * (every "high" job before any "normal" one); within a level, under fair share (API-EXTENSIONS
 * section 13), each key — and the jobs without a key together, as one more key of weight 1 —
 * takes turns by virtual pass (stride scheduling): the next turn is the lowest pass, and a turn
 * advances its key's pass by 1/weight, so over many turns starts follow the weights. A key joins
 * at the level's virtual time (the pass of its latest turn) or its own pass, whichever is later:
 * an idle or new key earns no credit and owes none. Keys below their reserve go before any key at
 * or above its own. Under `fairness: "due"` the earliest due head goes first across keys.
 * A key's own limits (parallelism, pause, rate limit) say whether it takes part at all.
 *
 * Owns the order's rules only: it never reads or writes a table (mainLoop/start.ts applies them,
 * mainLoop/keyState.ts stores what they need), and it never decides how many jobs start (the
 * pool's room does).
 */
import type { Fairness } from "./validators.js";

/** The weight of a key that has none of its own, and of the jobs without a key. */
export const DEFAULT_WEIGHT = 1;

/** A contender for the next start of a level: a key with a due head that may start, or the jobs
 * without a key (`key` null). */
export type Turn = {
  key: string | null;
  /** 0 while the key runs fewer attempts than its reserve (in effect), else 1. */
  tier: number;
  /** Its virtual pass, already joined to the level's time (`joinPass`). */
  pass: number;
  /** The due time of its head (the job it would start). */
  runAt: number;
  /** Where its head stands in arrival order among heads due at the same time (a queued job's
   * row creation time: keys' queues are filled in due, then enqueue, order). */
  order?: number;
};

/** A key's pass when it takes part: its own, or the level's time when that is later. */
export function joinPass(own: number | undefined, levelTime: number): number {
  return Math.max(own ?? levelTime, levelTime);
}

/** The pass after a turn of a key of `weight` (1 to 100): 1/weight further. */
export function passAfterTurn(pass: number, weight: number): number {
  return pass + 1 / weight;
}

/** The reserve in effect: the key's own, capped by its parallelism and the pool's. */
export function reserveInEffect(reserve: number, keyLimit: number, maxParallelism: number): number {
  return Math.max(0, Math.min(reserve, keyLimit, maxParallelism));
}

/** 0 while a key runs fewer attempts than its reserve in effect (it goes first), else 1. */
export function tierOf(running: number, reserveNow: number): number {
  return running < reserveNow ? 0 : 1;
}

/** Orders two turns under `fairness`: negative when `a` goes first. Ties go to the earlier due
 * head, then to the jobs without a key, then to the head that arrived first, then by key, so the
 * order is total and repeatable. */
export function compareTurns(a: Turn, b: Turn, fairness: Fairness): number {
  if (fairness === "share") {
    if (a.tier !== b.tier) return a.tier - b.tier;
    if (a.pass !== b.pass) return a.pass - b.pass;
  }
  if (a.runAt !== b.runAt) return a.runAt - b.runAt;
  if (a.key === b.key) return 0;
  if (a.key === null) return -1;
  if (b.key === null) return 1;
  if ((a.order ?? 0) !== (b.order ?? 0)) return (a.order ?? 0) - (b.order ?? 0);
  return a.key < b.key ? -1 : 1;
}

/** The turn that goes first among `turns`, if any. */
export function firstTurn<T extends Turn>(turns: Iterable<T>, fairness: Fairness): T | undefined {
  let best: T | undefined;
  for (const turn of turns) {
    if (best === undefined || compareTurns(turn, best, fairness) < 0) best = turn;
  }
  return best;
}

/** Whether a key may start its head: not paused, and within its parallelism (a head that holds
 * its slot, a retry, needs no free one) and its rate limit. */
export function keyMayStart(key: {
  paused: boolean;
  active: number;
  limit: number;
  headHoldsSlot: boolean;
  rateRoom: number;
}): boolean {
  return !key.paused && (key.headHoldsSlot || key.active < key.limit) && key.rateRoom > 0;
}

/** A log of starts in buckets, as a rate limit counts them (mainLoop/rateLimit.ts keeps the
 * pool's; keyState.ts a key's): `from` and `at` are a bucket's first and latest start, `n` how
 * many. A start counted at its bucket's label (never earlier than it was) can only overcount a
 * window, so the limit holds over every window. */
export type StartLog = Array<{ from?: number; at: number; n: number }>;
export type RateLimit = { starts: number; periodMs: number };

/** Buckets per period: a start waits at most 1/50 of the period longer than an exact log would
 * make it, so a long backlog runs at 98 % of the limit or more (the promise is 90 %), while the
 * log stays about a kilobyte. */
export const RATE_LOG_BUCKETS = 50;

/** The log's buckets still inside the window that ends at `now`. */
export function liveBuckets(log: StartLog | undefined, limit: RateLimit, now: number): StartLog {
  return (log ?? []).filter((bucket) => bucket.at > now - limit.periodMs);
}

/** Starts allowed at `now` under `limit` (Infinity without one). */
export function rateRoom(log: StartLog | undefined, limit: RateLimit | undefined, now: number) {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  const used = liveBuckets(log, limit, now).reduce((sum, bucket) => sum + bucket.n, 0);
  return Math.max(0, limit.starts - used);
}

/** The log after `n` starts at `now` (older buckets dropped); undefined when empty. */
export function logStarts(
  log: StartLog | undefined,
  limit: RateLimit,
  now: number,
  n: number,
): StartLog | undefined {
  const live = liveBuckets(log, limit, now);
  if (n > 0) {
    const last = live[live.length - 1];
    // A bucket takes starts for one bucket width after its first; its label moves to the latest.
    if (last !== undefined && now - (last.from ?? last.at) < bucketMs(limit)) {
      last.at = now;
      last.n += n;
    } else {
      live.push({ from: now, at: now, n });
    }
  }
  return live.length > 0 ? live : undefined;
}

/** When the next start is allowed, if none is allowed at `now`: the window frees its oldest
 * bucket first, enough for at least one start. */
export function nextAllowedAt(
  log: StartLog | undefined,
  limit: RateLimit | undefined,
  now: number,
): number | undefined {
  if (limit === undefined || rateRoom(log, limit, now) > 0) return undefined;
  const oldest = liveBuckets(log, limit, now)[0];
  return oldest === undefined ? undefined : oldest.at + limit.periodMs;
}

/** How wide one bucket of the log is, for this limit. */
function bucketMs(limit: RateLimit): number {
  return Math.ceil(limit.periodMs / RATE_LOG_BUCKETS);
}
