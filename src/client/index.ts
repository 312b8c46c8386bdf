/**
 * The client apps use: the `Workpool` class, with the validators, types and errors of the public API
 * (a drop-in for `@convex-dev/workpool`). It checks options before calling the component, turns
 * function references into handles, and calls the component's public functions. It holds no state
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
  type RegisteredMutation,
} from "convex/server";
import { v, type Infer, type Validator, type VAny, type VString } from "convex/values";
import type { ComponentApi } from "../component/_generated/component.js";
import {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vResult,
  vRetryBehavior,
  type LogLevel,
  type RetryBehavior,
  type RunResult,
} from "../component/model.js";
import { validateConfigUpdate } from "../component/config.js";
import { validateEnqueueItem, MAX_ENQUEUE_BATCH, type EnqueueItem } from "../component/enqueue.js";
import { invalidArgument } from "../component/errors.js";
import { validateRetryBehavior, validateStatusTtl } from "../component/validate.js";

/** The log levels, most verbose first (the values of `vLogLevel`). */
const LOG_LEVELS: readonly LogLevel[] = vLogLevel.members.map((member) => member.value);

export {
  NonRetryableError,
  isNonRetryableError,
  isInvalidArgumentError,
} from "../component/errors.js";
export {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vResult,
  vResult as vResultValidator,
  vResult as resultValidator,
  vRetryBehavior,
  type LogLevel,
  type RetryBehavior,
  type RunResult,
};

/** The id of a job, as enqueue returns it. */
export type WorkId = string & { __isWorkId: true };
/** Validator of a WorkId, for your own function arguments and tables. */
export const vWorkId = v.string() as VString<WorkId>;
export { vWorkId as vWorkIdValidator, vWorkId as workIdValidator };

/** The component's API, as `components.<name>` in your app's `_generated/api`. */
export type WorkpoolComponent = ComponentApi;

/** What `status` returns. `result` is ours: present while a finished job's status is retained. */
export type Status =
  | { state: "pending"; previousAttempts: number }
  | { state: "running"; previousAttempts: number }
  | { state: "finished"; result?: RunResult };

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
 * Builds the validator of onComplete's arguments, e.g. for a hand-written onComplete mutation:
 * `internalMutation({ args: vOnCompleteArgs(v.object({ userId: v.id("users") })), handler })`.
 */
export function vOnCompleteArgs<
  VContext extends Validator<any, "required", any> = VAny,
  VReturn extends Validator<any, "required", any> = VAny,
>(context?: VContext, returnValue?: VReturn) {
  const ret = (returnValue ?? v.any()) as VReturn;
  return v.object({
    workId: vWorkId,
    context: (context ?? v.optional(v.any())) as VContext,
    result: v.union(
      v.object({ kind: v.literal("success"), returnValue: ret }),
      v.object({ kind: v.literal("failed"), error: v.string() }),
      v.object({ kind: v.literal("canceled") }),
    ),
  });
}
/** The validator of onComplete's arguments with any context. */
export const vOnComplete = vOnCompleteArgs();
export const vOnCompleteValidator = vOnCompleteArgs;

/** Options of a pool. */
export type WorkpoolOptions = {
  /** How many jobs may run at once; 0 pauses starting new work. Written to the component's config
   * on each enqueue and cancel. Default 10 (the component's default). */
  maxParallelism?: number;
  /** Log level of the pool's logs. Default "REPORT". */
  logLevel?: LogLevel;
  /** Whether actions are retried when `retry` is not given at enqueue. Default false. */
  retryActionsByDefault?: boolean;
  /** Retry behavior for `retry: true`. Default `{ maxAttempts: 5, initialBackoffMs: 250, base: 2 }`. */
  defaultRetryBehavior?: RetryBehavior;
  /** How long (ms) a finished job's status and result stay readable. Default one day;
   * `Number.POSITIVE_INFINITY` keeps them. */
  statusTtl?: number;
};

/** Retries of an action: `true` for the pool's default behavior, or a behavior of its own. */
export type RetryOption = { retry?: boolean | RetryBehavior };

/** Options of one enqueue. */
export type EnqueueOptions<Context = unknown, ReturnValue = unknown> = {
  /** A name for logs; default the function's path, e.g. "emails:send". */
  name?: string;
  /** A mutation called exactly once when the job finishes (success, failed or canceled). */
  onComplete?: FunctionReference<
    "mutation",
    FunctionVisibility,
    OnCompleteArgs<Context, ReturnValue>
  > | null;
  /** Passed to onComplete as is. */
  context?: Context;
} & (
  | { /** When the job may start (ms since epoch). */ runAt?: number; runAfter?: never }
  | { /** How long to wait before the job may start (ms). */ runAfter?: number; runAt?: never }
);

type QueryCtx = Pick<GenericQueryCtx<GenericDataModel>, "runQuery">;
type MutationCtx = Pick<GenericMutationCtx<GenericDataModel>, "runQuery" | "runMutation">;
type ActionCtx = Pick<GenericActionCtx<GenericDataModel>, "runQuery" | "runMutation" | "runAction">;
type AnyCtx = QueryCtx | MutationCtx | ActionCtx;

