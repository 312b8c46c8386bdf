/**
 * The options of a pool and of one enqueue: their public types (with what each option means) and the
 * checks of their values, which throw an InvalidArgument error naming the option. Also the one rule
 * of which retry behavior an enqueued function gets. Pure: it never calls the component, holds no
 * state and builds no enqueue request (src/client/enqueue.ts does); the component checks every
 * value again, so these checks only make a bad value fail early, where the caller passed it.
 */
import type { FunctionReference, FunctionType, FunctionVisibility } from "convex/server";
import type { Infer } from "convex/values";
import {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vRateLimit,
  vResultKind,
  type Fairness,
  type LogLevel,
  type Priority,
  type ResultKind,
  type RetryBehavior,
  type RunResult,
} from "../component/model/validators.js";
import { validateConfigUpdate } from "../component/config.js";
import { invalidArgument } from "../component/model/errors.js";
import { validateRetryBehavior, validateStatusTtl } from "../component/model/validate.js";
import type { OnCompleteArgs } from "./onComplete.js";

/** A pool's rate limit: at most `starts` attempts start in any interval of `periodMs` ms. */
export type RateLimit = Infer<typeof vRateLimit>;

/** How a pool retries actions: `retry: true` uses `defaultRetryBehavior`. */
export type WorkpoolRetryOptions = {
  /** Retry behavior for `retry: true` (and for `retryActionsByDefault`).
   * Default `{ maxAttempts: 5, initialBackoffMs: 250, base: 2 }`. */
  defaultRetryBehavior?: RetryBehavior;
  /** Whether actions are retried when `retry` is not given at enqueue. Default false. */
  retryActionsByDefault?: boolean;
};

/** Options of a pool. */
export type WorkpoolOptions = {
  /** How many jobs may run at once; 0 pauses starting new work. Written to the component's config
   * on each enqueue and cancel. Default 10 (the component's default). */
  maxParallelism?: number;
  /** Log level of the pool's logs. Default "REPORT". */
  logLevel?: LogLevel;
  /** How long (ms) a finished job's status and result stay readable. Default one day;
   * `Number.POSITIVE_INFINITY` keeps them. */
  statusTtl?: number;
  /** How many jobs of one key may run at once (a job keeps its key's slot through its retries),
   * unless `setKeyParallelism` says otherwise for the key. Whole number ≥ 1; default 1. Written to
   * the component's config on each enqueue and cancel. */
  keyParallelism?: number;
  /** At most `starts` attempts (retries included) start in any interval of `periodMs` ms; whole
   * numbers ≥ 1. Written to the component's config on each enqueue and cancel; `null` removes a
   * stored limit (leaving the option out keeps whatever is stored). */
  rateLimit?: RateLimit | null;
  /** How keys share a priority level's free slots (docs/keys-and-pause.md, "Tenants and
   * fairness"): "share" (default) gives each key, and the jobs without a key together, starts in
   * proportion to its weight (`setKeyShare`); "due" starts the earliest due job first across keys
   * and ignores weights and reserves. Written to the component's config on each enqueue and cancel. */
  fairness?: Fairness;
  /** Every key's rate limit (at most `starts` attempts of the key start in any interval of
   * `periodMs` ms), unless `setKeyRateLimit` says otherwise for the key; whole numbers ≥ 1. A key
   * at its limit delays no other. `null` removes a stored default. */
  keyRateLimit?: RateLimit | null;
} & WorkpoolRetryOptions;

/** Retries of an action: `true` for the pool's default behavior, or a behavior of its own. */
export type RetryOption = {
  /** `true`: the pool's `defaultRetryBehavior`; `false`: no retry; or a behavior of its own.
   * Unset: retried only when the pool has `retryActionsByDefault`. */
  retry?: boolean | RetryBehavior;
};

/**
 * Options of one enqueue. `ReturnValue` ties onComplete's `result.returnValue` to the enqueued
 * function's return type.
 */
export type EnqueueOptions<Context = unknown, ReturnValue = unknown> = {
  /** A name for logs; default the function's path, e.g. "emails:send". */
  name?: string;
  /** A mutation called exactly once when the job finishes (success, failed or canceled). */
  onComplete?: FunctionReference<
    "mutation",
    FunctionVisibility,
    OnCompleteArgs<Context, ReturnValue>
  > | null;
  /** Final result kinds for which onComplete is not called (omit or `[]` for none). Failed attempts
   * that will be retried never call onComplete. */
  onCompleteExcludeKinds?: readonly RunResult["kind"][];
  /** Passed to onComplete as is. */
  context?: Context;
  /** Jobs with the same key (1 to 256 characters) form a queue of their own: at most
   * `keyParallelism` of them run at once, and they start in order. */
  key?: string;
  /** Among due jobs that may start, every "high" one starts before any "normal" one, and "normal"
   * before "low" (within a level, earlier due time first); a retry keeps it. Default "normal". */
  priority?: Priority;
  /** While a job enqueued with this key (1 to 256 characters) waits for its first start, another
   * enqueue with it creates nothing and returns that job's id. Not for batch methods. */
  dedupeKey?: string;
  /** With `dedupeKey`: "keep" (default) leaves the waiting job as it is; "replace" gives it the new
   * args, and the new context, onComplete and due time when given. */
  onDuplicate?: "keep" | "replace";
  /** Actions and mutations only (queries and executor tasks reject it): each attempt ends when the
   * app calls `pool.complete` for it, not when the function returns, and holds its pool slot (and
   * key slot) until then; an attempt with no completion `timeoutMs` after its start (a whole
   * number from 1,000 to 604,800,000: 1 s to 7 days) fails, and is retried under the retry policy.
   * See docs/waiting-for-webhooks.md. */
  manualCompletion?: { timeoutMs: number };
  /** The group the job joins (from `pool.createGroup`, still open): its progress counts in
   * `groupStatus`. Taken by every enqueue method, batches and executor tasks included. */
  group?: string;
} & (
  | { /** When the job may start (ms since epoch). */ runAt?: number; runAfter?: never }
  | { /** How long to wait before the job may start (ms). */ runAfter?: number; runAt?: never }
);

