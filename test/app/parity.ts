// Parity fixture, part 2: a peer app's use of the pool, written only against the exports of
// @convex-dev/workpool 0.4.16 (every exported value and type is used at least once) but importing
// this package. See parityJobs.ts.
import {
  anyApi,
  mutationGeneric,
  queryGeneric,
  type ApiFromModules,
  type FilterApi,
  type FunctionReference,
  type GenericMutationCtx,
  type GenericDataModel,
} from "convex/server";
import { v } from "convex/values";
import {
  DEFAULT_RETRY_BEHAVIOR,
  enqueue,
  enqueueBatch,
  resultValidator,
  vLogLevel,
  vResult,
  vResultValidator,
  vRetryBehavior,
  vWorkId,
  workIdValidator,
  type EnqueueOptions,
  type OnCompleteArgs,
  type RetryOption,
  type RunResult,
  type WorkId,
} from "../../src/client/index.js";
import type * as parityJobs from "./parityJobs.js";
import { components, pool } from "./parityJobs.js";

/** As an app's `_generated/api` gives it. */
const internal = anyApi as unknown as FilterApi<
  ApiFromModules<{ parityJobs: typeof parityJobs }>,
  FunctionReference<any, "internal">
>;

/** Enqueues `double({ n })` with a typed onComplete. */
export const start = mutationGeneric({
  args: { n: v.number(), label: v.string(), retry: v.optional(v.boolean()) },
  returns: vWorkId,
  handler: async (ctx, { n, label, retry }): Promise<WorkId> => {
    const options: RetryOption & EnqueueOptions<{ label: string }, number> = {
      retry,
      name: "parity double",
      onComplete: internal.parityJobs.doubled,
      context: { label },
    };
    return await pool.enqueueAction(ctx, internal.parityJobs.double, { n }, options);
  },
});

/** Every other enqueue form: mutation, query, the batches, and the standalone functions. */
export const startAll = mutationGeneric({
  args: { retryBehavior: vRetryBehavior, logLevel: vLogLevel },
  handler: async (ctx, { retryBehavior, logLevel }) => {
    const mutation = await pool.enqueueMutation(
      ctx,
      internal.parityJobs.label,
      { n: 3 },
      { onComplete: internal.parityJobs.labeled, context: "m", runAfter: 0 },
    );
    const query = await pool.enqueueQuery(
      ctx,
      internal.parityJobs.lookup,
      { n: 4 },
      { onComplete: internal.parityJobs.anything, context: { q: 4 }, runAt: Date.now() },
    );
    const actionBatch = await pool.enqueueActionBatch(
      ctx,
      internal.parityJobs.double,
      [{ n: 5 }, { n: 6 }],
      {
        retry: DEFAULT_RETRY_BEHAVIOR,
        onComplete: internal.parityJobs.spelledOut,
        context: "batch",
      },
    );
    const mutationBatch = await pool.enqueueMutationBatch(
      ctx,
      internal.parityJobs.label,
      [{ n: 7 }],
      { onComplete: internal.parityJobs.labeled, context: "mb" },
    );
    const queryBatch = await pool.enqueueQueryBatch(ctx, internal.parityJobs.lookup, [{ n: 8 }]);
    const standalone = await enqueue(
      components.workpool,
      ctx,
      "action",
      internal.parityJobs.double,
      { n: 9 },
      {
        retryBehavior,
        maxParallelism: 4,
        logLevel,
        onComplete: internal.parityJobs.doubled,
        context: { label: "standalone" },
        onCompleteExcludeKinds: ["canceled"],
      },
    );
    const standaloneBatch = await enqueueBatch(
      components.workpool,
      ctx,
      "mutation",
      internal.parityJobs.label,
      [{ n: 10 }, { n: 11 }],
      { maxParallelism: 4, logLevel, onComplete: internal.parityJobs.legacy, context: 10 },
    );
    return { mutation, query, actionBatch, mutationBatch, queryBatch, standalone, standaloneBatch };
  },
});

/** A batch whose failed jobs do not call onComplete (`onCompleteExcludeKinds`). */
export const startExcludingFailed = mutationGeneric({
  args: { ns: v.array(v.number()) },
  handler: async (ctx, { ns }): Promise<WorkId[]> =>
    await pool.enqueueActionBatch(
      ctx,
      internal.parityJobs.double,
      ns.map((n) => ({ n })),
      {
        onComplete: internal.parityJobs.doubled,
        context: { label: "excluding" },
        onCompleteExcludeKinds: ["failed"],
      },
    ),
});

