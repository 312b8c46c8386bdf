// The test app's side of the chaos programs (test/model.test.ts on test/deployment.ts): jobs whose
// arguments, return values and error messages are as large as drawn, an onComplete recorder that
// keeps digests of large values (its own row must stay under Convex's document limit whatever the
// pool hands it), and enqueues of many jobs in one mutation, each due at its own time.
import {
  actionGeneric,
  anyApi,
  internalMutationGeneric,
  mutationGeneric,
  queryGeneric,
} from "convex/server";
import { v } from "convex/values";
import { NonRetryableError, SnoozeError, Workpool, type WorkId } from "../../src/client/index.js";
import { components } from "./pool.js";
import { probe } from "./probe.js";

export const vBehavior = {
  /** The job's name: the probe counts its runs under it. */
  key: v.string(),
  /** How long the job runs (virtual ms; actions only). */
  ms: v.optional(v.number()),
  /** The first `failTimes` attempts throw. */
  failTimes: v.optional(v.number()),
  /** Throw NonRetryableError instead of a plain error. */
  nonRetryable: v.optional(v.boolean()),
  /** The first `snoozeTimes` runs throw SnoozeError(snoozeMs). */
  snoozeTimes: v.optional(v.number()),
  snoozeMs: v.optional(v.number()),
  /** A failing attempt's error message has this many bytes (at least its own words). */
  errorBytes: v.optional(v.number()),
  /** Return a string of this many bytes (else the key). */
  returnBytes: v.optional(v.number()),
  /** Ignored: makes the arguments as large as wanted. */
  pad: v.optional(v.string()),
};

export type Behavior = {
  key: string;
  failTimes?: number;
  nonRetryable?: boolean;
  snoozeTimes?: number;
  snoozeMs?: number;
  errorBytes?: number;
  returnBytes?: number;
};

/** The error message of a failing attempt: its words, padded to `bytes`. */
export function errorMessageOf(key: string, attempt: number, bytes = 0): string {
  const words = `job ${key} failed attempt ${attempt}`;
  return words.length >= bytes ? words : `${words} ${"e".repeat(bytes - words.length - 1)}`;
}

/** Runs the behavior of run `run` (1-based): snooze, fail, or return. */
export function behave(run: number, b: Behavior): string {
  const snoozeTimes = b.snoozeTimes ?? 0;
  if (run <= snoozeTimes) throw new SnoozeError(b.snoozeMs ?? 0);
  const attempt = run - snoozeTimes;
  if (attempt <= (b.failTimes ?? 0)) {
    const message = errorMessageOf(b.key, attempt, b.errorBytes);
    throw b.nonRetryable ? new NonRetryableError(message) : new Error(message);
  }
  return b.returnBytes === undefined ? b.key : "r".repeat(b.returnBytes);
}

export const action = actionGeneric({
  args: vBehavior,
  handler: async (_ctx, b) => {
    const run = probe.enter(b.key);
    try {
      if (b.ms) await new Promise((resolve) => setTimeout(resolve, b.ms));
      return behave(run, b);
    } finally {
      probe.exit(b.key);
    }
  },
});

export const mutation = mutationGeneric({
  args: vBehavior,
  handler: async (ctx, b) => {
    const run = probe.enter(b.key);
    try {
      await ctx.db.insert("effects", { key: b.key, value: null });
      return behave(run, b);
    } finally {
      probe.exit(b.key);
    }
  },
});

export const query = queryGeneric({
  args: vBehavior,
  handler: async (_ctx, b) => {
    const run = probe.enter(b.key);
    try {
      return behave(run, b);
    } finally {
      probe.exit(b.key);
    }
  },
});

/** A value with every string longer than 256 characters replaced by its length, head and tail. */
export function digest(value: unknown): unknown {
  if (typeof value === "string") {
    if (value.length <= 256) return value;
    return { digestOf: value.length, head: value.slice(0, 64), tail: value.slice(-200) };
  }
  if (Array.isArray(value)) return value.map(digest);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, digest(x)]));
  }
  return value;
}

