// Executors that fail, for the specs of bounded time for a broken executor (test/executorFaults.test.ts).
import { actionGeneric, anyApi, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool, type WorkId } from "../../src/client/index.js";
import { components } from "./pool.js";

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

/** Enqueues one task of `brokenExec`, with `options` (a retry policy). */
export const enqueueBroken = mutationGeneric({
  args: { options: v.optional(v.any()) },
  handler: async (ctx, { options }): Promise<WorkId> =>
    await pool().enqueueTask(
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
