// The test app's side of the chaos programs (test/model.test.ts on test/deployment.ts): jobs whose
// arguments, return values and error messages or data are as large, as deep and of the form
// drawn (text, or arrays of integers, floats or bigints), an onComplete recorder that keeps digests
// of large or deep values (its own row must stay under Convex's document limits whatever the pool
// hands it), and enqueues of many jobs in one mutation, each due at its own time.
import {
  actionGeneric,
  anyApi,
  internalMutationGeneric,
  mutationGeneric,
  queryGeneric,
} from "convex/server";
import { ConvexError, convexToJson, v, type Value } from "convex/values";
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
  /** Return a value of this many bytes as Convex counts them (else the key). */
  returnBytes: v.optional(v.number()),
  /** The form of the return value and of a failure's data (`valueOf`; default "text"). */
  form: v.optional(v.string()),
  /** Return a value this deep instead (`nestedOf`). */
  returnDepth: v.optional(v.number()),
  /** Return `{ [returnFieldName]: key }`: a value under a field name Convex refuses. */
  returnFieldName: v.optional(v.string()),
  /** A failing attempt throws a ConvexError whose data is `{ [errorFieldName]: key }`. */
  errorFieldName: v.optional(v.string()),
  /** Ignored: makes the arguments as large (text or numbers) and as deep as wanted. */
  pad: v.optional(v.any()),
  deep: v.optional(v.any()),
};

/** Elements of one array `valueOf` makes: under Convex's 8,192. */
const CHUNK = 8_000;

/** A value of about `bytes` bytes as Convex counts them (getConvexSize), of the form drawn:
 * `char` repeated, or arrays of numbers (9 bytes each) in chunks of CHUNK. */
export function valueOf(form: string | undefined, bytes: number, char = "r"): unknown {
  if (form === undefined || form === "text") return char.repeat(bytes);
  const count = Math.max(1, Math.floor(bytes / 9));
  const element = (i: number) =>
    form === "ints" ? i % 10 : form === "floats" ? i + 0.123456789 : BigInt(i) * 1_000_003n;
  const chunks: unknown[][] = [];
  for (let at = 0; at < count; at += CHUNK) {
    chunks.push(Array.from({ length: Math.min(CHUNK, count - at) }, (_, i) => element(at + i)));
  }
  return chunks;
}

/** A value `depth` levels deep (arrays and objects in turn, a number at the bottom). */
export function nestedOf(depth: number): unknown {
  let value: unknown = 7;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { d: value };
  return value;
}

export type Behavior = {
  key: string;
  failTimes?: number;
  nonRetryable?: boolean;
  snoozeTimes?: number;
  snoozeMs?: number;
  errorBytes?: number;
  returnBytes?: number;
  form?: string;
  returnDepth?: number;
  returnFieldName?: string;
  errorFieldName?: string;
};

/** The error message of a failing attempt: its words, padded to `bytes`. */
export function errorMessageOf(key: string, attempt: number, bytes = 0): string {
  const words = `job ${key} failed attempt ${attempt}`;
  return words.length >= bytes ? words : `${words} ${"e".repeat(bytes - words.length - 1)}`;
}

/** Runs the behavior of run `run` (1-based): snooze, fail, or return. A failure whose form is
 * not text throws a ConvexError carrying its bytes as data (numbers, 9 bytes each). */