/** The default of `statusTtl`: one day. */
const DEFAULT_STATUS_TTL_MS = 24 * 60 * 60 * 1000;

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
    validateConfigUpdate({ maxParallelism: options.maxParallelism });
    if (options.logLevel !== undefined && !LOG_LEVELS.includes(options.logLevel)) {
      invalidArgument("logLevel", `must be one of ${LOG_LEVELS.join(", ")}`, options.logLevel);
    }
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
   * @returns the job's id, for `status` and `cancel`.
   */
  async enqueueAction<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"action", FunctionVisibility, Args, ReturnType>,
    fnArgs: Args,
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    const [id] = await this.enqueueMany(ctx, "action", fn, [fnArgs], options);
    return id;
  }

  /** Enqueues one action per element of `argsArray`; returns their ids in the same order. */
  async enqueueActionBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"action", FunctionVisibility, Args, ReturnType>,
    argsArray: Array<Args>,
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await this.enqueueMany(ctx, "action", fn, argsArray, options);
  }

  /** Enqueues a mutation (never retried: a mutation that throws has no effects). */
  async enqueueMutation<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"mutation", FunctionVisibility, Args, ReturnType>,
    fnArgs: Args,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    const [id] = await this.enqueueMany(ctx, "mutation", fn, [fnArgs], options);
    return id;
  }

  /** Enqueues one mutation per element of `argsArray`; returns their ids in the same order. */
  async enqueueMutationBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"mutation", FunctionVisibility, Args, ReturnType>,
    argsArray: Array<Args>,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await this.enqueueMany(ctx, "mutation", fn, argsArray, options);
  }

  /** Enqueues a query; its return value reaches onComplete. */
  async enqueueQuery<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"query", FunctionVisibility, Args, ReturnType>,
    fnArgs: Args,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    const [id] = await this.enqueueMany(ctx, "query", fn, [fnArgs], options);
    return id;
  }

  /** Enqueues one query per element of `argsArray`; returns their ids in the same order. */
  async enqueueQueryBatch<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    fn: FunctionReference<"query", FunctionVisibility, Args, ReturnType>,
    argsArray: Array<Args>,
    options?: EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    return await this.enqueueMany(ctx, "query", fn, argsArray, options);
  }

  /**
   * Cancels a job: pending work never starts and is not retried; running work is not interrupted
   * (it is not retried, and onComplete gets its outcome, or "canceled" where it would have retried).
   * An unknown id is ignored; a malformed one throws.
   */
  async cancel(ctx: MutationCtx | ActionCtx, id: WorkId): Promise<void> {
    await ctx.runMutation(this.component.lib.cancel, { id, config: this.config() });
  }

  /** Cancels every unfinished job, `limit` per transaction (default 500). */
  async cancelAll(ctx: MutationCtx | ActionCtx, options?: { limit?: number }): Promise<void> {
    await ctx.runMutation(this.component.lib.cancelAll, {
      limit: options?.limit,
      config: this.config(),
    });
  }

  /** A job's status: pending or running (with previous attempts), or finished. */
  async status(ctx: AnyCtx, id: WorkId): Promise<Status> {
    return await ctx.runQuery(this.component.lib.status, { id });
  }

  /** The statuses of many jobs, in the order of `ids`. */
  async statusBatch(ctx: AnyCtx, ids: WorkId[]): Promise<Status[]> {
    return await ctx.runQuery(this.component.lib.statusBatch, { ids });
  }

  /**
   * Defines an internal mutation to use as `onComplete`, with a typed context.
   *
   * ```ts
   * export const sent = pool.defineOnComplete({
   *   context: v.object({ userId: v.id("users") }),
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
    return { maxParallelism: this.options.maxParallelism, logLevel: this.options.logLevel };
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

  private async enqueueMany(
    ctx: MutationCtx | ActionCtx,
    fnType: FunctionType,
    fn: FunctionReference<FunctionType, FunctionVisibility> | string,
    argsArray: DefaultFunctionArgs[],
    options: (RetryOption & EnqueueOptions<any, any>) | undefined,
  ): Promise<WorkId[]> {
    const opts = options ?? {};
    const fnHandle = typeof fn === "string" ? fn : await createFunctionHandle(fn);
    const fnName = opts.name ?? (typeof fn === "string" ? fn : getFunctionName(fn));
    const onComplete = opts.onComplete
      ? {
          fnHandle: await createFunctionHandle(opts.onComplete),
          context: opts.context,
        }
      : undefined;
    const ttl = this.options.statusTtl ?? DEFAULT_STATUS_TTL_MS;
    const items: EnqueueItem[] = argsArray.map((fnArgs) => ({
      fnHandle,
      fnName,
      fnArgs,
      fnType,
      runAt: opts.runAt,
      runAfter: opts.runAfter,
      retryBehavior: this.retryBehaviorFor(fnType, (opts as RetryOption).retry),
      onComplete,
      statusTtlMs: ttl,
    }));
    // Check everything before writing anything (the component checks again).
    const now = Date.now();
    items.forEach((item, i) =>
      validateEnqueueItem(item, now, items.length > 1 ? `items[${i}].` : ""),
    );
    const config = this.config();
    if (items.length === 1) {
      const id = await ctx.runMutation(this.component.lib.enqueue, { ...items[0], config });
      return [id as WorkId];
    }
    const ids: WorkId[] = [];
    for (let i = 0; i < items.length; i += MAX_ENQUEUE_BATCH) {
      const chunk = items.slice(i, i + MAX_ENQUEUE_BATCH);
      ids.push(
        ...((await ctx.runMutation(this.component.lib.enqueueBatch, {
          items: chunk,
          config,
        })) as WorkId[]),
      );
    }
    return ids;
  }
}
