/**
 * The job model: validators (the single source of truth) and the types derived from them for a job's
 * state, its result, its retry behavior and the pool's config. Pure data; no database access here.
 *
 * A job's life, as its `state` field records it (see README.md in this folder for the diagram):
 *   pending  → running    the loop starts it (only the loop does this)
 *   pending  → finished   the loop processes a cancelation
 *   running  → pending    the loop decides a failed attempt gets a retry (after a backoff)
 *   running  → finished   the loop processes the final completion, or recovery finds the runner dead
 *                         with no retries left
 */
import { v, type Infer, type ObjectType, type Value } from "convex/values";
import { paginationResultValidator } from "convex/server";

/** The three kinds of function the pool can run. */
export const vFnType = v.union(v.literal("action"), v.literal("mutation"), v.literal("query"));
export type FnType = Infer<typeof vFnType>;

/**
 * How a failed action is retried: attempt n+1 waits about `initialBackoffMs * base^(n-1)` ms, with
 * jitter. `maxAttempts` counts the first attempt: 2 means one retry.
 */
export const vRetryBehavior = v.object({
  maxAttempts: v.number(),
  initialBackoffMs: v.number(),
  base: v.number(),
  /** No retry waits longer than this (before jitter); without it the wait keeps growing. */
  maxBackoffMs: v.optional(v.number()),
});
export type RetryBehavior = Infer<typeof vRetryBehavior>;

/** The default retry behavior when retries are on and none is given. */
export const DEFAULT_RETRY_BEHAVIOR: RetryBehavior = {
  maxAttempts: 5,
  initialBackoffMs: 250,
  base: 2,
};

/** The kinds of final outcome. */
export const vResultKind = v.union(
  v.literal("success"),
  v.literal("failed"),
  v.literal("canceled"),
);
export type ResultKind = Infer<typeof vResultKind>;

/** A failure's `errorData`: the data of the ConvexError the run threw (`data ?? null`), absent when
 * it threw anything else; `null` too when the data broke the value rules (model/errors.ts
 * `storableErrorData`, whose note then ends `error`). */
export const vErrorData = v.optional(v.any());

/** The outcome of a job, as onComplete receives it. */
export const vResult = v.union(
  v.object({ kind: v.literal("success"), returnValue: v.any() }),
  v.object({ kind: v.literal("failed"), error: v.string(), errorData: vErrorData }),
  v.object({ kind: v.literal("canceled") }),
);
/** The outcome of a job; `ReturnValue` narrows a success's return value. */
export type RunResult<ReturnValue = any> =
  | { kind: "success"; returnValue: ReturnValue }
  | { kind: "failed"; error: string; errorData?: Value }
  | { kind: "canceled" };
// The type says what the validator accepts.
void ({} as Infer<typeof vResult> satisfies RunResult);

/** The outcome of one run, as a worker reports it (a run is never "canceled"): a success, a failed
 * attempt, or a snooze (SnoozeError: run again `delayMs` later, no attempt spent). */
export const vAttemptResult = v.union(
  v.object({ kind: v.literal("success"), returnValue: v.any() }),
  v.object({
    kind: v.literal("failed"),
    error: v.string(),
    errorData: vErrorData,
    nonRetryable: v.optional(v.boolean()),
    /** The job's inline args, handed back: a job that fails for good keeps them for `retry`. */
    fnArgs: v.optional(v.any()),
  }),
  v.object({
    kind: v.literal("snoozed"),
    delayMs: v.number(),
    /** The job's inline args, handed back: the loop drops them from a started job that has no
     * retry behavior, and the next run needs them. */
    fnArgs: v.optional(v.any()),
  }),
);
export type AttemptResult = Infer<typeof vAttemptResult>;

/** One attempt's outcome as filed for the loop: in a `pendingCompletion` row's own fields (the
 * first outcome of the row), or among its `more` (the rest of a runner's report). */
