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

/** The first of `items` by `compare` (negative: the first argument goes first), if any; the
 * earlier given wins a tie. Undefined items are skipped. */
function firstBy<T>(
  items: Iterable<T | undefined>,
  compare: (a: T, b: T) => number,
): T | undefined {
  let best: T | undefined;
  for (const item of items) {
    if (item !== undefined && (best === undefined || compare(item, best) < 0)) best = item;
  }
  return best;
}

/** Under `fairness: "due"`, the candidate due first (`runAtOf`), if any. The first given wins a
 * tie: the stage gives a queued head before a due `pendingStart` row, since a head was read from
 * `pendingStart` before any row still there, so it goes before a row of the same due time. */
export function earliestDue<T>(
  candidates: ReadonlyArray<T | undefined>,
  runAtOf: (candidate: T) => number,
): T | undefined {
  return firstBy(candidates, (a, b) => runAtOf(a) - runAtOf(b));
}

/** The turn that goes first among `turns`, if any. */
export function firstTurn<T extends Turn>(turns: Iterable<T>, fairness: Fairness): T | undefined {
  return firstBy(turns, (a, b) => compareTurns(a, b, fairness));
}

/** What the start order reads of a key (mainLoop/keyState.ts's entry, as a pass holds it): its
 * settings in force and its counts. */
export type KeyView = {
  paused: boolean;
  /** Its parallelism in force: its own, else the pool's `keyParallelism`. */
  limit: number;
  /** Its share (section 13): its own weight and reserve, else DEFAULT_WEIGHT and 0. */
  weight: number;
  reserve: number;
  /** Its rate limit in force (its own, else the pool's `keyRateLimit`), if any. */
  rateLimit: RateLimit | undefined;
  counts: {
    key: string;
    /** Jobs holding a slot (running, or waiting between attempts). */
    active: number;
    /** Attempts running. */
    running: number;
    /** Jobs in its queue. */
    queued: number;
    /** Its virtual pass (undefined until its first turn with rivals). */
    pass?: number;
    startLog?: StartLog;
  };
};

/** What the order reads of a key's queue head (a `keyQueue` row). */
export type HeadView = {
  runAt: number;
  /** True for a job that holds its key's slot (a retry, a snooze, a task given back untaken). */
  holdsSlot: boolean;
  /** Its place in arrival order among heads due at the same time (`Turn.order`). */
  order: number;
};

/** True when a job of the key that holds no slot yet may take one now. */
export function hasFreeSlot(key: KeyView): boolean {
  return !key.paused && key.counts.active < key.limit;
}

/** Whether the key's limit lets a job start: not paused, and within its parallelism. A job that
 * holds its slot needs no free one, only fewer running attempts than the limit: until a limit is
 * lowered that always holds; after, holders past the new limit run one after another as running
 * ones end (review 2026-11-27 L4). */
export function withinKeyLimit(key: KeyView, holdsSlot: boolean): boolean {
  return !key.paused && (holdsSlot ? key.counts.running < key.limit : hasFreeSlot(key));
}

/** Whether the key could start its head, whichever kind it is: within its limit for a head that
 * holds its slot or for one that does not. When false, its head need not be read. */
export function mayStartAnyHead(key: KeyView): boolean {
  return withinKeyLimit(key, false) || withinKeyLimit(key, true);
}

/** When the key's rate limit next lets it start, if it does not now. */
export function keyAllowedAt(key: KeyView, now: number): number | undefined {
  return nextAllowedAt(key.counts.startLog, key.rateLimit, now);
}

/** Whether a key may start its head now: within its limit (`withinKeyLimit`) and its rate limit. */
export function headMayStart(key: KeyView, head: HeadView | null, now: number): boolean {
  return (
    head !== null &&
    withinKeyLimit(key, head.holdsSlot) &&
    rateRoom(key.counts.startLog, key.rateLimit, now) > 0
  );
}

/** Whether a due job of the key, met in due order (fairness "due"), starts at once rather than
 * waiting in its key's queue: one that holds its slot starts within the key's limit; another takes
 * a free slot, unless jobs of its key wait ahead of it; neither while the rate limit holds the key. */
export function startsOnArrival(key: KeyView, holdsSlot: boolean, now: number): boolean {
  if (keyAllowedAt(key, now) !== undefined) return false;
  return holdsSlot ? withinKeyLimit(key, true) : hasFreeSlot(key) && key.counts.queued === 0;
}

