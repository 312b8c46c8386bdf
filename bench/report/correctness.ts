/**
 * What the correctness checks found, in words: a run's lost, duplicate or wrong-result onComplete
 * calls, its concurrency over the limit, a key over its limit or out of order, a rate limit broken
 * or not reached, a priority inversion, keys' starts off their weights; one line for "At a glance". It only reports what the
 * harness and bench/checks.ts measured and decided: it never decides a check's threshold.
 */
import { highLagLimitMs, MIN_ACHIEVED_RATE } from "../checks.js";
import { SHARE_WINDOW_STARTS } from "../fairChecks.js";
import type { BenchRun, Measured } from "../results.js";
import { lagStats } from "./figures.js";
import { fmt, fmtMs, MIN_RATE } from "./format.js";

/** How a rate-limited run broke its limit or fell short of it, if it did ("" if neither). */
export function rateFailure(r: Measured): string {
  const c = r.rateChecks;
  const limit = r.scenario.rateLimit;
  if (!c || !limit) return "";
  const attempts = r.scenario.jobs * (r.scenario.failTimes + 1);
  const logged =
    c.starts === attempts ? "" : `, ${c.starts} starts logged by the pool for ${attempts} attempts`;
  const over =
    c.busiest > limit.starts
      ? `, ${c.busiest} starts in the ${fmtMs(limit.periodMs)} from ${fmtMs(c.busiestAt)} after ` +
        `the first (limit ${limit.starts})`
      : "";
  const slow = !(c.achieved >= MIN_ACHIEVED_RATE)
    ? `, started at ${fmt(c.achieved, 3)} of the limit (at least ${MIN_RATE})`
    : "";
  return logged + over + slow;
}

/** How a priority mix started its high-priority jobs late or after low ones, if it did. */
export function priorityFailure(r: Measured): string {
  const c = r.priorityChecks;
  if (!c) return "";
  const p50 = lagStats(c.highLags).p50;
  const limit = highLagLimitMs(r.scenario.ms);
  const slow = !(p50 <= limit)
    ? `, high-priority start lag p50 ${fmtMs(p50)} (at most ${limit} ms)`
    : "";
  const inverted = c.inversions
    ? `, ${c.inversions} priority inversions (first: ${c.firstInversion})`
    : "";
  return slow + inverted;
}

/** How a run of weighted keys gave a key starts off its weight, or had no window to check, if it
 * did. */
export function shareFailure(r: Measured): string {
  const c = r.shareChecks;
  if (!c) return "";
  if (c.windows === 0)
    return `, no window of ${SHARE_WINDOW_STARTS} starts while every key had jobs (${c.contested} starts)`;
  return c.outside
    ? `, ${c.outside} of ${c.windows} windows of ${SHARE_WINDOW_STARTS} starts off the weights ` +
        `(worst: ${c.worst?.key} with ${c.worst?.starts} starts where ${fmt(c.worst?.share, 1)} were due)`
    : "";
}

/** How a keyed run broke its keys' limit or order, if it did. */
function keyFailure(r: Measured): string {
  const k = r.keyChecks;
  if (!k) return "";
  const limit = r.scenario.keyParallelism ?? 1;
  const over =
    k.maxConcurrency > limit
      ? `, key ${k.maxConcurrencyKey} had ${k.maxConcurrency} attempts at once (keyParallelism ${limit})`
      : "";
  const order = k.outOfOrder
    ? `, ${k.outOfOrder} jobs started out of their key's order (first: ${k.firstOutOfOrder})`
    : "";
  return over + order;
}

/** How a run under a simulated limit of actions at once had more, if it did (the harness's own
 * check of bench/actionSlots.ts). */
function actionsOverLimit(r: Measured): string {
  const limit = r.scenario.actionLimit;
  const most = r.actions?.maxRunning ?? 0;
  return limit !== undefined && most > limit
    ? `, ${most} actions running at once (simulated limit ${limit})`
    : "";
}

/** The runs that failed a correctness check, one line each. */
function failures(run: BenchRun): string[] {
  const out: string[] = [];
  for (const s of run.scenarios)
    for (const r of [s.ours, s.peer])
      if (
        r &&
        (!r.finished ||
          r.lost ||
          r.duplicates ||
          r.wrongKind ||
          r.maxConcurrency > r.scenario.maxParallelism ||
          actionsOverLimit(r) ||
          keyFailure(r) ||
          rateFailure(r) ||
          priorityFailure(r) ||
          shareFailure(r))
      )
        out.push(
          `${s.scenario.id} ${r.side}: ${r.lost} lost, ${r.duplicates} duplicate, ${r.wrongKind} wrong-result onComplete calls, ` +
            `at most ${r.maxConcurrency} attempts at once (limit ${r.scenario.maxParallelism})` +
            `${actionsOverLimit(r)}${keyFailure(r)}${rateFailure(r)}${priorityFailure(r)}${shareFailure(r)}${r.finished ? "" : ", deadline hit"}`,
        );
  return out;
}

/** The correctness line: no lost or duplicate onComplete, or which runs had some. */
export function correctness(run: BenchRun): string {
  const bad = failures(run);
  const keyed = run.scenarios.some((s) => s.scenario.keys)
    ? "; in the keyed runs, no key ever had more attempts running at once than keyParallelism, and every key's jobs started in enqueue order"
    : "";
  const rated = run.scenarios.some((s) => s.scenario.rateLimit)
    ? `; in the rate-limited run, no period held more starts than the limit, and the starts ran at ${MIN_RATE} of it or more`
    : "";
  const prioritized = run.scenarios.some((s) => s.scenario.priorityMix)
    ? "; in the priority mix, the high-priority jobs started within their p50 limit, and no low job went ahead of a waiting high one"
    : "";
  const shared = run.scenarios.some((s) => s.scenario.shares?.checkSplit)
    ? `; with keys of different weights, every window of ${SHARE_WINDOW_STARTS} starts held each key's share`
    : "";
  return bad.length
    ? `**Some runs failed their correctness checks:**\n\n${bad.map((b) => `- ${b}`).join("\n")}`
    : `Every run delivered exactly one onComplete per job, with the expected result, and never ran more attempts at once than maxParallelism${keyed}${rated}${prioritized}${shared}.`;
}