/** A job's status. */
export const status = queryGeneric({
  args: { id: workIdValidator },
  handler: async (ctx, { id }) => await pool.status(ctx, id),
});

/** Many jobs' statuses. */
export const statusBatch = queryGeneric({
  args: { ids: v.array(vWorkId) },
  handler: async (ctx, { ids }) => await pool.statusBatch(ctx, ids),
});

/** Cancels one job, or all unfinished ones. */
export const cancel = mutationGeneric({
  args: { id: v.optional(vWorkId) },
  handler: async (ctx, { id }) => {
    if (id) await pool.cancel(ctx, id);
    else await pool.cancelAll(ctx, { limit: 100 });
  },
});

/** What onComplete got for a job, checked by the result validators. */
export const recorded = queryGeneric({
  args: { id: vWorkId },
  returns: v.union(v.null(), vResult),
  handler: async (ctx, { id }): Promise<RunResult | null> => {
    const row = await ctx.db
      .query("completions")
      .withIndex("by_workId", (q) => q.eq("workId", id))
      .unique();
    return row === null ? null : (row.result as RunResult);
  },
});

/** The same through the older names of the result validator. */
export const recordedLegacy = queryGeneric({
  args: { id: vWorkId },
  returns: v.object({
    a: v.union(v.null(), resultValidator),
    b: v.union(v.null(), vResultValidator),
  }),
  handler: async (ctx, { id }) => {
    const row = await ctx.db
      .query("completions")
      .withIndex("by_workId", (q) => q.eq("workId", id))
      .unique();
    return { a: row?.result ?? null, b: row?.result ?? null };
  },
});

/**
 * Type-level checks of the peer's generics (never run): what must compile and what must not, for
 * this package and for the peer alike.
 */
async function typeChecks(ctx: GenericMutationCtx<GenericDataModel>, id: WorkId) {
  const options: EnqueueOptions<{ label: string }, number> = {
    onComplete: internal.parityJobs.doubled,
    context: { label: "x" },
    onCompleteExcludeKinds: ["canceled", "failed"],
    runAfter: 5,
  };
  await pool.enqueueAction(ctx, internal.parityJobs.double, { n: 1 }, options);
  const args: OnCompleteArgs<{ label: string }, number> = {
    workId: id,
    context: { label: "x" },
    result: { kind: "success", returnValue: 2 },
  };
  void args;
  const wantsNumber = { onComplete: internal.parityJobs.doubled, context: { label: "x" } };
  // @ts-expect-error `label` returns a string; `doubled` wants a number
  await pool.enqueueMutation(ctx, internal.parityJobs.label, { n: 1 }, wantsNumber);
  const wrongContext = { onComplete: internal.parityJobs.doubled, context: { label: 5 } };
  // @ts-expect-error `doubled` wants `{ label: string }`
  await pool.enqueueAction(ctx, internal.parityJobs.double, { n: 1 }, wrongContext);
  const both = { runAt: 1, runAfter: 1 };
  // @ts-expect-error at most one of runAt and runAfter
  await pool.enqueueQuery(ctx, internal.parityJobs.lookup, { n: 1 }, both);
  const notAKind = { onCompleteExcludeKinds: ["done"] as const };
  // @ts-expect-error not a result kind
  await pool.enqueueQuery(ctx, internal.parityJobs.lookup, { n: 1 }, notAKind);
  // @ts-expect-error mutations take no `retry`
  await pool.enqueueMutation(ctx, internal.parityJobs.label, { n: 1 }, { retry: true });
  const anyContext = { onComplete: internal.parityJobs.anything, context: null };
  await enqueue(
    components.workpool,
    ctx,
    "query",
    internal.parityJobs.lookup,
    { n: 1 },
    anyContext,
  );
  const status = await pool.status(ctx, id);
  if (status.state === "finished") {
    // @ts-expect-error a finished status carries nothing else (exactly the peer's shape)
    void status.result;
  } else {
    const attempts: number = status.previousAttempts;
    void attempts;
  }
}
void typeChecks;
