// The test app's use of the pool: mutations that enqueue, cancel and read status through the client.
import { anyApi, componentsGeneric, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool, type WorkId, type WorkpoolComponent } from "../../src/client/index.js";

export const components = componentsGeneric() as unknown as { workpool: WorkpoolComponent };

function pool(options: any) {
  return new Workpool(components.workpool, options ?? {});
}

const vKind = v.union(v.literal("action"), v.literal("mutation"), v.literal("query"));

function jobRef(kind: "action" | "mutation" | "query") {
  return anyApi.jobs[kind];
}

function onCompleteRef(name: string | undefined) {
  return name === undefined ? undefined : anyApi.jobs[name];
}

/** Enqueues one job per element of `argsList` (singly, or as a batch when `batch`). */
export const enqueue = mutationGeneric({
  args: {
    kind: vKind,
    argsList: v.array(v.any()),
    batch: v.optional(v.boolean()),
    poolOptions: v.optional(v.any()),
    options: v.optional(v.any()),
    onComplete: v.optional(v.string()),
  },
  handler: async (ctx, { kind, argsList, batch, poolOptions, options, onComplete }) => {
    const p = pool(poolOptions);
    const opts = { ...options, onComplete: onCompleteRef(onComplete) };
    if (batch) {
      if (kind === "action") return await p.enqueueActionBatch(ctx, jobRef(kind), argsList, opts);
      if (kind === "mutation")
        return await p.enqueueMutationBatch(ctx, jobRef(kind), argsList, opts);
      return await p.enqueueQueryBatch(ctx, jobRef(kind), argsList, opts);
    }
    const ids: WorkId[] = [];
    for (const args of argsList) {
      if (kind === "action") ids.push(await p.enqueueAction(ctx, jobRef(kind), args, opts));
      else if (kind === "mutation")
        ids.push(await p.enqueueMutation(ctx, jobRef(kind), args, opts));
      else ids.push(await p.enqueueQuery(ctx, jobRef(kind), args, opts));
    }
    return ids;
  },
});

export const cancel = mutationGeneric({
  args: { id: v.string(), poolOptions: v.optional(v.any()) },
  handler: async (ctx, { id, poolOptions }) => {
    await pool(poolOptions).cancel(ctx, id as WorkId);
  },
});

export const cancelAll = mutationGeneric({
  args: { limit: v.optional(v.number()) },
  handler: async (ctx, { limit }) => {
    await pool({}).cancelAll(ctx, { limit });
  },
});

export const status = queryGeneric({
  args: { id: v.string() },
  handler: async (ctx, { id }) => await pool({}).status(ctx, id as WorkId),
});

export const statusBatch = queryGeneric({
  args: { ids: v.array(v.string()) },
  handler: async (ctx, { ids }) => await pool({}).statusBatch(ctx, ids as WorkId[]),
});

export const updateConfig = mutationGeneric({
  args: { maxParallelism: v.optional(v.number()) },
  handler: async (ctx, args) => {
    await ctx.runMutation(components.workpool.config.update, args);
  },
});
