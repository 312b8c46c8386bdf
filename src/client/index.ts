/**
 * The package's entry point (`convex-workpool`, a drop-in for `@convex-dev/workpool`): the
 * `Workpool` class, and the other public names of the client re-exported by name from the modules
 * that own them. The class checks its options once, turns one enqueue's options plus its own
 * (retries, config, status TTL) into the options of the standalone `enqueue` / `enqueueBatch`, and
 * calls the component's public functions for control and inspection. It holds no state besides its
 * options and never touches the component's tables directly. Nothing else is exported beyond the
 * public API: the client's helpers (option checks, the ctx types) stay internal.
 *
 * - enqueue.ts: the standalone `enqueue` / `enqueueBatch`, and the building and sending of enqueue
 *   requests (batches.ts splits big batches).
 * - options.ts: the types of a pool's and an enqueue's options, and their checks.
 * - onComplete.ts: what an onComplete mutation receives, and its validators.
 * - types.ts: ids, and what status, keyStatus, info, list and stats return.
 * - metrics.ts: `workpoolMetrics`, stats in Prometheus' text format.
 * - the component's model: the errors user code throws, the retry and result validators.
 */
import type {
  DefaultFunctionArgs,
  FunctionReference,
  FunctionType,
  FunctionVisibility,
  GenericDataModel,
  GenericMutationCtx,
  PaginationResult,
  RegisteredMutation,
} from "convex/server";
import type { Infer, Validator, VAny } from "convex/values";
import { DEFAULT_STATUS_TTL_MS } from "../component/api/enqueue.js";
import type { RunResult } from "../component/model/validators.js";
import { enqueue, enqueueBatch } from "./enqueue.js";
import { defineOnCompleteMutation, type OnCompleteArgs } from "./onComplete.js";
import {
  retryBehaviorFor,
  validateWorkpoolOptions,
  type EnqueueOptions,
  type PoolConfig,
  type RetryOption,
  type StandaloneEnqueueOptions,
  type WorkpoolOptions,
} from "./options.js";
import type {
  ActionCtx,
  AnyCtx,
  KeyStatus,
  ListArgs,
  ListedWorkInfo,
  MutationCtx,
  Stats,
  Status,
  WorkId,
  WorkInfo,
  WorkpoolComponent,
} from "./types.js";

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
} from "../component/model/validators.js";

export { enqueue, enqueueBatch } from "./enqueue.js";
export type {
  EnqueueOptions,
  RateLimit,
  RetryOption,
  StandaloneEnqueueOptions,
  WorkpoolOptions,
  WorkpoolRetryOptions,
} from "./options.js";
export {
  vOnComplete,
  vOnCompleteArgs,
  vOnCompleteValidator,
  vRunResult,
  type OnCompleteArgs,
} from "./onComplete.js";
export {
  vKeyStatus,
  vListedWorkInfo,
  vListFilter,
  vStats,
  vWorkId,
  vWorkId as vWorkIdValidator,
  vWorkId as workIdValidator,
  vWorkInfo,
  type KeyStatus,
  type ListArgs,
  type ListedWorkInfo,
  type Stats,
  type Status,
  type WorkId,
  type WorkInfo,
  type WorkpoolComponent,
} from "./types.js";
export { METRICS_CONTENT_TYPE, workpoolMetrics } from "./metrics.js";

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
    validateWorkpoolOptions(options);
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
    return defineOnCompleteMutation({ context, handler, returnValue });
  }

  /** One enqueue's options with what this pool adds: retries, config and status TTL. */
  private with(
    fnType: FunctionType,
    options: (RetryOption & EnqueueOptions<any, any>) | undefined,
  ): StandaloneEnqueueOptions<any, any> {
    const { retry, ...rest } = options ?? {};
    return {
      ...rest,
      retryBehavior: retryBehaviorFor(fnType, retry, this.options),
      ...this.config(),
      statusTtl: this.options.statusTtl ?? DEFAULT_STATUS_TTL_MS,
    };
  }

  /** The options this pool writes to the component's config with each enqueue and cancel. */
  private config(): PoolConfig {
    return {
      maxParallelism: this.options.maxParallelism,
      keyParallelism: this.options.keyParallelism,
      rateLimit: this.options.rateLimit,
      logLevel: this.options.logLevel,
    };
  }
}