export const vFiledOutcome = v.object({
  workId: v.id("work"),
  /** The attempt this result belongs to (1-based); a result for any other attempt is stale. */
  attempt: v.number(),
  result: vAttemptResult,
  /** Set when the return value was too large to keep inline: it lives in this payload row. */
  returnValuePayloadId: v.optional(v.id("payloads")),
  /** Set for the outcome of a job enqueued with `manualCompletion` that did not come from its
   * function's run: a `complete` call ("completion") or its attempt's deadline ("timeout")
   * (api/manualCompletion.ts). Unset: the function's own run ended. */
  from: v.optional(v.union(v.literal("completion"), v.literal("timeout"))),
  /** Set for a task its executor's report gave back untaken (or ended canceled before it
   * started): the hand-over is undone, its rate-limit start refunded and its `started` uncounted,
   * and a give-back goes back to its place in line, due at `runAt` (when its attempt became
   * due; unset on rows from before it was kept: at the hand-over's time). */
  givenBack: v.optional(v.object({ runAt: v.optional(v.number()) })),
});
export type FiledOutcome = Infer<typeof vFiledOutcome>;

/** A task the loop hands an executor (a `handovers` row holds many). */
export const vTaskHandover = v.object({
  workId: v.id("work"),
  /** The attempt's run number, echoed in the executor's report. */
  attempt: v.number(),
  /** Attempts the task made before (its handler's `attempt`). */
  previousAttempts: v.number(),
  task: v.string(),
  /** The task's arguments when small; otherwise read from `payloadId` by the report. */
  fnArgs: v.optional(v.any()),
  payloadId: v.optional(v.id("payloads")),
  /** When the attempt became due (its `pendingStart` row's `runAt`): a task given back untaken
   * goes back to pending at this place in line (unset on rows written before it was kept). */
  runAt: v.optional(v.number()),
  /** The task's key, if it has one: a report gives the task back while its key is paused. */
  key: v.optional(v.string()),
});
export type TaskHandover = Infer<typeof vTaskHandover>;

/** True for an outcome whose job keeps its args and options for `retry` while retained. */
export function keptForRetry(result: { kind: string }): boolean {
  return result.kind === "failed" || result.kind === "canceled";
}

/**
 * The number of a job's current (or next) run: every run ends by counting an attempt or a snooze,
 * so this grows by one per run. Workers report it, and the loop takes a report only for the run it
 * is waiting for (a duplicate of a snoozed run's report must not settle the run after it).
 */
export function runNumber(work: { attempts: number; snoozes?: number }): number {
  return work.attempts + (work.snoozes ?? 0) + 1;
}

/** Log levels, most verbose first. */
export const vLogLevel = v.union(
  v.literal("DEBUG"),
  v.literal("TRACE"),
  v.literal("INFO"),
  v.literal("REPORT"),
  v.literal("WARN"),
  v.literal("ERROR"),
);
export type LogLevel = Infer<typeof vLogLevel>;

/** The pool's settings as a caller may pass them (every field optional: unset means "keep"). */
/** A pool's rate limit: at most `starts` attempts start in any interval of `periodMs` ms. */
export const vRateLimit = v.object({ starts: v.number(), periodMs: v.number() });

/** How keys share a priority level's free slots (API-EXTENSIONS section 13): "share" (weighted
 * turns, the default) or "due" (earlier due first across keys). */
export const vFairness = v.union(v.literal("share"), v.literal("due"));
export type Fairness = Infer<typeof vFairness>;

/** A key's share (section 13) as `setKeyShare` takes it: a field left out keeps its value. */
export const vKeyShare = v.object({
  weight: v.optional(v.number()),
  reserve: v.optional(v.number()),
});
export type KeyShare = Infer<typeof vKeyShare>;

export const vConfigUpdate = v.object({
  maxParallelism: v.optional(v.number()),
  logLevel: v.optional(vLogLevel),
  /** The default limit of every key (section 1 of the API extensions); whole number ≥ 1. */
  keyParallelism: v.optional(v.number()),
  /** The pool's rate limit (section 5); `null` removes it, leaving it out keeps what is stored. */
  rateLimit: v.optional(v.union(vRateLimit, v.null())),
  /** How keys share a priority level's starts (section 13): weighted turns, or due order. */
  fairness: v.optional(vFairness),
  /** The default rate limit of every key (section 13); `null` removes it. */
  keyRateLimit: v.optional(v.union(vRateLimit, v.null())),
});
export type ConfigUpdate = Infer<typeof vConfigUpdate>;

