// The test app's use of the pool: mutations that enqueue, cancel and read status through the client.
import {
  anyApi,
  componentsGeneric,
  createFunctionHandle,
  mutationGeneric,
  queryGeneric,
} from "convex/server";
import { v } from "convex/values";
import { vStatus, Workpool, type WorkId, type WorkpoolComponent } from "../../src/client/index.js";
import { probe } from "./probe.js";

export const components = componentsGeneric() as unknown as { workpool: WorkpoolComponent };

function pool(options: any) {
  return new Workpool(components.workpool, options ?? {});
}

const vKind = v.union(v.literal("action"), v.literal("mutation"), v.literal("query"));

function jobRef(kind: "action" | "mutation" | "query") {
  return anyApi.jobs[kind];
}

/** "onComplete" names `jobs.onComplete`; "heavy.onComplete" names a function of another module. */
export function onCompleteRef(name: string | undefined) {
  if (name === undefined) return undefined;
  const [module, fn] = name.includes(".") ? name.split(".") : ["jobs", name];
  return anyApi[module][fn];
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
    /** Job i is due `i * spreadMs` after now (its `runAfter`), one at a time (not with `batch`). */
    spreadMs: v.optional(v.number()),
  },
  handler: async (ctx, { kind, argsList, batch, poolOptions, options, onComplete, spreadMs }) => {
    probe.markEnqueue();
    const p = pool(poolOptions);
    const opts = { ...options, onComplete: onCompleteRef(onComplete) };
    if (spreadMs !== undefined) {
      const ids: WorkId[] = [];
      for (const [i, args] of argsList.entries()) {
        const each = { ...opts, runAfter: i * spreadMs };
        ids.push(await p.enqueueMutation(ctx, jobRef("mutation"), args, each));
      }
      return ids;
    }
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
  // The package's validator of what `status` returns: each status read here is checked by it.
  returns: vStatus,
  handler: async (ctx, { id }) => await pool({}).status(ctx, id as WorkId),
});

export const statusBatch = queryGeneric({
  args: { ids: v.array(v.string()) },
  handler: async (ctx, { ids }) => await pool({}).statusBatch(ctx, ids as WorkId[]),
});

/** Everything retained about a job (`Workpool.info`), or null. */
export const info = queryGeneric({
  args: { id: v.string() },
  handler: async (ctx, { id }) => await pool({}).info(ctx, id as WorkId),
});

export const updateConfig = mutationGeneric({
  args: {
    maxParallelism: v.optional(v.number()),
    fairness: v.optional(v.union(v.literal("share"), v.literal("due"))),
  },
  handler: async (ctx, args) => {
    await ctx.runMutation(components.workpool.config.update, args);
  },
});

// Raw calls for the bad-input catalogue (test/badInput.test.ts): arguments pass through unchecked, so
// the client and the component meet exactly the invalid values a caller could send.

/**
 * Resolves placeholders anywhere in a value: "$ref:jobs.action" becomes a function reference and
 * "$handle:jobs.action" a function handle (neither can cross a function boundary as an argument).
 */
async function resolveRefs(value: unknown): Promise<unknown> {
  if (typeof value === "string" && value.startsWith("$ref:")) {
    const [module, name] = value.slice("$ref:".length).split(".");
    return anyApi[module][name];
  }
  if (typeof value === "string" && value.startsWith("$handle:")) {
    const [module, name] = value.slice("$handle:".length).split(".");
    return await createFunctionHandle(anyApi[module][name]);
  }
  if (Array.isArray(value)) return await Promise.all(value.map(resolveRefs));
  if (typeof value === "object" && value !== null) {
    const entries = await Promise.all(
      Object.entries(value).map(async ([k, x]) => [k, await resolveRefs(x)] as const),
    );
    return Object.fromEntries(entries);
  }
  return value;
}

const vClientCall = {
  /** A Workpool method name, or "constructor" to only construct the pool. */
  method: v.string(),
  poolOptions: v.optional(v.any()),
  /** The method's arguments after `ctx`. */
  args: v.array(v.any()),
};

async function callClientMethod(ctx: any, { method, poolOptions, args }: any) {
  const p = new Workpool(components.workpool, ((await resolveRefs(poolOptions)) as any) ?? {});
  if (method === "constructor") return null;
  return await (p as any)[method](ctx, ...((await resolveRefs(args)) as unknown[]));
}

/** `new Workpool(components.workpool, poolOptions)[method](ctx, ...args)` from a mutation. */
export const callClient = mutationGeneric({
  args: vClientCall,
  handler: async (ctx, args) => {
    probe.markEnqueue(); // a retry() enqueues
    return await callClientMethod(ctx, args);
  },
});

/** `pool.stats(ctx)` with the time the query ran at, as its transaction saw it (the clock `stats`
 * measured `oldestPendingMs` and `lastMinute` by). */
export const statsAt = queryGeneric({
  args: {},
  handler: async (ctx) => ({
    stats: await new Workpool(components.workpool, {}).stats(ctx),
    at: Date.now(),
  }),
});

/** The same from a query (for status and statusBatch). */
export const callClientQuery = queryGeneric({
  args: vClientCall,
  handler: async (ctx, args) => await callClientMethod(ctx, args),
});

const vComponentCall = {
  /** The component function, e.g. "lib.enqueue" or "config.update". */
  fn: v.string(),
  args: v.any(),
};

function componentRef(fn: string) {
  const [module, name] = fn.split(".");
  return (components.workpool as any)[module][name];
}

/** Calls a public component function directly with raw arguments, bypassing the client. */
export const callComponent = mutationGeneric({
  args: vComponentCall,
  handler: async (ctx, { fn, args }) =>
    await ctx.runMutation(componentRef(fn), (await resolveRefs(args)) as any),
});

/** The same for the component's queries (status, statusBatch), from a query. */
export const callComponentQuery = queryGeneric({
  args: vComponentCall,
  handler: async (ctx, { fn, args }) =>
    await ctx.runQuery(componentRef(fn), (await resolveRefs(args)) as any),
});