/**
 * Options of the standalone `enqueue` / `enqueueBatch`: those of one enqueue plus what a `Workpool`
 * would supply from its own options.
 */
export type StandaloneEnqueueOptions<Context = unknown, ReturnValue = unknown> = EnqueueOptions<
  Context,
  ReturnValue
> & {
  /** Retries of a failed action (undefined: none). Ignored for mutations and queries, which are
   * never retried. */
  retryBehavior?: RetryBehavior;
  /** Written to the component's config, as `WorkpoolOptions.maxParallelism`. */
  maxParallelism?: number;
  /** Written to the component's config, as `WorkpoolOptions.keyParallelism`. */
  keyParallelism?: number;
  /** Written to the component's config, as `WorkpoolOptions.rateLimit`. */
  rateLimit?: RateLimit | null;
  /** Written to the component's config, as `WorkpoolOptions.logLevel`. */
  logLevel?: LogLevel;
  /** Written to the component's config, as `WorkpoolOptions.fairness`. */
  fairness?: Fairness;
  /** Written to the component's config, as `WorkpoolOptions.keyRateLimit`. */
  keyRateLimit?: RateLimit | null;
  /** As `WorkpoolOptions.statusTtl` (default one day). */
  statusTtl?: number;
};

/** The options a pool writes to the component's config with each enqueue and cancel. */
export type PoolConfig = Pick<
  StandaloneEnqueueOptions,
  "maxParallelism" | "keyParallelism" | "rateLimit" | "logLevel" | "fairness" | "keyRateLimit"
>;

/** The options of `options` that a pool writes to the component's config (one place lists them,
 * so every caller that writes config passes all of them). */
export function poolConfigOf(options: PoolConfig): PoolConfig {
  return {
    maxParallelism: options.maxParallelism,
    keyParallelism: options.keyParallelism,
    rateLimit: options.rateLimit,
    logLevel: options.logLevel,
    fairness: options.fairness,
    keyRateLimit: options.keyRateLimit,
  };
}

/** The log levels, most verbose first (the values of `vLogLevel`). */
const LOG_LEVELS: readonly LogLevel[] = vLogLevel.members.map((member) => member.value);

/** Checks the options that are written to the component's config; throws naming the option. */
export function validatePoolConfig(options: PoolConfig): void {
  validateConfigUpdate({
    maxParallelism: options.maxParallelism,
    keyParallelism: options.keyParallelism,
    rateLimit: options.rateLimit,
    fairness: options.fairness,
    keyRateLimit: options.keyRateLimit,
  });
  if (options.logLevel !== undefined && !LOG_LEVELS.includes(options.logLevel)) {
    invalidArgument("logLevel", `must be one of ${LOG_LEVELS.join(", ")}`, options.logLevel);
  }
}

/** Checks a pool's options (what `new Workpool` takes); throws naming the first bad option. */
export function validateWorkpoolOptions(options: WorkpoolOptions): void {
  validatePoolConfig(options);
  if (
    options.retryActionsByDefault !== undefined &&
    typeof options.retryActionsByDefault !== "boolean"
  ) {
    invalidArgument("retryActionsByDefault", "must be a boolean", options.retryActionsByDefault);
  }
  if (options.defaultRetryBehavior) {
    validateRetryBehavior(options.defaultRetryBehavior, "defaultRetryBehavior");
  }
  validateStatusTtl(options.statusTtl);
}

/** The final result kinds (the values of `vResultKind`), for `onCompleteExcludeKinds`. */
const RESULT_KINDS: readonly ResultKind[] = vResultKind.members.map((member) => member.value);

/** Checks `onCompleteExcludeKinds`; returns it as the component takes it (undefined when empty). */
export function excludeKindsOf(kinds: readonly ResultKind[] | undefined): ResultKind[] | undefined {
  if (kinds === undefined) return undefined;
  if (!Array.isArray(kinds)) {
    invalidArgument(
      "onCompleteExcludeKinds",
      `must be an array of ${RESULT_KINDS.join(", ")}`,
      kinds,
    );
  }
  kinds.forEach((kind, i) => {
    if (!RESULT_KINDS.includes(kind)) {
      invalidArgument(
        `onCompleteExcludeKinds[${i}]`,
        `must be one of ${RESULT_KINDS.join(", ")}`,
        kind,
      );
    }
  });
  return kinds.length > 0 ? [...kinds] : undefined;
}

/**
 * The retry behavior a pool gives one enqueued function: none for mutations and queries (never
 * retried); for an action, `retry` as given, or else the pool's `retryActionsByDefault`, `true`
 * meaning the pool's `defaultRetryBehavior` (default `DEFAULT_RETRY_BEHAVIOR`).
 */
export function retryBehaviorFor(
  fnType: FunctionType,
  retry: boolean | RetryBehavior | undefined,
  pool: WorkpoolRetryOptions,
): RetryBehavior | undefined {
  if (fnType !== "action") return undefined;
  const wanted = retry ?? pool.retryActionsByDefault ?? false;
  if (wanted === false) return undefined;
  if (wanted === true) return pool.defaultRetryBehavior ?? DEFAULT_RETRY_BEHAVIOR;
  if (typeof wanted !== "object" || wanted === null) {
    invalidArgument("retry", "must be a boolean or a RetryBehavior", String(wanted));
  }
  return wanted;
}
