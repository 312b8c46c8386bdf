/**
 * The client apps use: the `Workpool` class and the standalone `enqueue` / `enqueueBatch`, with the
 * validators, types and errors of the public API (a drop-in for `@convex-dev/workpool`). It checks
 * options before calling the component, turns function references into handles, splits big batches
 * into calls that fit a transaction, and calls the component's public functions. It holds no state
 * besides its options and never touches the component's tables directly.
 */
import {
  createFunctionHandle,
  getFunctionName,
  internalMutationGeneric,
  type DefaultFunctionArgs,
  type FunctionReference,
  type FunctionType,
  type FunctionVisibility,
  type GenericActionCtx,
  type GenericDataModel,
  type GenericMutationCtx,
  type GenericQueryCtx,
  type PaginationOptions,
  type PaginationResult,
  type RegisteredMutation,
} from "convex/server";
import { v, type Infer, type Validator, type VAny, type VString } from "convex/values";
import type { ComponentApi } from "../component/_generated/component.js";
import {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vResult,
  vRateLimit,
  vResultKind,
  vRetryBehavior,
  vWorkInfo as vComponentWorkInfo,
  vListedWorkInfo as vComponentListedWorkInfo,
  vListFilter,
  vPoolStats,
  type ListFilter,
  type PoolStats,
  type LogLevel,
  type Priority,
  type ResultKind,
  type RetryBehavior,
  type RunResult,
  type Status,
} from "../component/model/validators.js";
import { validateConfigUpdate } from "../component/config.js";
import {
  DEFAULT_STATUS_TTL_MS,
  ENQUEUE_COUNT_SHARDS,
  validateEnqueueItem,
  type EnqueueItem,
} from "../component/api/enqueue.js";
import { invalidArgument } from "../component/model/errors.js";
import { vKeyStatus } from "../component/keys.js";
import { validateRetryBehavior, validateStatusTtl } from "../component/model/validate.js";
import { chunkBySizes } from "./batches.js";

/** The log levels, most verbose first (the values of `vLogLevel`). */
const LOG_LEVELS: readonly LogLevel[] = vLogLevel.members.map((member) => member.value);

/** Checks the options that are written to the component's config; throws naming the option. */
function validatePoolConfig(options: {
  maxParallelism?: number;
  keyParallelism?: number;
  rateLimit?: RateLimit | null;
  logLevel?: LogLevel;
}): void {
  validateConfigUpdate({
    maxParallelism: options.maxParallelism,
    keyParallelism: options.keyParallelism,
    rateLimit: options.rateLimit,
  });
  if (options.logLevel !== undefined && !LOG_LEVELS.includes(options.logLevel)) {
    invalidArgument("logLevel", `must be one of ${LOG_LEVELS.join(", ")}`, options.logLevel);
  }
}
/** The final result kinds (the values of `vResultKind`), for `onCompleteExcludeKinds`. */
const RESULT_KINDS: readonly ResultKind[] = vResultKind.members.map((member) => member.value);

export {
  NonRetryableError,
  SnoozeError,
  isNonRetryableError,
  isInvalidArgumentError,
} from "../component/model/errors.js";
export {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vResult,
  vResult as vResultValidator,
  vResult as resultValidator,
  vRetryBehavior,
  vRateLimit,
  type LogLevel,
  type Priority,
  type RetryBehavior,
  type RunResult,
};

/** A pool's rate limit: at most `starts` attempts start in any interval of `periodMs` ms. */
export type RateLimit = Infer<typeof vRateLimit>;

/** The id of a job, as enqueue returns it. */
export type WorkId = string & { __isWorkId: true };
/** Validator of a WorkId, for your own function arguments and tables. */
export const vWorkId = v.string() as VString<WorkId>;
export { vWorkId as vWorkIdValidator, vWorkId as workIdValidator };

/** The component's API, as `components.<name>` in your app's `_generated/api`. */
export type WorkpoolComponent = ComponentApi;

/**
 * What `status` returns: `{ state: "pending" | "running", previousAttempts }` or
 * `{ state: "finished" }` (exactly the peer's shapes; `info` has the result and timings).
 */
export type { Status };

