/**
 * Workers: the functions the loop schedules to run one attempt of a job. They run user code and report
 * the attempt's outcome — actions through the `complete` mutation, mutations and queries in their own
 * transaction. They write only `pendingCompletion` (and a payload for a large return value); they never
 * decide retries and never change a job's state.
 */
import { v } from "convex/values";
import type { FunctionHandle } from "convex/server";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation, internalQuery } from "./_generated/server.js";
import { recordCompletion } from "./complete.js";
import { errorMessage, isNonRetryableError } from "./errors.js";
import type { AttemptResult } from "./model.js";

/** How many times an action worker tries to report its outcome before giving up (and failing, so
 * that recovery treats the attempt as failed): covers transient errors without hiding real ones. */
export const REPORT_ATTEMPTS = 3;
/** The wait between report tries, doubled each time. */
export const REPORT_RETRY_MS = 100;

const vWorkerArgs = {
  workId: v.id("work"),
  /** The attempt being run (1-based). */
  attempt: v.number(),
  fnHandle: v.string(),
  /** The arguments when small; otherwise read from `payloadId`. */
  fnArgs: v.optional(v.any()),
  payloadId: v.optional(v.id("payloads")),
};

/** The outcome of running user code, as data. */
function failure(error: unknown): AttemptResult {
  return isNonRetryableError(error)
    ? { kind: "failed", error: errorMessage(error), nonRetryable: true }
    : { kind: "failed", error: errorMessage(error) };
}

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
      const args = payloadId ? await ctx.runQuery(internal.worker.loadArgs, { payloadId }) : fnArgs;
      const returnValue = await ctx.runAction(fnHandle as FunctionHandle<"action">, args ?? {});
      result = { kind: "success", returnValue: returnValue ?? null };
    } catch (error) {
      result = failure(error);
    }
    await reportWithRetries(async (r) => {
      await ctx.runMutation(internal.complete.complete, { workId, attempt, result: r });
    }, result);
    return null;
  },
});

async function reportWithRetries(
  report: (result: AttemptResult) => Promise<void>,
  result: AttemptResult,
): Promise<void> {
  let lastError: unknown;
  for (let i = 0; i < REPORT_ATTEMPTS; i++) {
    try {
      await report(result);
      return;
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, REPORT_RETRY_MS * 2 ** i));
    }
  }
  // Reporting keeps failing (e.g. the return value cannot be stored): report the failure itself once,
  // then give up loudly; recovery sees this worker failed and counts the attempt as failed.
  try {
    await report({
      kind: "failed",
      error: `workpool: could not record result: ${errorMessage(lastError)}`,
    });
    return;
  } catch {
    throw lastError;
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
      result = { kind: "success", returnValue: returnValue ?? null };
    } catch (error) {
      result = failure(error);
    }
    await recordCompletion(ctx, { workId, attempt, result });
    return null;
  },
});
