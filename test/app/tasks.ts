// The test app's executor: tasks whose behaviour the args choose, and mutations that enqueue them.
import { anyApi, componentsGeneric, mutationGeneric } from "convex/server";
import { ConvexError, v, type Value } from "convex/values";
import { Workpool, type WorkId, type WorkpoolComponent } from "../../src/client/index.js";
import { behave, vBehavior } from "./chaos.js";
import { onCompleteRef } from "./pool.js";
import { probe } from "./probe.js";

const components = componentsGeneric() as unknown as { workpool: WorkpoolComponent };
const pool = (options?: object) => new Workpool(components.workpool, options ?? {});

/** What a task saw of its signal: aborted, and why, per job key. */
export const signals = new Map<string, string>();

/** One run of the model test's task (virtual ms): when it started and ended, and when its signal
 * aborted. */
export type TaskRun = {
  start: number;
  end?: number;
  abortedAt?: number;
  /** Its task's timeoutMs, if not MODEL_TASK_TIMEOUT_MS (past it the run is abandoned). */
  timeoutMs?: number;
};
/** The model test's task runs, per job key, in order. */
export const taskRuns = new Map<string, TaskRun[]>();

/** Records a run of `key` starting now in `taskRuns`, and when (and why) its signal aborts; the
 * caller sets its `end`. */
function recordRun(key: string, signal: AbortSignal, timeoutMs?: number): TaskRun {
  const record: TaskRun = { start: Date.now(), ...(timeoutMs === undefined ? {} : { timeoutMs }) };
  taskRuns.set(key, [...(taskRuns.get(key) ?? []), record]);
  signal.addEventListener("abort", () => {
    signals.set(key, String(signal.reason));
    record.abortedAt = Date.now();
  });
  return record;
}

/** Waits `ms`, or until `signal` aborts (then rejects with its reason). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

export const run = pool().executor({
  concurrency: 5,
  tasks: {
    io: {
      args: {
        key: v.string(),
        ms: v.optional(v.number()),
        /** The first `failTimes` attempts throw. */
        failTimes: v.optional(v.number()),
        /** Ignore the signal: run the full `ms` even when aborted. */
        ignoreSignal: v.optional(v.boolean()),
        /** Never settle. */
        hang: v.optional(v.boolean()),
        /** Return a value Convex cannot store. */
        badReturn: v.optional(v.boolean()),
        /** A failing attempt throws `new ConvexError(errorData)`. */
        errorData: v.optional(v.any()),
        /** A failing attempt throws a plain Error carrying the non-retryable marker. */
        markedError: v.optional(v.boolean()),
        returnBytes: v.optional(v.number()),
        value: v.optional(v.any()),
      },
      timeoutMs: 60_000,
      handler: async (_ctx, args, { signal, attempt }): Promise<unknown> => {
        probe.enter(args.key);
        signal.addEventListener("abort", () => signals.set(args.key, String(signal.reason)));
        try {
          if (args.hang) await new Promise(() => {});
          if (args.ms) await sleep(args.ms, args.ignoreSignal ? undefined : signal);
          if (attempt < (args.failTimes ?? 0)) {
            const message = `task ${args.key} failed attempt ${attempt + 1}`;
            if (args.errorData !== undefined) throw new ConvexError(args.errorData as Value);
            if (args.markedError) {
              throw Object.assign(new Error(message), { __convexWorkpoolNonRetryable: true });
            }
            throw new Error(message);
          }
          if (args.badReturn) return { when: new Map() };
          if (args.returnBytes !== undefined) return "r".repeat(args.returnBytes);
          return args.value ?? args.key;
        } finally {
          probe.exit(args.key);
        }
      },
    },
    quick: {
      args: { key: v.string() },
      timeoutMs: 1_000,
      handler: async (_ctx, { key }, { signal }): Promise<string> => {
        probe.enter(key);
        signal.addEventListener("abort", () => signals.set(key, String(signal.reason)));
        try {
          await sleep(5_000, signal);
          return key;
        } finally {
          probe.exit(key);
        }
      },
    },
    throwsAtOnce: {
      args: {},
      handler: ((): Promise<string> => {
        throw new Error("thrown before any await");
      }) as () => Promise<string>,
    },
  },
});