/** `manualCompletion` (API-EXTENSIONS section 11): the job's attempt ends with the app's
 * `complete` call, not when its function returns; `timeoutMs` after the attempt's start it fails. */
export const vManualCompletion = v.object({ timeoutMs: v.number() });
export type ManualCompletion = Infer<typeof vManualCompletion>;

/**
 * What a running attempt of a `manualCompletion` job is waiting for, beside its function (unset:
 * nothing yet, its function runs and no completion came). Written only by the loop
 * (mainLoop/awaiting.ts).
 * - kept: a completion (or the attempt's timeout) came while the function still ran; the attempt
 *   ends with it once the function returns (a throw decides instead).
 * - awaiting: the function returned; the attempt ends with the completion or the timeout. The job
 *   still holds its pool slot and key slot, and recovery leaves it alone (its runner is over).
 */
export const vAttemptWait = v.union(
  v.object({
    kind: v.literal("kept"),
    result: vAttemptResult,
    returnValuePayloadId: v.optional(v.id("payloads")),
  }),
  v.object({
    kind: v.literal("awaiting"),
    /** When the function returned. */
    since: v.number(),
    /** The attempt's start + `timeoutMs`. */
    deadline: v.number(),
  }),
);
export type AttemptWait = Infer<typeof vAttemptWait>;

/** What `complete` takes: the attempt's outcome, as if its function had returned or thrown it. */
export const vCompletionOutcome = v.union(
  v.object({ kind: v.literal("success"), returnValue: v.optional(v.any()) }),
  v.object({
    kind: v.literal("failed"),
    error: v.string(),
    nonRetryable: v.optional(v.boolean()),
  }),
);
export type CompletionOutcome = Infer<typeof vCompletionOutcome>;

/**
 * Where a job is in its life. Stored on the `work` row; written at enqueue and then only by the loop.
 * - pending: waiting for a start, in `pendingStart` (first attempt or a retry after its backoff).
 *   Left by: the loop starting it, or the loop processing a cancelation.
 * - running: a worker was scheduled (`scheduledId`) at `startedAt`. Left by: the loop processing the
 *   worker's completion, or recovery finding the worker dead.
 * - finished: the result is known and onComplete was called. Left by: the sweeper, after the TTL.
 */
export const vJobState = v.union(
  v.object({ kind: v.literal("pending") }),
  v.object({
    kind: v.literal("running"),
    /** The worker, or for a task the executor it was handed to (recovery asks the scheduler). */
    scheduledId: v.id("_scheduled_functions"),
    startedAt: v.number(),
    /** For a task: the executor it was handed to (runners/executor.ts). */
    executorId: v.optional(v.id("executors")),
    /** For a `manualCompletion` job: what the attempt waits for beside its function. */
    wait: v.optional(vAttemptWait),
  }),
  v.object({
    kind: v.literal("finished"),
    result: vResult,
    finishedAt: v.number(),
    /** When the last attempt started; undefined when the job never started (canceled pending). */
    startedAt: v.optional(v.number()),
  }),
);
export type JobState = Infer<typeof vJobState>;

/** What `status` reports: the public view of a job's state. */
export const vStatus = v.union(
  v.object({ state: v.literal("pending"), previousAttempts: v.number() }),
  v.object({ state: v.literal("running"), previousAttempts: v.number() }),
  v.object({ state: v.literal("finished") }),
);
export type Status = Infer<typeof vStatus>;

/** Scheduling priority of a job: among due jobs that may start, every "high" one starts before any
 * "normal" one, and "normal" before "low". */
export const vPriority = v.union(v.literal("high"), v.literal("normal"), v.literal("low"));
export type Priority = Infer<typeof vPriority>;
/** A priority as rows store it: "normal", the default, is left out (smaller rows on the common
 * path). */
