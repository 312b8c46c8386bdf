/**
 * Enqueueing: the standalone `enqueue` / `enqueueBatch` (what the `Workpool` class's enqueue methods
 * call) and the one implementation under both, which checks every option and job before writing
 * anything, turns function references into handles, builds the component's enqueue requests and
 * splits a big batch into calls that each fit a transaction (by count and bytes, src/client/
 * batches.ts). It writes only through the component's public `lib.enqueue` / `lib.enqueueBatch`,
 * never touches the component's tables, and never chooses a retry behavior: it passes on the
 * `retryBehavior` it is given (for actions only), which a `Workpool` picks from its options first.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- one implementation serves every Context and
   ReturnValue of the typed entry points, so it takes `StandaloneEnqueueOptions<any, any>`. */
import {
  createFunctionHandle,
  getFunctionName,
  type DefaultFunctionArgs,
  type FunctionReference,
  type FunctionType,
  type FunctionVisibility,
} from "convex/server";
import {
  ENQUEUE_COUNT_SHARDS,
  validateEnqueueItem,
  type EnqueueItem,
} from "../component/api/enqueue.js";
import { invalidArgument } from "../component/model/errors.js";
import { chunkBySizes } from "./batches.js";
import {
  excludeKindsOf,
  poolConfigOf,
  validatePoolConfig,
  type StandaloneEnqueueOptions,
} from "./options.js";
import type { ActionCtx, MutationCtx, WorkId, WorkpoolComponent } from "./types.js";

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

/**
 * Enqueues tasks of an executor (`pool.executor`): one per element of `argsArray`, each a job of the
 * pool whose runner is that executor. What `enqueueTask` and `enqueueTaskBatch` call.
 */
export async function enqueueTasks(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  executor: FunctionReference<"action", FunctionVisibility> | string,
  task: string,
  argsArray: DefaultFunctionArgs[],
  options: StandaloneEnqueueOptions<any, any>,
): Promise<WorkId[]> {
  if (!Array.isArray(argsArray)) {
    invalidArgument("argsArray", "must be an array of argument objects", argsArray);
  }
  if (argsArray.length === 0) return [];
  return await enqueueJobs(component, ctx, "action", executor, argsArray, options, task);
}

/** The pool config each function execution has sent to each pool already, by its `ctx` and the
 * pool's enqueue reference: a later enqueue in the same execution sends it again only when it
 * differs, so the component reads its config row once per execution, not once per job (Convex
 * counts every index range a transaction reads: 4,096 at most). */
const sentConfigs = new WeakMap<object, Map<string, string>>();

/** A key for one pool (component) within an app: its enqueue function's reference path. */
function poolKeyOf(component: WorkpoolComponent): string | undefined {
  const path = (component.lib.enqueue as unknown as Record<symbol, unknown>)[
    Symbol.for("toReferencePath")
  ];
  return typeof path === "string" ? path : undefined;
}

/** The one implementation of every enqueue: checks everything, then writes in as few calls as fit. */
async function enqueueJobs(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  fnType: FunctionType,
  fn: FunctionReference<FunctionType, FunctionVisibility> | string,
  argsArray: DefaultFunctionArgs[],
  options: StandaloneEnqueueOptions<any, any>,
  task?: string,
): Promise<WorkId[]> {
  const opts = options ?? {};
  const config = poolConfigOf(opts);
  validatePoolConfig(config);
  const excludeKinds = excludeKindsOf(opts.onCompleteExcludeKinds);
  const fnHandle = typeof fn === "string" ? fn : await createFunctionHandle(fn);
  const fnName = opts.name ?? task ?? (typeof fn === "string" ? fn : getFunctionName(fn));
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
    ...(task !== undefined ? { task } : {}),
    ...(opts.manualCompletion !== undefined ? { manualCompletion: opts.manualCompletion } : {}),
    ...(opts.group !== undefined ? { group: opts.group } : {}),
  }));
  // Check everything before writing anything (the component checks again).
  const now = Date.now();
  const sizes = items.map(
    (item, i) => validateEnqueueItem(item, now, items.length > 1 ? `items[${i}].` : "").sizeBytes,
  );
  const countShard = countShardOf(ctx);
  const poolKey = poolKeyOf(component);
  const configJson = JSON.stringify(config);
  const sent = sentConfigs.get(ctx) ?? new Map<string, string>();
  const toSend = poolKey !== undefined && sent.get(poolKey) === configJson ? {} : config;
  const remember = () => {
    if (poolKey === undefined) return;
    sent.set(poolKey, configJson);
    sentConfigs.set(ctx, sent);
  };
  if (items.length === 1) {
    const id = await ctx.runMutation(component.lib.enqueue, {
      ...items[0],
      config: toSend,
      countShard,
    });
    remember();
    return [id as WorkId];
  }
  const ids: WorkId[] = [];
  for (const chunk of chunkBySizes(items, sizes)) {
    const chunkIds = await ctx.runMutation(component.lib.enqueueBatch, {
      items: chunk,
      config: ids.length === 0 ? toSend : {},
      countShard,
    });
    remember();
    ids.push(...(chunkIds as WorkId[]));
  }
  return ids;
}
