/**
 * Input rules, checked before anything is written. Each check throws `invalidArgument` naming the
 * argument and the rule. Pure; shared by the component's public functions and the client.
 */
import { described, invalidArgument } from "./errors.js";
import { isLarge } from "./payloads.js";
import type { RetryBehavior } from "./validators.js";
import {
  ARRAY_ELEMENTS_LIMIT,
  fitsInline,
  measureValue,
  OBJECT_FIELDS_LIMIT,
  STORED_DEPTH_LIMIT,
  type ValueMeasure,
} from "./valueMeasure.js";

/** The largest args + context a job may carry, as Convex counts them: they share one payload row
 * when they do not fit inline, and 1,000,000 bytes leaves that row's field names and ids well
 * inside Convex's 1 MiB document (Convex's limit on a function's arguments is larger). */
export const MAX_PAYLOAD_BYTES = 1_000_000;

/**
 * Checks a job's args and onComplete context against what the pool can store (valueMeasure.ts),
 * throwing `invalidArgument` naming the argument and the rule; returns their size as Convex counts
 * it and whether they stay inline (else they share a payload row). `sizeRule` says what the size
 * limit covers.
 */
export function checkArgsAndContext(
  fnArgs: unknown,
  context: unknown,
  prefix = "",
  sizeRule = "args plus context",
): { sizeBytes: number; inline: boolean } {
  const measure = (value: unknown, argument: string): ValueMeasure => {
    let measured: ValueMeasure;
    try {
      measured = measureValue(value);
    } catch (error) {
      invalidArgument(argument, "must be a Convex value", described(String(error)));
    }
    if (measured.depth > STORED_DEPTH_LIMIT) {
      invalidArgument(
        argument,
        `must nest at most ${STORED_DEPTH_LIMIT} levels deep, as a Convex document holds`,
        described(`${measured.depth} levels`),
      );
    }
    if (measured.maxFields > OBJECT_FIELDS_LIMIT) {
      invalidArgument(
        argument,
        `must have at most ${OBJECT_FIELDS_LIMIT} fields in any object`,
        described(`${measured.maxFields} fields`),
      );
    }
    if (measured.maxArrayLength > ARRAY_ELEMENTS_LIMIT) {
      invalidArgument(
        argument,
        `must have at most ${ARRAY_ELEMENTS_LIMIT} elements in any array`,
        described(`${measured.maxArrayLength} elements`),
      );
    }
    return measured;
  };
  const args = measure(fnArgs, `${prefix}fnArgs`);
  const ctx = measure(context, `${prefix}onComplete.context`);
  const sizeBytes = args.bytes + ctx.bytes;
  if (sizeBytes > MAX_PAYLOAD_BYTES) {
    invalidArgument(
      `${prefix}fnArgs`,
      `${sizeRule} must be at most ${MAX_PAYLOAD_BYTES} bytes`,
      described(`${sizeBytes} bytes`),
    );
  }
  const inline = !isLarge(sizeBytes) && fitsInline("args", args) && fitsInline("context", ctx);
  return { sizeBytes, inline };
}

export function validateMaxParallelism(value: number, argument = "maxParallelism"): void {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < 0) {
    invalidArgument(argument, "must be a whole number ≥ 0", value);
  }
}

export function validateKeyParallelism(value: number, argument = "keyParallelism"): void {
  if (!Number.isFinite(value) || !Number.isInteger(value) || value < 1) {
    invalidArgument(argument, "must be a whole number ≥ 1", value);
  }
}

/** Checks a pool's rate limit: both numbers whole and ≥ 1. */
export function validateRateLimit(
  value: { starts: number; periodMs: number },
  argument = "rateLimit",
): void {
  if (typeof value !== "object" || value === null) {
    invalidArgument(argument, "must be { starts, periodMs } or null", value);
  }
  for (const field of ["starts", "periodMs"] as const) {
    const n = value[field];
    if (typeof n !== "number" || !Number.isInteger(n) || n < 1) {
      invalidArgument(`${argument}.${field}`, "must be a whole number ≥ 1", n);
    }
  }
}

/** The largest weight a key may have (section 13): a hundred times another key's share is as
 * skewed as a tenant split needs, and keeps a level's virtual pass steps at least 0.01. */
export const MAX_KEY_WEIGHT = 100;
/** The largest reserve a key may have (section 13): beyond any pool's useful maxParallelism, and
 * capped in effect by the key's and the pool's parallelism anyway. */
export const MAX_KEY_RESERVE = 1000;