export const vStoredPriority = v.optional(v.union(v.literal("high"), v.literal("low")));
export type StoredPriority = Infer<typeof vStoredPriority>;
/** The priorities in start order, as stored. */
export const PRIORITY_LEVELS: readonly StoredPriority[] = ["high", undefined, "low"];

/** How a priority is stored. */
export function storedPriority(priority: Priority | undefined): StoredPriority {
  return priority === "normal" ? undefined : priority;
}

/** What `info` reports: everything the pool knows about a retained job. */
export const vWorkInfo = v.object({
  id: v.string(),
  /** The name given at enqueue, or the function's path. */
  name: v.string(),
  fnType: vFnType,
  key: v.optional(v.string()),
  /** The group the job joined (section 12), if any. */
  group: v.optional(v.string()),
  priority: vPriority,
  state: v.union(v.literal("pending"), v.literal("running"), v.literal("finished")),
  /** Attempts made before the current one (pending/running); attempts made in all (finished). */
  previousAttempts: v.number(),
  /** When the job was enqueued (ms since epoch). */
  enqueuedAt: v.number(),
  /** When the current (running) or last (finished) attempt started. */
  startedAt: v.optional(v.number()),
  finishedAt: v.optional(v.number()),
  /** The result onComplete got, while the job's status is retained. */
  result: v.optional(vResult),
  /** While a `manualCompletion` attempt waits after its function returned: since when, and the
   * attempt's deadline (ms since epoch). */
  awaiting: v.optional(v.object({ since: v.number(), deadline: v.number() })),
  /** The job `retry` ran this one again as, once it did (a later retry returns the same). */
  retriedAs: v.optional(v.string()),
  /** For a schedule's run (API-EXTENSIONS §10): the schedule's name. */
  schedule: v.optional(v.string()),
  /** For a schedule's run: the time it was enqueued for, before jitter (ms since epoch). */
  scheduledFor: v.optional(v.number()),
});
export type WorkInfo = Infer<typeof vWorkInfo>;

/** What the loop did in one second (ms since epoch ÷ 1000, floored), for `stats().lastMinute`. */
export const vSecondEvents = v.object({
  second: v.number(),
  started: v.number(),
  succeeded: v.number(),
  failed: v.number(),
  canceled: v.number(),
  retried: v.number(),
});
export type SecondEvents = Infer<typeof vSecondEvents>;
/** The kinds of event `stats().lastMinute` counts. */
export type EventKind = Exclude<keyof SecondEvents, "second">;

/** The loop's running totals of each kind of event, since the pool began (or since the upgrade
 * that introduced them): `loopState.totals`, the loop's side of `stats().totals`. */
export const vEventTotals = v.object({
  started: v.number(),
  succeeded: v.number(),
  failed: v.number(),
  canceled: v.number(),
  retried: v.number(),
});
export type EventTotals = Infer<typeof vEventTotals>;

/** What `stats` reports: a pool's health at a glance. */
export const vPoolStats = v.object({
  /** Unfinished jobs not running: due, delayed, waiting for a key or backing off. */
  pending: v.number(),
  running: v.number(),
  /** The maxParallelism in force: the operator's while set, else the clients'. */
  maxParallelism: v.number(),
  /** The operator's maxParallelism (`setMaxParallelism`), null when unset. */
  operatorMaxParallelism: v.union(v.number(), v.null()),
  paused: v.boolean(),
  /** How long the longest-waiting due job has waited (ms); 0 when no job is due. */
  oldestPendingMs: v.number(),
  /** Events of the current second and the 59 before it (`started` counts attempts). */
  lastMinute: v.object({
    started: v.number(),
    succeeded: v.number(),
    failed: v.number(),
    canceled: v.number(),
    retried: v.number(),
  }),
  /**
   * Counters that only grow, since the pool began (or since the upgrade that introduced them):
   * `enqueued` counts jobs created (retries by `retry()` included), the others as `lastMinute`.
   */
  totals: v.object({
    enqueued: v.number(),
    ...vEventTotals.fields,
  }),
});
export type PoolStats = Infer<typeof vPoolStats>;