export function behave(run: number, b: Behavior): unknown {
  const snoozeTimes = b.snoozeTimes ?? 0;
  if (run <= snoozeTimes) throw new SnoozeError(b.snoozeMs ?? 0);
  const attempt = run - snoozeTimes;
  if (attempt <= (b.failTimes ?? 0)) {
    if (b.nonRetryable) throw new NonRetryableError(errorMessageOf(b.key, attempt, b.errorBytes));
    if (b.errorFieldName !== undefined) {
      throw new ConvexError({ [b.errorFieldName]: errorMessageOf(b.key, attempt) });
    }
    if (b.form === undefined || b.form === "text" || !b.errorBytes) {
      throw new Error(errorMessageOf(b.key, attempt, b.errorBytes));
    }
    throw new ConvexError({
      message: errorMessageOf(b.key, attempt),
      data: valueOf(b.form, b.errorBytes) as Value,
    });
  }
  if (b.returnFieldName !== undefined) return { [b.returnFieldName]: b.key };
  if (b.returnDepth !== undefined) return nestedOf(b.returnDepth);
  return b.returnBytes === undefined ? b.key : valueOf(b.form, b.returnBytes);
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

/** Levels of a value `digest` keeps: the recorder's row holds the result two levels down. */
const DIGEST_DEPTH = 8;
/** Elements of an array `digest` keeps. */
const DIGEST_ELEMENTS = 64;

/** A value with every string longer than 256 characters replaced by its length, head and tail,
 * every array longer than DIGEST_ELEMENTS by its length and head, and whatever lies deeper than
 * DIGEST_DEPTH by its JSON's length. */
export function digest(value: unknown, level = 0): unknown {
  if (typeof value === "string") {
    if (value.length <= 256) return value;
    return { digestOf: value.length, head: value.slice(0, 64), tail: value.slice(-200) };
  }
  if (typeof value !== "object" || value === null) return value;
  if (level >= DIGEST_DEPTH) {
    return { deepDigestOf: JSON.stringify(convexToJson(value as Value)).length };
  }
  if (Array.isArray(value)) {
    const kept = value.slice(0, DIGEST_ELEMENTS).map((x) => digest(x, level + 1));
    return value.length <= DIGEST_ELEMENTS ? kept : { arrayOf: value.length, head: kept };
  }
  return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, digest(x, level + 1)]));
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

/** Pauses (or resumes) the pool keys `${prefix}${from}` up to `${prefix}${to - 1}` in this one
 * mutation: many keys paused at once. */
export const pauseKeys = mutationGeneric({
  args: { prefix: v.string(), from: v.number(), to: v.number(), resume: v.boolean() },
  handler: async (ctx, { prefix, from, to, resume }) => {
    const pool = new Workpool(components.workpool, {});
    for (let i = from; i < to; i++) {
      if (resume) await pool.resume(ctx, { key: `${prefix}${i}` });
      else await pool.pause(ctx, { key: `${prefix}${i}` });
    }
  },
});

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
    /** The first job's index (a bulk enqueued in several mutations): job i is named, keyed and
     * delayed as the i-th of one bulk. */
    from: v.optional(v.number()),
    prefix: v.string(),
    firstDelayMs: v.number(),
    spacingMs: v.number(),
    /** Every job fails its (one) attempt with a message of this many bytes. */
    failWithBytes: v.optional(v.number()),
    /** Every job returns a value of this form and size (`valueOf`). */
    returns: v.optional(v.object({ form: v.string(), bytes: v.number() })),
    poolOptions: v.optional(v.any()),
    onComplete: v.optional(v.string()),
    /** Job i runs under the pool key `${poolKeyPrefix}${i}`, if given. */
    poolKeyPrefix: v.optional(v.string()),
    /** Every job's return value, its failure's data (one failing attempt) or its arguments hold
     * this field name (one Convex refuses, the test's draw). */
    fieldName: v.optional(
      v.object({
        where: v.union(v.literal("args"), v.literal("result"), v.literal("errorData")),
        name: v.string(),
      }),
    ),
  },
  handler: async (ctx, args) => {
    probe.markEnqueue();
    const { kind, n, prefix, firstDelayMs, spacingMs, failWithBytes, poolOptions } = args;
    const named = args.fieldName;
    const pool = new Workpool(components.workpool, poolOptions ?? {});
    const ids: WorkId[] = [];
    const from = args.from ?? 0;
    for (let i = from; i < from + n; i++) {
      const key = `${prefix}${i}`;
      const options = {
        runAfter: firstDelayMs + i * spacingMs,
        onComplete: onCompleteRef(args.onComplete),
        context: { key },
        ...(args.poolKeyPrefix === undefined ? {} : { key: `${args.poolKeyPrefix}${i}` }),
      };
      const fails = failWithBytes === undefined ? {} : { failTimes: 1, errorBytes: failWithBytes };
      const returns =
        args.returns === undefined
          ? {}
          : { form: args.returns.form, returnBytes: args.returns.bytes };
      const refused =
        named === undefined
          ? {}
          : named.where === "args"
            ? { [named.name]: 1 }
            : named.where === "result"
              ? { returnFieldName: named.name }
              : { failTimes: 1, errorFieldName: named.name };
      ids.push(
        await enqueueOne(ctx, pool, kind, { key, ...fails, ...returns, ...refused }, options),
      );
    }
    return ids;
  },
});