/** Validator of what `keyStatus` returns. */
export { vKeyStatus };
/** A key's progress: `{ pending, running, succeeded, failed, canceled, paused, parallelism }`. */
export type KeyStatus = Infer<typeof vKeyStatus>;

/**
 * Validator of what `info` returns (without the `null`): a job's name, function type, state,
 * attempts, timings and, once finished, its result.
 */
export const vWorkInfo = v.object({ ...vComponentWorkInfo.fields, id: vWorkId });
/**
 * What `info` returns for a retained job: `{ id, name, fnType, key?, priority, state,
 * previousAttempts, enqueuedAt, startedAt?, finishedAt?, result? }`, `result` being the `RunResult`
 * onComplete got.
 */
export type WorkInfo = Infer<typeof vWorkInfo>;

/** Validator of one job of a `list` page: `info`'s shape, without a success's return value. */
export const vListedWorkInfo = v.object({ ...vComponentListedWorkInfo.fields, id: vWorkId });
/** One job of a `list` page. */
export type ListedWorkInfo = Infer<typeof vListedWorkInfo>;

/** Validator of `list`'s filters (spread it into your query's args, beside `paginationOpts`). */
export { vListFilter };
/** What `list` takes: filters (all optional) and Convex's `paginationOpts`. */
export type ListArgs = ListFilter & { paginationOpts: PaginationOptions };

/** Validator of what `stats` returns. */
export { vPoolStats as vStats };
/**
 * What `stats` returns: `{ pending, running, maxParallelism, paused, oldestPendingMs, lastMinute:
 * { started, succeeded, failed, canceled, retried } }`.
 */
export type Stats = PoolStats;
export { METRICS_CONTENT_TYPE, workpoolMetrics } from "./metrics.js";

/** The arguments an onComplete mutation receives. */
export type OnCompleteArgs<Context = unknown, Returns = unknown> = {
  /** The job that finished. */
  workId: string;
  /** The `context` passed at enqueue. */
  context: Context;
  /** How it ended. */
  result: RunResult<Returns>;
};

/**
 * Builds the validator of a job's result, with `returnValue` checked by `returnValue` (default
 * `v.any()`): `{ kind: "success", returnValue } | { kind: "failed", error } | { kind: "canceled" }`.
 */
export function vRunResult<RV extends Validator<any, any, any> = VAny>(returnValue?: RV) {
  return v.union(
    v.object({ kind: v.literal("success"), returnValue: (returnValue ?? v.any()) as RV }),
    v.object({ kind: v.literal("failed"), error: v.string() }),
    v.object({ kind: v.literal("canceled") }),
  );
}

/**
 * Builds the validator of onComplete's arguments, e.g. for a hand-written onComplete mutation:
 * `internalMutation({ args: vOnCompleteArgs(v.object({ userId: v.id("users") })), handler })`.
 * @param context validator of the `context` passed at enqueue (default: anything, or none).
 * @param returnValue validator of a success's `returnValue` (default: anything).
 */
export function vOnCompleteArgs<
  VContext extends Validator<any, "required", any> = VAny,
  VReturn extends Validator<any, "required", any> = VAny,
>(context?: VContext, returnValue?: VReturn) {
  return v.object({
    workId: vWorkId,
    context: (context ?? v.optional(v.any())) as VContext,
    result: vRunResult((returnValue ?? v.optional(v.any())) as VReturn),
  });
}
/** The validator of onComplete's arguments with any context: `vOnCompleteArgs()`. */
export const vOnComplete = vOnCompleteArgs();
/** @deprecated The peer's older name of `vOnCompleteArgs`. */
export const vOnCompleteValidator = vOnCompleteArgs;

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
  /** As `WorkpoolOptions.statusTtl` (default one day). */
  statusTtl?: number;
};

type QueryCtx = Pick<GenericQueryCtx<GenericDataModel>, "runQuery">;
type MutationCtx = Pick<GenericMutationCtx<GenericDataModel>, "runQuery" | "runMutation">;
type ActionCtx = Pick<GenericActionCtx<GenericDataModel>, "runQuery" | "runMutation" | "runAction">;
type AnyCtx = QueryCtx | MutationCtx | ActionCtx;