/** What `keyStatus` returns: a key's progress and settings. */
export const vKeyStatus = v.object({
  /** The key's unfinished jobs that are not running: waiting to start, or to retry. */
  pending: v.number(),
  running: v.number(),
  /** Finished jobs, while their status is retained (statusTtl). */
  succeeded: v.number(),
  failed: v.number(),
  canceled: v.number(),
  paused: v.boolean(),
  /** The key's limit: its own, or the pool's keyParallelism. */
  parallelism: v.number(),
  /** The key's weight in its level's turns (section 13): its own, else 1. */
  weight: v.number(),
  /** Attempts the key is served first up to (section 13): its own, else 0. */
  reserve: v.number(),
  /** The key's rate limit in force: its own, else the pool's keyRateLimit, else null. */
  rateLimit: v.union(vRateLimit, v.null()),
});
export type KeyStatus = Infer<typeof vKeyStatus>;

/** A key's row in `overview`: its name and `keyStatus`. */
export const vKeyRow = v.object({ key: v.string(), ...vKeyStatus.fields });
export type KeyRow = Infer<typeof vKeyRow>;

/** What `overview` returns: an operator page's view of the pool. */
export const vOverview = v.object({
  stats: vPoolStats,
  /** The last minute second by second, oldest first (60 entries; `second` since epoch). */
  series: v.array(vSecondEvents),
  /** A page of keys, in key order. */
  keys: paginationResultValidator(vKeyRow),
});
export type Overview = Infer<typeof vOverview>;

/** A result as `list` shows it: without a success's return value (a page stays small). */
export const vListedResult = v.union(
  v.object({ kind: v.literal("success") }),
  v.object({ kind: v.literal("failed"), error: v.string(), errorData: vErrorData }),
  v.object({ kind: v.literal("canceled") }),
);

/** `list`'s filters, each optional. */
export const vListFilter = {
  /** Only jobs in this state. */
  state: v.optional(v.union(v.literal("pending"), v.literal("running"), v.literal("finished"))),
  /** Only finished jobs with this outcome (implies state "finished"). */
  outcome: v.optional(vResultKind),
  /** Only this key's jobs. */
  key: v.optional(v.string()),
  /** Only this group's jobs (a GroupId; not with `key`). */
  group: v.optional(v.string()),
  /** Only this schedule's runs (not with `key`). */
  schedule: v.optional(v.string()),
};
export type ListFilter = ObjectType<typeof vListFilter>;

/** What `groupStatus` returns (API-EXTENSIONS section 12): a group's progress. `pending` counts
 * unfinished jobs not running (a job waiting for a completion is running); `done`: closed, and
 * every job finished (at `finishedAt`). */
export const vGroupStatus = v.object({
  id: v.string(),
  name: v.optional(v.string()),
  closed: v.boolean(),
  done: v.boolean(),
  total: v.number(),
  pending: v.number(),
  running: v.number(),
  succeeded: v.number(),
  failed: v.number(),
  canceled: v.number(),
  createdAt: v.number(),
  finishedAt: v.optional(v.number()),
});
export type GroupStatus = Infer<typeof vGroupStatus>;

/** What `list` reports of each job: `info` without the return value. */
export const vListedWorkInfo = v.object({
  ...vWorkInfo.fields,
  result: v.optional(vListedResult),
});
export type ListedWorkInfo = Infer<typeof vListedWorkInfo>;

/** The onComplete callback of a job: a function handle to a mutation, plus the caller's context. */
export const vOnCompleteSpec = v.object({
  fnHandle: v.string(),
  context: v.optional(v.any()),
  /** Outcomes for which onComplete is not called (the peer's `onCompleteExcludeKinds`). */
  excludeKinds: v.optional(v.array(vResultKind)),
});
export type OnCompleteSpec = Infer<typeof vOnCompleteSpec>;

/** Exhaustiveness guard for switches over tagged unions. */
export function assertNever(value: never, what: string): never {
  throw new Error(`workpool: unexpected ${what}: ${JSON.stringify(value)}`);
}
