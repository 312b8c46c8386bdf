/**
 * The retry decision, as pure functions: how long a failed attempt waits, and what a completion
 * means for the job. No database access; unit-tested on their own (retry.test.ts).
 */
import type { AttemptResult, RetryBehavior, RunResult } from "./validators.js";

/** How far the jitter may move a backoff, as a fraction of it either way. ±50% spreads a burst of
 * failures over time so that their retries do not arrive together. */
export const JITTER_FRACTION = 0.5;

/** The longest wait the pool schedules for a retry's backoff or a snooze: a month is past any
 * sensible wait, and keeps every due time finite and well inside what the scheduler takes (an
 * exponential backoff overflows to Infinity after enough attempts). */
export const MAX_DELAY_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The wait before attempt `failedAttempts + 1`, after `failedAttempts` (≥ 1) failed attempts:
 * about `initialBackoffMs * base^(failedAttempts-1)`, spread by ±JITTER_FRACTION, and never more
 * than `maxBackoffMs` (when the behavior has one) nor MAX_DELAY_MS, jitter included. A wait that
 * reaches the cap is drawn from [cap × (1 - JITTER_FRACTION), cap), so that a burst of capped
 * retries still spreads out instead of arriving together.
 * `random` is a number in [0, 1), e.g. Math.random().
 */
export function nextRetryDelayMs(
  failedAttempts: number,
  behavior: RetryBehavior,
  random: number,
): number {
  const cap = Math.min(behavior.maxBackoffMs ?? MAX_DELAY_MS, MAX_DELAY_MS);
  const nominal =
    behavior.initialBackoffMs === 0
      ? 0
      : behavior.initialBackoffMs * Math.pow(behavior.base, failedAttempts - 1);
  const upper = Math.min(nominal * (1 + JITTER_FRACTION), cap);
  const lower = (1 - JITTER_FRACTION) * Math.min(nominal, cap);
  return Math.min(Math.round(lower + (upper - lower) * random), cap);
}

/** What the loop does with a reported attempt. */
export type CompletionDecision =
  | { kind: "retry"; delayMs: number }
  | { kind: "snooze"; delayMs: number }
  | { kind: "finish"; result: RunResult };

/**
 * Decides the fate of a job after attempt number `attempt` ended with `outcome`.
 * A snooze runs the job again later without spending the attempt, unless it was canceled.
 * Retries only a retryable failure of a job that has a retry behavior, attempts left and no cancel;
 * a job canceled while running reports its real outcome unless that outcome would have been retried,
 * in which case it reports "canceled".
 */
export function decideCompletion(
  outcome: AttemptResult,
  job: { attempt: number; retryBehavior?: RetryBehavior; canceled?: boolean; cancelWins?: boolean },
  random: number,
): CompletionDecision {
  // A run that cannot report its real outcome once canceled (a task: its signal was aborted).
  if (job.canceled && job.cancelWins) return { kind: "finish", result: { kind: "canceled" } };
  if (outcome.kind === "success") {
    return { kind: "finish", result: { kind: "success", returnValue: outcome.returnValue } };
  }
  if (outcome.kind === "snoozed") {
    return job.canceled
      ? { kind: "finish", result: { kind: "canceled" } }
      : { kind: "snooze", delayMs: Math.min(Math.max(0, outcome.delayMs), MAX_DELAY_MS) };
  }
  const behavior = job.retryBehavior;
  const retryable =
    !outcome.nonRetryable && behavior !== undefined && job.attempt < behavior.maxAttempts;
  if (!retryable) {
    const { error, errorData } = outcome;
    const result: RunResult =
      errorData === undefined ? { kind: "failed", error } : { kind: "failed", error, errorData };
    return { kind: "finish", result };
  }
  if (job.canceled) {
    return { kind: "finish", result: { kind: "canceled" } };
  }
  return { kind: "retry", delayMs: nextRetryDelayMs(job.attempt, behavior, random) };
}
