/**
 * Workers: the functions the loop schedules to run one attempt of a job. They run user code and report
 * the attempt's outcome — actions through the `complete` mutation (called directly, or, if that
 * fails, scheduled: Convex runs a scheduled mutation exactly once), mutations and queries in their
 * own transaction. A return value too large to record becomes a failure that names its size. They write only `pendingCompletion` (and a payload for a large return value); they never
 * decide retries and never change a job's state.
 */
import { v } from "convex/values";
import type { FunctionHandle } from "convex/server";
import { internal } from "../_generated/api.js";
import { internalAction, internalMutation, internalQuery } from "../_generated/server.js";
import { recordCompletion } from "../mainLoop/complete.js";
import { attemptFailure, attemptSuccess } from "../model/outcomes.js";
import type { AttemptResult } from "../model/validators.js";

/** How many times an action worker tries to hand its report to the scheduler (after the direct
 * call failed) before it gives up and fails, leaving the attempt to recovery. */
export const REPORT_ATTEMPTS = 3;
/** The wait between those tries, doubled each time. */
export const REPORT_RETRY_MS = 100;
/** The largest return value the pool keeps (model/outcomes.ts). */
export { MAX_RETURN_VALUE_BYTES } from "../model/outcomes.js";

/** What the loop hands a runner for one attempt of a job: a worker's args, an action runner's
 * batch entries (runners/actionRunner.ts). */
export const vWorkerArgs = {
  workId: v.id("work"),
  /** The run's number (`runNumber`: attempts and snoozes so far, plus one), echoed in its report. */
  attempt: v.number(),
  fnHandle: v.string(),
  /** The arguments when small; otherwise read from `payloadId`. */
  fnArgs: v.optional(v.any()),
  payloadId: v.optional(v.id("payloads")),
};

/** Reads large arguments for an action worker (actions have no database). */
export const loadArgs = internalQuery({
  args: { payloadId: v.id("payloads") },
  returns: v.any(),
  handler: async (ctx, { payloadId }) => (await ctx.db.get("payloads", payloadId))?.fnArgs ?? {},
});

export const runAction = internalAction({
  args: vWorkerArgs,
  returns: v.null(),
  handler: async (ctx, { workId, attempt, fnHandle, fnArgs, payloadId }) => {
    let result: AttemptResult;
    try {
      const args = payloadId
        ? await ctx.runQuery(internal.runners.worker.loadArgs, { payloadId })
        : fnArgs;
      result = attemptSuccess(
        await ctx.runAction(fnHandle as FunctionHandle<"action">, args ?? {}),
      );
    } catch (error) {
      result = attemptFailure(error, fnArgs);
    }
    const report = { workId, attempt, result };
    try {
      await ctx.runMutation(internal.mainLoop.complete.complete, report);
    } catch {
      // The direct call failed (or its answer was lost): hand the report to the scheduler, which
      // runs a mutation exactly once and retries it through transient errors. A report that did
      // commit after all makes the second one stale, and the loop ignores it.
      await scheduleReport(() =>
        ctx.scheduler.runAfter(0, internal.mainLoop.complete.complete, report),
      );
    }
    return null;
  },
});

/** Hands a report to the scheduler, trying REPORT_ATTEMPTS times; throws when it never takes it
 * (the runner then fails, and recovery settles the attempt). */
export async function scheduleReport(schedule: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await schedule();
      return;
    } catch (error) {
      // Not even the scheduler takes it: fail, so that recovery settles the attempt.
      if (i + 1 >= REPORT_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, REPORT_RETRY_MS * 2 ** i));
    }
  }
}

export const runMutationOrQuery = internalMutation({
  args: { ...vWorkerArgs, fnType: v.union(v.literal("mutation"), v.literal("query")) },
  returns: v.null(),
  handler: async (ctx, { workId, attempt, fnHandle, fnArgs, payloadId, fnType }) => {
    let result: AttemptResult;
    try {
      const args = payloadId ? (await ctx.db.get("payloads", payloadId))?.fnArgs : fnArgs;
      const returnValue =
        fnType === "mutation"
          ? await ctx.runMutation(fnHandle as FunctionHandle<"mutation">, args ?? {})
          : await ctx.runQuery(fnHandle as FunctionHandle<"query">, args ?? {});
      result = attemptSuccess(returnValue);
    } catch (error) {
      result = attemptFailure(error, fnArgs);
    }
    await recordCompletion(ctx, { workId, attempt, result });
    return null;
  },
});
