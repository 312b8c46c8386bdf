/**
 * What the rate-limit and priority scenarios (8a, 8b) check, as pure functions of what a run
 * recorded: whether the pool kept its rate limit and how close to it it ran, from the times the pool
 * started attempts; and how soon high-priority jobs started and whether a low one went ahead of a
 * waiting high one, from the jobs' own records. No I/O, so bench/counters.test.ts can feed them
 * hand-made inputs and bench/report/ can use the thresholds.
 */
import type { RateLimit } from "../src/client/index.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import type { Probe } from "./app/probe.js";

/** The least start rate, as a fraction of the limit, a backlog must run at: the rate limit's
 * promise (issue 11, section 5) is 90 % of the limit or more. */
export const MIN_ACHIEVED_RATE = 0.9;

/** How long after a high-priority job is enqueued a low one may still start ahead of it: one
 * segment, since the loop reads enqueues a segment at a time and a pass already under way may start
 * what it read before the high job's segment. */
export const PRIORITY_GRACE_MS = SEGMENT_MS;

/** The most a high-priority job's start lag may be at p50, with jobs of `jobMs`: the goal is a
 * start within one segment of a slot freeing, and a slot frees at most one job length after the job
 * arrives (all slots are busy with jobs of `jobMs`). */
export function highLagLimitMs(jobMs: number): number {
  return SEGMENT_MS + jobMs;
}

/** How a rate-limited run kept its limit, from the times the pool started each attempt. */
export type RateChecks = {
  /** Attempts the pool started. */
  starts: number;
  /** From the first start to the last (virtual ms). */
  spanMs: number;
  /** The shortest span `starts` starts can take under the limit: (⌈starts / limit⌉ − 1) periods. */
  minSpanMs: number;
  /** minSpanMs / spanMs: 1 is as fast as the limit allows (1 when every start was at once). */
  achieved: number;
  /** The most starts in a window [s, s + periodMs) beginning at a start, and that `s` (virtual ms
   * after the first start). */
  busiest: number;
  busiestAt: number;
};

/** Checks the pool's start times (`startedAt`, virtual ms, in any order) against `limit`. */
export function rateChecks(startedAt: readonly number[], limit: RateLimit): RateChecks {
  const t = [...startedAt].sort((a, b) => a - b);
  const spanMs = t.length ? t[t.length - 1] - t[0] : 0;
  const minSpanMs = Math.max(0, Math.ceil(t.length / limit.starts) - 1) * limit.periodMs;
  // Two pointers: `end` is the first start at or past the window beginning at start `i`.
  let busiest = 0;
  let busiestAt = 0;
  let end = 0;
  for (let i = 0; i < t.length; i++) {
    while (end < t.length && t[end] < t[i] + limit.periodMs) end++;
    if (end - i > busiest) {
      busiest = end - i;
      busiestAt = t[i] - t[0];
    }
  }
  return {
    starts: t.length,
    spanMs,
    minSpanMs,
    achieved: spanMs === 0 ? (t.length ? 1 : NaN) : minSpanMs / spanMs,
    busiest,
    busiestAt,
  };
}

/** How a priority mix went, from the jobs' own records. */
export type PriorityChecks = {
  /** Start lag (enqueue to its first attempt's start, virtual ms) of each job of the level that
   * started, in enqueue order. */
  highLags: number[];
  lowLags: number[];
  /** Pairs of a high job H and a start of a low job in (H's enqueue + PRIORITY_GRACE_MS, H's
   * start): a low job went ahead of H while H was waiting. */
  inversions: number;
  /** The first such, described. */
  firstInversion?: string;
};

/** Checks the priority mix the jobs recorded (`priorityOf` gives each job's level). */
export function priorityChecks(
  recorded: Pick<Probe, "enqueuedAt" | "priorityOf" | "attempts">,
): PriorityChecks {
  const firstStart = new Map<string, number>();
  for (const a of recorded.attempts) if (!firstStart.has(a.key)) firstStart.set(a.key, a.start);
  const lagsOf = (level: string) =>
    [...recorded.enqueuedAt].flatMap(([job, at]) => {
      const start = firstStart.get(job);
      return recorded.priorityOf.get(job) === level && start !== undefined ? [start - at] : [];
    });
  const lowStarts = recorded.attempts.filter((a) => recorded.priorityOf.get(a.key) === "low");
  let inversions = 0;
  let firstInversion: string | undefined;
  for (const [job, enqueuedAt] of recorded.enqueuedAt) {
    if (recorded.priorityOf.get(job) !== "high") continue;
    // A high job that never started waited for good: every later low start counts.
    const start = firstStart.get(job) ?? Number.POSITIVE_INFINITY;
    for (const low of lowStarts) {
      if (low.start <= enqueuedAt + PRIORITY_GRACE_MS || low.start >= start) continue;
      inversions++;
      firstInversion ??=
        `low ${low.key} started ${low.start - enqueuedAt} ms after high ${job} was enqueued, ` +
        (Number.isFinite(start)
          ? `which started ${start - enqueuedAt} ms after`
          : "which never started");
    }
  }
  return { highLags: lagsOf("high"), lowLags: lagsOf("low"), inversions, firstInversion };
}
