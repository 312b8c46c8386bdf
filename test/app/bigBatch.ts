// Batches whose total size is far above one transaction's write limit (test/batchBytes.test.ts): the
// client must split them into component calls by bytes as well as by count.
import {
  actionGeneric,
  anyApi,
  createFunctionHandle,
  internalActionGeneric,
  mutationGeneric,
} from "convex/server";
import { v } from "convex/values";
import { enqueueBatch, Workpool, type WorkId } from "../../src/client/index.js";
import { components } from "./pool.js";

/** A job that carries a big blob and returns only its key. */
export const sink = internalActionGeneric({
  args: { key: v.string(), blob: v.string() },
  handler: async (_ctx, { key }) => key,
});

/** The args of job i: key `k<i>` and a blob of `bytes` characters (one byte each). */
function argsList(n: number, bytes: number) {
  return Array.from({ length: n }, (_, i) => ({
    key: `k${i}`,
    blob: String(i % 10).repeat(bytes),
  }));
}

const vBig = {
  n: v.number(),
  bytes: v.number(),
  /** Through the standalone `enqueueBatch` rather than `Workpool.enqueueActionBatch`. */
  standalone: v.optional(v.boolean()),
};

async function enqueueBig(
  ctx: any,
  { n, bytes, standalone }: { n: number; bytes: number; standalone?: boolean },
): Promise<WorkId[]> {
  const options = { onComplete: anyApi.jobs.onComplete, context: { big: true } };
  if (standalone) {
    return await enqueueBatch(
      components.workpool,
      ctx,
      "action",
      anyApi.bigBatch.sink,
      argsList(n, bytes),
      options,
    );
  }
  const pool = new Workpool(components.workpool, { maxParallelism: 10 });
  return await pool.enqueueActionBatch(ctx, anyApi.bigBatch.sink, argsList(n, bytes), options);
}

/** Enqueues `n` jobs of `bytes` bytes each from an action (each component call is a transaction). */
export const fromAction = actionGeneric({
  args: vBig,
  handler: async (ctx, args): Promise<WorkId[]> => await enqueueBig(ctx, args),
});

/** The same from a mutation (all component calls share the mutation's transaction). */
export const fromMutation = mutationGeneric({
  args: vBig,
  handler: async (ctx, args): Promise<WorkId[]> => await enqueueBig(ctx, args),
});

/** The same batch in ONE component call, as a client without the byte split would send it. */
export const unsplitFromAction = actionGeneric({
  args: vBig,
  handler: async (ctx, { n, bytes }) => {
    const fnHandle = await createFunctionHandle(anyApi.bigBatch.sink);
    const items = argsList(n, bytes).map((fnArgs) => ({
      fnHandle,
      fnName: "bigBatch:sink",
      fnArgs,
      fnType: "action" as const,
    }));
    return await ctx.runMutation(components.workpool.lib.enqueueBatch, { items, config: {} });
  },
});