/**
 * Enqueues one function without a `Workpool` instance (what the class's enqueue methods call).
 *
 * ```ts
 * await enqueue(components.workpool, ctx, "action", internal.emails.send, { to }, {
 *   retryBehavior: { maxAttempts: 3, initialBackoffMs: 100, base: 2 },
 *   onComplete: internal.emails.sent,
 * });
 * ```
 * @param component `components.<name>` from your app's `_generated/api`.
 * @param ctx a mutation or action ctx.
 * @param fnType the kind of `fn`: "action", "mutation" or "query".
 * @param fn a function reference (or a function handle string).
 * @param fnArgs its arguments.
 * @param options enqueue options, plus `retryBehavior`, `maxParallelism`, `logLevel`, `statusTtl`.
 * @returns the job's id.
 */
export async function enqueue<
  FnType extends FunctionType,
  Args extends DefaultFunctionArgs,
  ReturnType,
  Context,
>(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  fnType: FnType,
  fn: FunctionReference<FnType, FunctionVisibility, Args, NoInfer<ReturnType>>,
  fnArgs: Args,
  options: StandaloneEnqueueOptions<Context, ReturnType> = {},
): Promise<WorkId> {
  const [id] = await enqueueJobs(component, ctx, fnType, fn, [fnArgs], options);
  return id;
}

/**
 * Enqueues one function per element of `fnArgsArray` without a `Workpool` instance (what the class's
 * batch methods call). Any number of jobs: the calls to the component are split by count and by
 * bytes so that each fits a transaction (a caller that is a mutation still writes them all in its
 * own transaction; an action does not).
 * @param component `components.<name>` from your app's `_generated/api`.
 * @param ctx a mutation or action ctx.
 * @param fnType the kind of `fn`: "action", "mutation" or "query".
 * @param fn a function reference (or a function handle string).
 * @param fnArgsArray the arguments of each job.
 * @param options enqueue options for every job, plus `retryBehavior`, `maxParallelism`,
 *   `logLevel`, `statusTtl`.
 * @returns the jobs' ids, in the order of `fnArgsArray`.
 */
export async function enqueueBatch<
  FnType extends FunctionType,
  Args extends DefaultFunctionArgs,
  ReturnType,
  Context,
>(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  fnType: FnType,
  fn: FunctionReference<FnType, FunctionVisibility, Args, NoInfer<ReturnType>>,
  fnArgsArray: Array<Args>,
  options: StandaloneEnqueueOptions<Context, ReturnType> = {},
): Promise<WorkId[]> {
  if (!Array.isArray(fnArgsArray)) {
    invalidArgument("fnArgsArray", "must be an array of argument objects", fnArgsArray);
  }
  if (fnArgsArray.length === 0) return [];
  if (options?.dedupeKey !== undefined) {
    invalidArgument(
      "dedupeKey",
      "batches do not dedupe: enqueue such jobs one at a time",
      options.dedupeKey,
    );
  }
  return await enqueueJobs(component, ctx, fnType, fn, fnArgsArray, options);
}