/** Checks `fairness`: "share" or "due". */
export function validateFairness(value: unknown, argument = "fairness"): void {
  if (value !== "share" && value !== "due") {
    invalidArgument(argument, 'must be "share" or "due"', value);
  }
}

/** Checks a key's share as `setKeyShare` takes it: an object of `weight` (whole number 1 to
 * MAX_KEY_WEIGHT) and `reserve` (whole number 0 to MAX_KEY_RESERVE), each optional, or null. */
export function validateKeyShare(
  value: { weight?: number; reserve?: number } | null,
  argument = "share",
): void {
  if (value === null) return;
  if (typeof value !== "object" || Array.isArray(value)) {
    invalidArgument(argument, "must be { weight?, reserve? } or null", value);
  }
  const { weight, reserve } = value;
  if (weight !== undefined) wholeInRange(weight, 1, MAX_KEY_WEIGHT, `${argument}.weight`);
  if (reserve !== undefined) wholeInRange(reserve, 0, MAX_KEY_RESERVE, `${argument}.reserve`);
}

/** Checks a key's rate limit as `setKeyRateLimit` takes it: `{ starts, periodMs }`, false or null. */
export function validateKeyRateLimit(
  value: { starts: number; periodMs: number } | false | null,
  argument = "rateLimit",
): void {
  if (value === null || value === false) return;
  if (typeof value !== "object") {
    invalidArgument(argument, "must be { starts, periodMs }, false or null", value);
  }
  validateRateLimit(value, argument);
}

function wholeInRange(value: unknown, min: number, max: number, argument: string): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    invalidArgument(argument, `must be a whole number from ${min} to ${max}`, value);
  }
}

const PRIORITIES = ["high", "normal", "low"];

/** Checks a job's priority. */
export function validatePriority(value: string, argument = "priority"): void {
  if (!PRIORITIES.includes(value)) {
    invalidArgument(argument, 'must be "high", "normal" or "low"', value);
  }
}

/** The longest key a job may have: long enough for ids, short enough to index as it is. */
export const MAX_KEY_LENGTH = 256;
/** The longest dedupe key: long enough for URLs as they are (it is indexed by a hash). */
export const MAX_DEDUPE_KEY_LENGTH = 4096;
/** The longest name a job may have (shown in logs, info and list). */
export const MAX_NAME_LENGTH = 1024;

/** Checks a string given at enqueue: 1 to `max` characters. */
export function validateString(value: string, max: number, argument: string): void {
  if (typeof value !== "string" || value.length < 1 || value.length > max) {
    invalidArgument(argument, `must be a string of 1 to ${max} characters`, value);
  }
}

export function validateKey(value: string, argument = "key"): void {
  validateString(value, MAX_KEY_LENGTH, argument);
}

export function validateRetryBehavior(value: RetryBehavior, argument = "retryBehavior"): void {
  if (!Number.isInteger(value.maxAttempts) || value.maxAttempts < 1) {
    invalidArgument(`${argument}.maxAttempts`, "must be a whole number ≥ 1", value.maxAttempts);
  }
  if (!Number.isFinite(value.initialBackoffMs) || value.initialBackoffMs < 0) {
    invalidArgument(
      `${argument}.initialBackoffMs`,
      "must be a finite number ≥ 0",
      value.initialBackoffMs,
    );
  }
  if (!Number.isFinite(value.base) || value.base < 1) {
    invalidArgument(`${argument}.base`, "must be a finite number ≥ 1", value.base);
  }
  if (
    value.maxBackoffMs !== undefined &&
    (!Number.isFinite(value.maxBackoffMs) || value.maxBackoffMs < 0)
  ) {
    invalidArgument(`${argument}.maxBackoffMs`, "must be a finite number ≥ 0", value.maxBackoffMs);
  }
}

/** Checks `runAt` / `runAfter` and returns when the job may start (ms since epoch). */
export function resolveRunAt(
  opts: { runAt?: number; runAfter?: number },
  now: number,
  prefix = "",
): number {
  if (opts.runAt !== undefined && opts.runAfter !== undefined) {
    invalidArgument(
      `${prefix}runAt/runAfter`,
      "give at most one of runAt and runAfter",
      described("both"),
    );
  }
  if (opts.runAt !== undefined) {
    if (!Number.isFinite(opts.runAt)) {
      invalidArgument(`${prefix}runAt`, "must be a finite number", opts.runAt);
    }
    return opts.runAt;
  }
  if (opts.runAfter !== undefined) {
    if (!Number.isFinite(opts.runAfter)) {
      invalidArgument(`${prefix}runAfter`, "must be a finite number", opts.runAfter);
    }
    return now + Math.max(0, opts.runAfter);
  }
  return now;
}

