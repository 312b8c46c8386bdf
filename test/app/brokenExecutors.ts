// Executors that fail, for the specs of bounded time for a broken executor (test/executorFaults.test.ts).
import { actionGeneric, anyApi, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool, type WorkId } from "../../src/client/index.js";
import { components } from "./pool.js";
import { probe } from "./probe.js";

const pool = (options?: object) => new Workpool(components.workpool, options ?? {});

/** How many times `brokenExec` ran. */
export const brokenRuns = { count: 0 };

/** An "executor" that fails before its first report: stands in for an executor function a deploy
 * removed or renamed while its tasks waited, or one that crashes as it starts. */
export const brokenExec = actionGeneric({
  args: { executorId: v.string() },
  handler: async (): Promise<null> => {
    brokenRuns.count++;
    throw new Error("the executor failed as it started");
  },
});

/** Enqueues one task of `brokenExec`, with `options` (a retry policy), by a pool of
 * `poolOptions` (the model test's own, so that its config stays as it set it). */
export const enqueueBroken = mutationGeneric({
  args: { options: v.optional(v.any()), poolOptions: v.optional(v.any()) },
  handler: async (ctx, { options, poolOptions }): Promise<WorkId> =>
    await pool(poolOptions).enqueueTask(
      ctx,
      anyApi.brokenExecutors.brokenExec,
      "work",
      { key: "b" },
      {
        ...options,
        onComplete: anyApi.jobs.onComplete,
      },
    ),
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `zeros` zeros in arrays of at most 8,000: small as JSON, nine bytes a number as Convex counts. */
function zerosOf(zeros: number): number[][] {
  const out: number[][] = [];
  for (let left = zeros; left > 0; left -= 8_000) {
    out.push(new Array<number>(Math.min(8_000, left)).fill(0));
  }
  return out;
}

/** An executor of five whose task may return a value the pool cannot store (`zeros`). */
export const zerosExec = pool().executor({
  concurrency: 5,
  tasks: {
    work: {
      args: { key: v.string(), ms: v.optional(v.number()), zeros: v.optional(v.number()) },
      timeoutMs: 60_000,
      handler: async (_ctx, { key, ms, zeros }): Promise<unknown> => {
        probe.enter(key);
        try {
          if (ms) await sleep(ms);
          return zeros ? zerosOf(zeros) : key;
        } finally {
          probe.exit(key);
        }
      },
    },
  },
});

/** Enqueues tasks of `zerosExec` in one batch. */
export const enqueueZeros = mutationGeneric({
  args: { argsList: v.array(v.any()) },
  handler: async (ctx, { argsList }): Promise<WorkId[]> =>
    await pool().enqueueTaskBatch(ctx, anyApi.brokenExecutors.zerosExec, "work", argsList, {
      onComplete: anyApi.jobs.onComplete,
    }),
});