/** A wide executor: 20 tasks at once, each returning `bytes` bytes (900 KB: past what a report may
 * carry with others, so each is reported, and stored aside, on its own). */
export const wide = pool().executor({
  concurrency: 20,
  tasks: {
    big: {
      /** `ballast`: args as large as a test wants (stored aside past 8 KiB), unread. */
      args: { key: v.string(), bytes: v.number(), ballast: v.optional(v.string()) },
      handler: async (_ctx, { key, bytes }): Promise<string> => {
        probe.enter(key);
        try {
          await sleep(500);
          return key.padEnd(bytes, ".");
        } finally {
          probe.exit(key);
        }
      },
    },
  },
});

/** Enqueues `big` tasks of the wide executor, as one batch (each with `ballastBytes` of args). */
export const enqueueBig = mutationGeneric({
  args: { keys: v.array(v.string()), bytes: v.number(), ballastBytes: v.optional(v.number()) },
  handler: async (ctx, { keys, bytes, ballastBytes }) => {
    const ballast = ballastBytes === undefined ? {} : { ballast: "b".repeat(ballastBytes) };
    const args = keys.map((key) => ({ key, bytes, ...ballast }));
    const options = { onComplete: anyApi.jobs.onComplete };
    return await pool({ maxParallelism: 20 }).enqueueTaskBatch(
      ctx,
      anyApi.tasks.wide,
      "big",
      args,
      options,
    );
  },
});

/** The longest one run of the model test's task may take: the model draws runs of up to 3 s, and
 * a failing attempt that times out runs a second past it (test/model.test.ts). */
export const MODEL_TASK_TIMEOUT_MS = 4_000;

/**
 * The model test's executor (test/model.test.ts): its one task behaves as the chaos programs' jobs
 * do (test/app/chaos.ts `behave`: snoozes, failures, sizes), run `ms` long, and, for tasks, times
 * out or ignores a cancel when told. Three tasks at once, so that a pool's ten slots spread over
 * several executors and one that dies takes only some of the tasks in flight with it.
 */
export const model = pool().executor({
  concurrency: 3,
  tasks: {
    job: {
      args: {
        ...vBehavior,
        /** The failing attempts run past the timeout (and end when their signal aborts) instead
         * of throwing: they fail as timed out, and are retried whatever `nonRetryable` says. */
        timesOut: v.optional(v.boolean()),
        /** Run the full `ms` even when the signal aborts (a cancel then waits for the handler). */
        ignoresCancel: v.optional(v.boolean()),
      },
      timeoutMs: MODEL_TASK_TIMEOUT_MS,
      handler: async (_ctx, args, { signal }): Promise<unknown> => {
        const { timesOut, ignoresCancel, ...b } = args;
        const run = probe.enter(b.key);
        const record = recordRun(b.key, signal);
        try {
          const attempt = run - (b.snoozeTimes ?? 0);
          if (timesOut && attempt >= 1 && attempt <= (b.failTimes ?? 0)) {
            await sleep(MODEL_TASK_TIMEOUT_MS + 1_000, signal);
          } else if (b.ms) {
            await sleep(b.ms, ignoresCancel ? undefined : signal);
          }
          return behave(run, b);
        } finally {
          record.end = Date.now();
          probe.exit(b.key);
        }
      },
    },
  },
});

/** The model test's enqueue of `job` tasks of `model`: one per element of `argsList`, singly or
 * as one batch (sharing `options`), with the onComplete named as test/app/pool.ts names them. */
