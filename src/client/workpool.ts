/**
 * The `Workpool` class apps use: its enqueue methods, one per function type and batch, and
 * `defineOnComplete`. The methods turn one enqueue's options plus the pool's (retries, config,
 * status TTL) into `StandaloneEnqueueOptions` and hand them to src/client/enqueue.ts, which checks,
 * builds and sends the requests; the control and inspection methods (cancel, status, info, ...) and
 * the constructor come from `WorkpoolControl` (src/client/control.ts). It never calls the component
 * itself and never touches its tables; it holds no state besides its options.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the validator generics of defineOnComplete
   are `Validator<any, ...>` by design (they mirror the peer's types), and `with` serves every
   Context and ReturnValue. */
import type {
  DefaultFunctionArgs,
  FunctionReference,
  FunctionType,
  FunctionVisibility,
  GenericDataModel,
  RegisteredAction,
  RegisteredMutation,
} from "convex/server";
import type { Infer, PropertyValidators, Validator, VAny } from "convex/values";
import { invalidArgument } from "../component/model/errors.js";
import { DEFAULT_STATUS_TTL_MS } from "../component/api/enqueue.js";
import { defineAdminApi, type AdminApiOptions } from "./admin.js";
import { WorkpoolControl } from "./control.js";
import { enqueue, enqueueBatch, enqueueTasks } from "./enqueue.js";
import {
  defineExecutor,
  type ExecutorArgs,
  type ExecutorDefinition,
  type TaskArgs,
  type TaskReturns,
} from "./executor.js";
import {
  defineOnCompleteMutation,
  type DefineOnCompleteArgs,
  type OnCompleteArgs,
} from "./onComplete.js";
import {
  retryBehaviorFor,
  type EnqueueOptions,
  type RetryOption,
  type StandaloneEnqueueOptions,
} from "./options.js";
import {
  createSchedule,
  type ScheduleId,
  type ScheduleOptions,
  type StandaloneScheduleOptions,
} from "./schedules.js";
import type { ActionCtx, MutationCtx, WorkId } from "./types.js";

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
export class Workpool extends WorkpoolControl {
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
   * Runs an action on a schedule (API-EXTENSIONS §10): at each time of `cron` (in `timezone`) or
   * every `everyMs`, one run is enqueued as an ordinary job of this pool (retries, key, priority,
   * onComplete, status). `name` is unique in the pool: scheduling again under it replaces that
   * schedule (counts and last run kept). Call it from the mutation that decides to schedule (e.g.
   * the one that creates a user), so the schedule exists exactly when that commits.
   *
   * ```ts
   * await pool.scheduleAction(ctx, `digest:${userId}`, internal.digest.send, { userId }, {
   *   cron: "0 9 * * *", timezone: user.timezone, overlap: "skip", retry: true,
   * });
   * ```
   * @param name the schedule's name, 1 to 256 characters.
   * @param fn the action each run calls, with `fnArgs`.
   * @param options exactly one of `cron` and `everyMs`; `startAt`, `endAt`, `overlap` (default
   *   "skip"), `catchupWindowMs` (default 60,000), `jitterMs`, `paused`; and the enqueue options of
   *   every run: `name`, `key`, `priority`, `retry`, `onComplete`, `context`.
   * @returns the schedule's id (the same id when it replaced one). Bad input throws InvalidArgument
   *   naming the option, and nothing is written.
   */
  async scheduleAction<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    name: string,
    fn: FunctionReference<"action", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options: RetryOption & ScheduleOptions<Context, ReturnType>,
  ): Promise<ScheduleId> {
    return await createSchedule(
      this.component,
      ctx,
      "action",
      name,
      fn,
      fnArgs,
      this.withSchedule("action", options),
    );
  }

  /**
   * Runs a mutation on a schedule; as `scheduleAction` (a mutation is never retried).
   *
   * ```ts
   * await pool.scheduleMutation(ctx, "sweep-uploads", internal.uploads.sweep, {}, { everyMs: 5 * 60_000 });
   * ```
   * @returns the schedule's id.
   */
  async scheduleMutation<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    name: string,
    fn: FunctionReference<"mutation", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options: ScheduleOptions<Context, ReturnType>,
  ): Promise<ScheduleId> {
    return await createSchedule(
      this.component,
      ctx,
      "mutation",
      name,
      fn,
      fnArgs,
      this.withSchedule("mutation", options),
    );
  }

  /**
   * Runs a query on a schedule (its return value reaches onComplete); as `scheduleAction`.
   *
   * ```ts
   * await pool.scheduleQuery(ctx, "health", internal.health.check, {}, {
   *   cron: "@hourly", onComplete: internal.health.record,
   * });
   * ```
   * @returns the schedule's id.
   */
  async scheduleQuery<Args extends DefaultFunctionArgs, Context, ReturnType>(
    ctx: MutationCtx | ActionCtx,
    name: string,
    fn: FunctionReference<"query", FunctionVisibility, Args, NoInfer<ReturnType>>,
    fnArgs: Args,
    options: ScheduleOptions<Context, ReturnType>,
  ): Promise<ScheduleId> {
    return await createSchedule(
      this.component,
      ctx,
      "query",
      name,
      fn,
      fnArgs,
      this.withSchedule("query", options),
    );
  }

  /** A schedule request's options with what this pool adds: retries, config and status TTL. */
  private withSchedule(
    fnType: FunctionType,
    options: RetryOption & ScheduleOptions<any, any>,
  ): StandaloneScheduleOptions {
    const { retry, ...rest } = options ?? ({} as ScheduleOptions);
    return {
      ...rest,
      retryBehavior: retryBehaviorFor(fnType, retry, this.options),
      ...this.config(),
      statusTtl: this.options.statusTtl ?? DEFAULT_STATUS_TTL_MS,
    } as StandaloneScheduleOptions;
  }

  /**
   * Makes an executor: an internal action (export it) that runs many of this pool's tasks at once,
   * for I/O-bound work such as model calls and fetches. The pool starts executors when tasks are
   * due, as many as `maxParallelism` needs; each ends when nothing is left for it.
   *
   * ```ts
   * export const run = pool.executor({
   *   concurrency: 100,
   *   tasks: {
   *     summarize: {
   *       args: { url: v.string() },
   *       timeoutMs: 120_000,
   *       handler: async (ctx, { url }, { signal }): Promise<string> => summarize(url, signal),
   *     },
   *   },
   * });
   * ```
   * @param definition `concurrency` (tasks at once, 1 to 1,000, default 50) and `tasks`: by name,
   *   each with `args` (validators), an optional `timeoutMs` (1 s to 5 min, default 5 min) and a
   *   `handler(ctx, args, { id, attempt, signal })`.
   */
  executor<A extends Record<string, PropertyValidators>, T>(
    definition: ExecutorDefinition<A> & { tasks: T },
  ): RegisteredAction<"internal", ExecutorArgs<TaskArgs<A>, TaskReturns<T>>, Promise<null>> {
    return defineExecutor(this.component, definition);
  }

  /**
   * Enqueues a task of an executor (`pool.executor`), type-checked against it: a job of this pool
   * like any other (options as for `enqueueAction`: onComplete's `result.returnValue` is the task
   * handler's return type), run by one of the executor's actions.
   * @returns the job's id.
   */
  async enqueueTask<
    Tasks extends Record<string, DefaultFunctionArgs>,
    Name extends keyof Tasks & string,
    Context,
    ReturnType,
  >(
    ctx: MutationCtx | ActionCtx,
    executor: FunctionReference<
      "action",
      FunctionVisibility,
      ExecutorArgs<Tasks, { [K in NoInfer<Name>]: NoInfer<ReturnType> }>
    >,
    task: Name,
    args: Tasks[Name],
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId> {
    const [id] = await enqueueTasks(
      this.component,
      ctx,
      executor,
      task,
      [args],
      this.with("action", options),
    );
    return id;
  }

  /** Enqueues one task per element of `argsArray` (any number; no `dedupeKey`); returns their ids
   * in the same order. */
  async enqueueTaskBatch<
    Tasks extends Record<string, DefaultFunctionArgs>,
    Name extends keyof Tasks & string,
    Context,
    ReturnType,
  >(
    ctx: MutationCtx | ActionCtx,
    executor: FunctionReference<
      "action",
      FunctionVisibility,
      ExecutorArgs<Tasks, { [K in NoInfer<Name>]: NoInfer<ReturnType> }>
    >,
    task: Name,
    argsArray: Array<Tasks[Name]>,
    options?: RetryOption & EnqueueOptions<Context, ReturnType>,
  ): Promise<WorkId[]> {
    if (options?.dedupeKey !== undefined) {
      invalidArgument(
        "dedupeKey",
        "batches do not dedupe: enqueue such tasks one at a time",
        options.dedupeKey,
      );
    }
    return await enqueueTasks(
      this.component,
      ctx,
      executor,
      task,
      argsArray,
      this.with("action", options),
    );
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
  }: DefineOnCompleteArgs<DataModel, VContext, VReturnValue>): RegisteredMutation<
    "internal",
    OnCompleteArgs<Infer<VContext>, Infer<VReturnValue>>,
    null
  > {
    return defineOnCompleteMutation({ context, handler, returnValue });
  }

  /**
   * The admin functions of this pool, for an operator's page (`convex-workpool/react`'s
   * `WorkpoolDashboard`): export them from one module of your app.
   *
   * ```ts
   * // convex/workpoolAdmin.ts
   * import type { DataModel } from "./_generated/dataModel";
   * export const { overview, jobs, job, retry, cancel, pause, resume, setKeyParallelism,
   *   setMaxParallelism } = pool.adminApi<DataModel>({
   *   authorize: async (ctx, { operation }) => {
   *     const identity = await ctx.auth.getUserIdentity();
   *     // Only a verified address is the admin's: a provider may sign up anyone as any address.
   *     return (
   *       identity !== null &&
   *       identity.emailVerified === true &&
   *       ADMINS.includes(identity.email ?? "")
   *     );
   *   },
   * });
   * ```
   * @param options `authorize(ctx, { operation, args })`, required: runs first in every function;
   *   false (or a throw) fails the call with `workpool/Unauthorized` (`isUnauthorizedError`), and a
   *   throw is logged with its reason. `<DataModel>` types `ctx.db` by the app's schema.
   * @returns the functions to export: queries `overview`, `jobs`, `job`; mutations `retry`,
   *   `cancel` (neither changes a pool setting), `pause`, `resume`, `setKeyParallelism`,
   *   `setMaxParallelism` (the operator's value; null clears it).
   */
  adminApi<DataModel extends GenericDataModel>(options: AdminApiOptions<DataModel>) {
    return defineAdminApi(this, options);
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
}