/** The key's rate log after one start at `now` (its buckets' `from` filled in, as stored). */
export function logKeyStart(key: KeyView, now: number): Required<StartLog[number]>[] | undefined {
  if (key.rateLimit === undefined) return key.counts.startLog?.map(withFrom);
  return logStarts(key.counts.startLog, key.rateLimit, now, 1)?.map(withFrom);
}

function withFrom(bucket: StartLog[number]): Required<StartLog[number]> {
  return { from: bucket.from ?? bucket.at, at: bucket.at, n: bucket.n };
}

/** A level's fair-share clocks (section 13): its virtual time (the pass of its latest turn taken
 * with rivals) and the pass of its jobs without a key. */
export type LevelClock = { time: number; unkeyed: number };

/** The key's turn at its head's level, joined to the level's time (`clock.time`). */
export function keyTurn(
  key: KeyView,
  head: HeadView,
  clock: LevelClock,
  maxParallelism: number,
): Turn {
  const reserve = reserveInEffect(key.reserve, key.limit, maxParallelism);
  return {
    key: key.counts.key,
    tier: tierOf(key.counts.running, reserve),
    pass: joinPass(key.counts.pass, clock.time),
    runAt: head.runAt,
    order: head.order,
  };
}

/** The turn of the level's jobs without a key, whose next job is due at `runAt`: one more key of
 * DEFAULT_WEIGHT, never below a reserve. */
export function unkeyedTurn(clock: LevelClock, runAt: number): Turn {
  return { key: null, tier: 1, pass: joinPass(clock.unkeyed, clock.time), runAt };
}

/** Takes `turn`, of a contender of `weight`, on its level's clock. With rivals, the level's time
 * moves up to the turn's pass and the contender's pass moves on by 1/weight (`pass`); alone, a
 * contender owes nothing to anyone and nothing moves (undefined). */
export function takeTurn(
  clock: LevelClock,
  turn: Turn,
  weight: number,
  rivals: boolean,
): { time: number; pass: number } | undefined {
  if (!rivals) return undefined;
  return { time: Math.max(clock.time, turn.pass), pass: passAfterTurn(turn.pass, weight) };
}

/** A key's place in the `keyReady` list as last written: its head's due time, and under fair share
 * its tier and virtual pass (none for a hint, a key listed before it has a place). A key in
 * TIER_WAITING has no turn to hold yet: its `pass` is the time it may start (`runAt`), so that the
 * stage reads the waiting keys whose time has come, and only those, in the order it came. */
export type ListedPlace = { key: string; runAt: number; tier?: number; pass?: number };

/** True when `turn` would go after the last listed place read (`bound`), so an unread place
 * might go first. A hint bounds every turn. */
export function beyondBound(turn: Turn, bound: ListedPlace): boolean {
  if (bound.tier === undefined || bound.pass === undefined) return true;
  // The place's head may have arrived after the turn's: only a later tier, pass or due time counts.
  const last = { key: bound.key, tier: bound.tier, pass: bound.pass, runAt: bound.runAt };
  return compareTurns(turn, { ...last, order: Number.POSITIVE_INFINITY }, "share") > 0;
}

/** The tier of a listed key that waits for its rate limit's window: read apart from the others,
 * once its time has come (its turn is then taken from its counts, like any key's). */
export const TIER_WAITING = 2;

/**
 * Where the key goes in the `keyReady` list, or undefined when it leaves it: listed while its
 * head may start, at the head's due time (under fair share, `share`, also its tier and pass); a key
 * that only its rate limit holds is listed at the time it may start, in TIER_WAITING (its `pass`
 * that time too, see ListedPlace); a key at its
 * parallelism, paused or with nothing queued is not listed (whoever changes that lists it again).
 */
export function placeOf(
  key: KeyView,
  head: HeadView | null,
  now: number,
  share?: { clock: LevelClock; maxParallelism: number },
): Omit<ListedPlace, "key"> | undefined {
  if (head === null) return undefined;
  const allowedAt = keyAllowedAt(key, now);
  const waitsForRate = allowedAt !== undefined && withinKeyLimit(key, head.holdsSlot);
  if (!waitsForRate && !headMayStart(key, head, now)) return undefined;
  const runAt = waitsForRate ? Math.max(head.runAt, allowedAt) : head.runAt;
  if (share === undefined) return { runAt, tier: undefined, pass: undefined };
  if (waitsForRate) return { runAt, tier: TIER_WAITING, pass: runAt };
  const turn = keyTurn(key, head, share.clock, share.maxParallelism);
  return { runAt, tier: turn.tier, pass: turn.pass };
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