/** Checks `onCompleteExcludeKinds`; returns it as the component takes it (undefined when empty). */
function excludeKindsOf(kinds: readonly ResultKind[] | undefined): ResultKind[] | undefined {
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

/** The `enqueueCounts` shard of each function execution, by its `ctx` (one object per execution):
 * every enqueue of one app mutation counts in one row, so that two mutations that enqueue many jobs
 * one by one conflict on it 1 time in 16, not almost always. */
const countShards = new WeakMap<object, number>();
function countShardOf(ctx: object): number {
  let shard = countShards.get(ctx);
  if (shard === undefined) {
    shard = Math.floor(Math.random() * ENQUEUE_COUNT_SHARDS);
    countShards.set(ctx, shard);
  }
  return shard;
}

/** The one implementation of every enqueue: checks everything, then writes in as few calls as fit. */
async function enqueueJobs(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  fnType: FunctionType,
  fn: FunctionReference<FunctionType, FunctionVisibility> | string,
  argsArray: DefaultFunctionArgs[],
  options: StandaloneEnqueueOptions<any, any>,
): Promise<WorkId[]> {
  const opts = options ?? {};
  const config = {
    maxParallelism: opts.maxParallelism,
    keyParallelism: opts.keyParallelism,
    rateLimit: opts.rateLimit,
    logLevel: opts.logLevel,
  };
  validatePoolConfig(config);
  const excludeKinds = excludeKindsOf(opts.onCompleteExcludeKinds);
  const fnHandle = typeof fn === "string" ? fn : await createFunctionHandle(fn);
  const fnName = opts.name ?? (typeof fn === "string" ? fn : getFunctionName(fn));
  const onComplete = opts.onComplete
    ? {
        fnHandle: await createFunctionHandle(opts.onComplete),
        context: opts.context,
        ...(excludeKinds ? { excludeKinds } : {}),
      }
    : undefined;
  const items: EnqueueItem[] = argsArray.map((fnArgs) => ({
    fnHandle,
    fnName,
    fnArgs,
    fnType,
    runAt: opts.runAt,
    runAfter: opts.runAfter,
    // Mutations and queries are never retried (a mutation that throws has no effects).
    retryBehavior: fnType === "action" ? opts.retryBehavior : undefined,
    onComplete,
    statusTtlMs: opts.statusTtl,
    key: opts.key,
    priority: opts.priority,
    dedupeKey: opts.dedupeKey,
    onDuplicate: opts.onDuplicate,
  }));
  // Check everything before writing anything (the component checks again).
  const now = Date.now();
  const sizes = items.map(
    (item, i) => validateEnqueueItem(item, now, items.length > 1 ? `items[${i}].` : "").sizeBytes,
  );
  const countShard = countShardOf(ctx);
  if (items.length === 1) {
    return [
      (await ctx.runMutation(component.lib.enqueue, { ...items[0], config, countShard })) as WorkId,
    ];
  }
  const ids: WorkId[] = [];
  for (const chunk of chunkBySizes(items, sizes)) {
    const chunkIds = await ctx.runMutation(component.lib.enqueueBatch, {
      items: chunk,
      config,
      countShard,
    });
    ids.push(...(chunkIds as WorkId[]));
  }
  return ids;
}

/**
 * A pool of work: runs enqueued actions, mutations and queries with at most `maxParallelism` at once.
 *
 * ```ts
 * const pool = new Workpool(components.emailPool, { maxParallelism: 5, retryActionsByDefault: true });
 * export const send = mutation({ handler: async (ctx) => {
 *   await pool.enqueueAction(ctx, internal.emails.send, { to: "a@b.c" }, { onComplete: internal.emails.sent });
 * } });
 * ```
 */
export class Workpool {
  /**
   * @param component `components.<name>` from your app's `_generated/api`.
   * @param options the pool's options; bad values throw here, naming the option.
   */
  constructor(
    public component: WorkpoolComponent,
    public options: WorkpoolOptions = {},
  ) {
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

  /**
   * Enqueues an action. Retried on failure when `retry` (or `retryActionsByDefault`) says so.
   * @returns the job's id, for `status`, `info` and `cancel`.
   */
  async enqueueAction<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"action", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    return await enqueue(this.component, ctx, "action", fn, fnArgs, this.with("action", options));
  }

  /** Enqueues one action per element of `argsArray` (any number); returns their ids in the same
   * order. */
  async enqueueActionBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"action", FunctionVisibility, Args, NoInfer<ReturnType>>,
    argsArray: Array<Args>,
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await enqueueBatch(
      this.component,
      ctx,
      "action",
      fn,
      argsArray,
      this.with("action", options),
    );
  }

  /** Enqueues a mutation (never retried: a mutation that throws has no effects). */
  async enqueueMutation<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"mutation", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    return await enqueue(
      this.component,
      ctx,
      "mutation",
      fn,
      fnArgs,
      this.with("mutation", options),
    );
  }

  /** Enqueues one mutation per element of `argsArray` (any number); returns their ids in the same
   * order. */
  async enqueueMutationBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"mutation", FunctionVisibility, Args, NoInfer<ReturnType>>,
    argsArray: Array<Args>,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await enqueueBatch(
      this.component,
      ctx,
      "mutation",
      fn,
      argsArray,
      this.with("mutation", options),
    );
  }

  /** Enqueues a query; its return value reaches onComplete. */
  async enqueueQuery<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"query", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    return await enqueue(this.component, ctx, "query", fn, fnArgs, this.with("query", options));
  }

  /** Enqueues one query per element of `argsArray` (any number); returns their ids in the same
   * order. */
  async enqueueQueryBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"query", FunctionVisibility, Args, NoInfer<ReturnType>>,
    argsArray: Array<Args>,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await enqueueBatch(
      this.component,
      ctx,
      "query",
      fn,
      argsArray,
      this.with("query", options),
    );
  }

  /**
   * Cancels a job: pending work never starts and is not retried; running work is not interrupted
   * (it is not retried, and onComplete gets its outcome, or "canceled" where it would have retried).
   * An unknown id is ignored; a malformed one throws.
   */
  async cancel(ctx: MutationCtx | ActionCtx, id: WorkId): Promise<void> {
    await ctx.runMutation(this.component.lib.cancel, { id, config: this.config() });
  }

  /**
   * Runs a job that failed or was canceled again, while its status is retained: a new job, due now,
   * with the same function, args and options (name, key, priority, retry, onComplete, context).
   * Returns the new job's id; the old job keeps its one onComplete. An unknown, unfinished or
   * succeeded job is rejected (an InvalidArgument error naming `id`).
   */
  async retry(ctx: MutationCtx | ActionCtx, id: WorkId): Promise<WorkId> {
    return (await ctx.runMutation(this.component.lib.retry, {
      id,
      config: this.config(),
    })) as WorkId;
  }

  /** Cancels every unfinished job (with `key`: every unfinished job of that key, and no others),
   * `limit` per transaction (default 500). */
  async cancelAll(
    ctx: MutationCtx | ActionCtx,
    options?: { limit?: number; key?: string },
  ): Promise<void> {
    await ctx.runMutation(this.component.lib.cancelAll, {
      limit: options?.limit,
      key: options?.key,
      config: this.config(),
    });
  }

  /** Sets one key's parallelism (whole number ≥ 1); `null` returns it to the pool's
   * `keyParallelism`. Lowering it lets running jobs finish and starts none of the key's jobs until
   * it has room. */
  async setKeyParallelism(
    ctx: MutationCtx | ActionCtx,
    key: string,
    parallelism: number | null,
  ): Promise<void> {
    await ctx.runMutation(this.component.keys.setKeyParallelism, { key, parallelism });
  }

  /** A key's progress: `{ pending, running, succeeded, failed, canceled, paused, parallelism }`
   * (finished counts while the jobs' status is retained). Reactive; its cost does not grow with
   * the key's backlog. */
  async keyStatus(ctx: AnyCtx, key: string): Promise<KeyStatus> {
    return await ctx.runQuery(this.component.keys.keyStatus, { key });
  }

  /** Pauses the pool (or, with `key`, one key): no attempt starts, retries included, until
   * `resume`. Stored in the component: it lasts across deploys, whatever options clients pass. */
  async pause(ctx: MutationCtx | ActionCtx, options?: { key?: string }): Promise<void> {
    await ctx.runMutation(this.component.keys.pause, { key: options?.key });
  }

  /** Ends a pause of the pool (or, with `key`, of one key). */
  async resume(ctx: MutationCtx | ActionCtx, options?: { key?: string }): Promise<void> {
    await ctx.runMutation(this.component.keys.resume, { key: options?.key });
  }

  /**
   * A job's status: `{ state: "pending" | "running", previousAttempts }` or `{ state: "finished" }`
   * (also once its status is no longer retained). For its result and timings, see `info`.
   */
  async status(ctx: AnyCtx, id: WorkId): Promise<Status> {
    return await ctx.runQuery(this.component.lib.status, { id });
  }

  /** The statuses of many jobs (at most 1,000 ids), in the order of `ids`. */
  async statusBatch(ctx: AnyCtx, ids: WorkId[]): Promise<Status[]> {
    return await ctx.runQuery(this.component.lib.statusBatch, { ids });
  }

  /**
   * Everything the pool knows about a job: name, function type, state, attempts, when it was
   * enqueued, started and finished, and (once finished) the `RunResult` onComplete got. `null` once
   * the job's status is no longer retained (after `statusTtl`); a malformed id throws.
   */
  async info(ctx: AnyCtx, id: WorkId): Promise<WorkInfo | null> {
    return (await ctx.runQuery(this.component.lib.info, { id })) as WorkInfo | null;
  }

  /**
   * A page of jobs, for an admin page (`usePaginatedQuery`): `state` filters by state, `outcome`
   * (`"success" | "failed" | "canceled"`) by outcome (finished jobs only), `key` by key. Pending
   * jobs come by due time and running ones by start time (oldest first), finished ones newest
   * first; with neither state nor outcome, newest enqueued first. Each job is as `info` shows it,
   * without a success's return value. At most 1,000 jobs a page.
   */
  async list(ctx: AnyCtx, args: ListArgs): Promise<PaginationResult<ListedWorkInfo>> {
    return (await ctx.runQuery(
      this.component.inspect.list,
      args,
    )) as PaginationResult<ListedWorkInfo>;
  }

  /**
   * The pool's health: `{ pending, running, maxParallelism, paused, oldestPendingMs, lastMinute:
   * { started, succeeded, failed, canceled, retried } }`. Exact, and it costs the same few reads
   * at any backlog. `lastMinute` counts the current second and the 59 before it.
   */
  async stats(ctx: AnyCtx): Promise<Stats> {
    return await ctx.runQuery(this.component.inspect.stats, {});
  }

  /**
   * Defines an internal mutation to use as `onComplete`, with a typed context and return value.
   *
   * ```ts
   * export const sent = pool.defineOnComplete({
   *   context: v.object({ userId: v.id("users") }),
   *   returnValue: v.string(), // optional: checks `result.returnValue` of a success
   *   handler: async (ctx, { workId, context, result }) => { ... },
   * });
   * ```
   */
  defineOnComplete<
    DataModel extends GenericDataModel,
    VContext extends Validator<any, any, any> = VAny<any, "optional">,
    VReturnValue extends Validator<any, any, any> = VAny<any, "optional">,
  >({
    context,
    handler,
    returnValue,
  }: {
    context?: VContext;
    handler: (
      ctx: GenericMutationCtx<DataModel>,
      args: { workId: WorkId; context: Infer<VContext>; result: RunResult<Infer<VReturnValue>> },
    ) => Promise<void>;
    returnValue?: VReturnValue;
  }): RegisteredMutation<"internal", OnCompleteArgs<Infer<VContext>, Infer<VReturnValue>>, null> {
    return internalMutationGeneric({
      args: vOnCompleteArgs(context, returnValue),
      handler: async (ctx: GenericMutationCtx<DataModel>, args: any) => {
        await handler(ctx, args);
        return null;
      },
    }) as any;
  }

  private config() {
    return {
      maxParallelism: this.options.maxParallelism,
      keyParallelism: this.options.keyParallelism,
      rateLimit: this.options.rateLimit,
      logLevel: this.options.logLevel,
    };
  }

  /** One enqueue's options with what this pool adds: retries, config and status TTL. */
  private with(
    fnType: FunctionType,
    options: (RetryOption & EnqueueOptions<any, any>) | undefined,
  ): StandaloneEnqueueOptions<any, any> {
    const { retry, ...rest } = options ?? {};
    return {
      ...rest,
      retryBehavior: this.retryBehaviorFor(fnType, retry),
      ...this.config(),
      statusTtl: this.options.statusTtl ?? DEFAULT_STATUS_TTL_MS,
    };
  }

  private retryBehaviorFor(
    fnType: FunctionType,
    retry: boolean | RetryBehavior | undefined,
  ): RetryBehavior | undefined {
    if (fnType !== "action") return undefined;
    const wanted = retry ?? this.options.retryActionsByDefault ?? false;
    if (wanted === false) return undefined;
    if (wanted === true) return this.options.defaultRetryBehavior ?? DEFAULT_RETRY_BEHAVIOR;
    if (typeof wanted !== "object" || wanted === null) {
      invalidArgument("retry", "must be a boolean or a RetryBehavior", String(wanted));
    }
    return wanted;
  }
}