/** onComplete: records a digest of what it received (`completions`, like `jobs.onComplete`). */
export const onComplete = internalMutationGeneric({
  args: { workId: v.string(), context: v.optional(v.any()), result: v.any() },
  handler: async (ctx, { workId, context, result }) => {
    await ctx.db.insert("completions", {
      workId,
      context: digest(context),
      result: digest(result),
    });
  },
});

const vKind = v.union(v.literal("action"), v.literal("mutation"), v.literal("query"));
/** Bulk enqueues may also be of tasks: `job` tasks of the model test's executor (the model
 * enqueues its other tasks through test/app/tasks.ts `enqueueModel`). */
const vSpreadKind = v.union(vKind, v.literal("task"));
type Kind = "action" | "mutation" | "query" | "task";

/** "chaos.onComplete" or "heavy.onComplete": a reference to that function. */
function onCompleteRef(name: string | undefined) {
  if (name === undefined) return undefined;
  const [module, fn] = name.split(".");
  return anyApi[module][fn];
}

async function enqueueOne(
  ctx: any,
  pool: Workpool,
  kind: Kind,
  args: Record<string, unknown>,
  options: Record<string, unknown>,
): Promise<WorkId> {
  if (kind === "task") return await pool.enqueueTask(ctx, anyApi.tasks.model, "job", args, options);
  const fn = anyApi.chaos[kind];
  if (kind === "action") return await pool.enqueueAction(ctx, fn, args, options);
  if (kind === "mutation") return await pool.enqueueMutation(ctx, fn, args, options);
  return await pool.enqueueQuery(ctx, fn, args, options);
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
    probe.markEnqueue();
    const pool = new Workpool(components.workpool, poolOptions ?? {});
    const opts = { ...options, onComplete: onCompleteRef(onComplete) };
    if (batch) {
      const fn = anyApi.chaos[kind];
      if (kind === "action") return await pool.enqueueActionBatch(ctx, fn, argsList, opts);
      if (kind === "mutation") return await pool.enqueueMutationBatch(ctx, fn, argsList, opts);
      return await pool.enqueueQueryBatch(ctx, fn, argsList, opts);
    }
    const ids: WorkId[] = [];
    for (const args of argsList) ids.push(await enqueueOne(ctx, pool, kind, args, opts));
    return ids;
  },
});

/**
 * Enqueues `n` jobs in this one mutation, one by one, job i (named `${prefix}${i}`) due
 * `firstDelayMs + i * spacingMs` from now: many due times, so many segments, in one transaction.
 */
export const enqueueSpread = mutationGeneric({
  args: {
    kind: vSpreadKind,
    n: v.number(),
    prefix: v.string(),
    firstDelayMs: v.number(),
    spacingMs: v.number(),
    /** Every job fails its (one) attempt with a message of this many bytes. */
    failWithBytes: v.optional(v.number()),
    poolOptions: v.optional(v.any()),
    onComplete: v.optional(v.string()),
  },
  handler: async (ctx, args) => {
    probe.markEnqueue();
    const { kind, n, prefix, firstDelayMs, spacingMs, failWithBytes, poolOptions } = args;
    const pool = new Workpool(components.workpool, poolOptions ?? {});
    const ids: WorkId[] = [];
    for (let i = 0; i < n; i++) {
      const key = `${prefix}${i}`;
      const options = {
        runAfter: firstDelayMs + i * spacingMs,
        onComplete: onCompleteRef(args.onComplete),
        context: { key },
      };
      const fails = failWithBytes === undefined ? {} : { failTimes: 1, errorBytes: failWithBytes };
      ids.push(await enqueueOne(ctx, pool, kind, { key, ...fails }, options));
    }
    return ids;
  },
});