export function validateStatusTtl(value: number | undefined, argument = "statusTtl"): void {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return;
  if (!Number.isFinite(value) || value < 0) {
    invalidArgument(argument, "must be a number ≥ 0 or Infinity", value);
  }
}

/** Function handles, as `createFunctionHandle` makes them. */
const FUNCTION_HANDLE_PREFIX = "function://";

export function validateFunctionHandle(value: string, argument: string): void {
  if (!value.startsWith(FUNCTION_HANDLE_PREFIX)) {
    invalidArgument(argument, "must be a function handle from createFunctionHandle", value);
  }
}

/** A function's arguments are an object (Convex passes `{}` for none). */
export function validateFnArgs(value: unknown, argument: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    invalidArgument(
      argument,
      "must be an object of the function's arguments",
      JSON.stringify(value),
    );
  }
}

const LIST_STATES: readonly string[] = ["pending", "running", "finished"];
const OUTCOMES: readonly string[] = ["success", "failed", "canceled"];

/** Checks `list`'s filters before Convex's validator sees them, so a bad one is named. */
export function validateListFilter(filter: { state?: unknown; outcome?: unknown }): void {
  if (filter.state !== undefined && !LIST_STATES.includes(filter.state as string)) {
    invalidArgument("state", 'must be "pending", "running" or "finished"', filter.state);
  }
  if (filter.outcome !== undefined && !OUTCOMES.includes(filter.outcome as string)) {
    invalidArgument("outcome", 'must be "success", "failed" or "canceled"', filter.outcome);
  }
}

/** The shortest `manualCompletion.timeoutMs`: the loop settles a timeout within about a second of
 * its deadline, so a shorter one would mean nothing. */
export const MIN_COMPLETION_TIMEOUT_MS = 1000;
/** The longest `manualCompletion.timeoutMs`, 7 days: a waiting job holds a pool slot all along,
 * and an external job that takes longer is better polled by a job of its own. */
export const MAX_COMPLETION_TIMEOUT_MS = 7 * 24 * 60 * 60 * 1000;

/** Checks an enqueue's `manualCompletion` (section 11): actions and mutations only, not tasks. */
export function validateManualCompletion(
  value: { timeoutMs: number },
  job: { fnType: string; task?: string },
  argument = "manualCompletion",
): void {
  if (job.fnType === "query" || job.task !== undefined) {
    invalidArgument(
      argument,
      "only actions and mutations wait for a completion (not queries, not executor tasks)",
      described(job.task !== undefined ? "a task" : "a query"),
    );
  }
  const { timeoutMs } = value;
  if (
    !Number.isInteger(timeoutMs) ||
    timeoutMs < MIN_COMPLETION_TIMEOUT_MS ||
    timeoutMs > MAX_COMPLETION_TIMEOUT_MS
  ) {
    invalidArgument(
      `${argument}.timeoutMs`,
      `must be a whole number of ms from ${MIN_COMPLETION_TIMEOUT_MS} (1 s) to ${MAX_COMPLETION_TIMEOUT_MS} (7 days)`,
      timeoutMs,
    );
  }
}

/** Checks what `complete` was given as an outcome: `{ kind: "success", returnValue? }` or
 * `{ kind: "failed", error, nonRetryable? }`, and nothing else. */
export function validateCompletionOutcome(outcome: unknown, argument = "outcome"): void {
  const rule =
    'must be { kind: "success", returnValue? } or { kind: "failed", error: string, nonRetryable?: boolean }';
  if (typeof outcome !== "object" || outcome === null || Array.isArray(outcome)) {
    invalidArgument(argument, rule, outcome);
  }
  const { kind, ...rest } = outcome as Record<string, unknown>;
  const fields = Object.keys(rest);
  const only = (allowed: string[]) => fields.every((field) => allowed.includes(field));
  if (kind === "success" && only(["returnValue"])) return;
  if (
    kind === "failed" &&
    only(["error", "nonRetryable"]) &&
    typeof rest.error === "string" &&
    (rest.nonRetryable === undefined || typeof rest.nonRetryable === "boolean")
  ) {
    return;
  }
  invalidArgument(argument, rule, described(`kind ${JSON.stringify(kind)}`));
}

/** Checks a page size (`numItems` of `argument`, a paginationOpts) against its rule: a whole
 * number from 1 to `max`. */
export function validatePageSize(argument: string, numItems: number, max: number): void {
  if (!Number.isInteger(numItems) || numItems < 1 || numItems > max) {
    invalidArgument(argument, `must be a whole number from 1 to ${max}`, numItems);
  }
}