export const enqueueModel = mutationGeneric({
  args: {
    kind: v.literal("task"),
    argsList: v.array(v.any()),
    batch: v.optional(v.boolean()),
    poolOptions: v.optional(v.any()),
    options: v.optional(v.any()),
    onComplete: v.optional(v.string()),
  },
  handler: async (ctx, { argsList, batch, poolOptions, options, onComplete }) => {
    probe.markEnqueue();
    const p = pool(poolOptions);
    const opts = { ...options, onComplete: onCompleteRef(onComplete) };
    if (batch) return await p.enqueueTaskBatch(ctx, anyApi.tasks.model, "job", argsList, opts);
    const ids: WorkId[] = [];
    for (const args of argsList) {
      ids.push(await p.enqueueTask(ctx, anyApi.tasks.model, "job", args, opts));
    }
    return ids;
  },
});

/** Enqueues one `io` task per element of `argsList` (singly, or as a batch when `batch`). */
export const enqueueIo = mutationGeneric({
  args: {
    argsList: v.array(v.any()),
    batch: v.optional(v.boolean()),
    poolOptions: v.optional(v.any()),
    options: v.optional(v.any()),
    task: v.optional(v.string()),
  },
  handler: async (ctx, { argsList, batch, poolOptions, options, task }) => {
    const p = pool(poolOptions);
    const opts = { ...options, onComplete: anyApi.jobs.onComplete, context: options?.context };
    // `task` lets a test name a task the executor lacks (the types allow only known names).
    const name = (task ?? "io") as "io";
    if (batch) return await p.enqueueTaskBatch(ctx, anyApi.tasks.run, name, argsList, opts);
    const ids: WorkId[] = [];
    for (const args of argsList) {
      ids.push(await p.enqueueTask(ctx, anyApi.tasks.run, name, args, opts));
    }
    return ids;
  },
});

/** A report for `workId`'s attempt `attempt`, as a stale executor would send it (one that is not
 * known to the pool). */
export const lateReport = mutationGeneric({
  args: { workId: v.string(), attempt: v.number() },
  handler: async (ctx, { workId, attempt }) => {
    await ctx.runMutation(components.workpool.runners.executor.report, {
      executorId: "not-an-executor",
      outcomes: [{ workId, attempt, result: { kind: "success", returnValue: "late" } }],
    });
  },
});

/** The slow executor's task time limit: 5 minutes, so that an executor (9 minutes) takes tasks only
 * in its first 4 and reaches its time limit with tasks of its function still waiting. */
export const SLOW_TASK_TIMEOUT_MS = 5 * 60_000;

/**
 * The model test's slow executor (chaos programs' `slowTasks`): two tasks at once, each sleeping
 * its `ms` (minutes), recorded in `taskRuns` like the model's, so that the model's checks of
 * handlers (at most maxParallelism at once, none started after a pause) cover them.
 */
export const slow = pool().executor({
  concurrency: 2,
  tasks: {
    long: {
      args: { key: v.string(), ms: v.number() },
      timeoutMs: SLOW_TASK_TIMEOUT_MS,
      handler: async (_ctx, { key, ms }, { signal }): Promise<string> => {
        const record = recordRun(key, signal, SLOW_TASK_TIMEOUT_MS);
        try {
          await sleep(ms, signal);
          return key;
        } finally {
          record.end = Date.now();
        }
      },
    },
  },
});

/** Enqueues `long` tasks of the slow executor as one batch, by a pool of `poolOptions` (the model
 * test's own), each reporting to the plain onComplete recorder, under `poolKey` if given. */
export const enqueueSlow = mutationGeneric({
  args: {
    argsList: v.array(v.object({ key: v.string(), ms: v.number() })),
    poolOptions: v.optional(v.any()),
    /** A pool key for them all (one at a time, by default), or none. */
    poolKey: v.optional(v.string()),
  },
  handler: async (ctx, { argsList, poolOptions, poolKey }) => {
    probe.markEnqueue();
    return await pool(poolOptions).enqueueTaskBatch(ctx, anyApi.tasks.slow, "long", argsList, {
      onComplete: anyApi.jobs.onComplete,
      ...(poolKey === undefined ? {} : { key: poolKey }),
    });
  },
});
