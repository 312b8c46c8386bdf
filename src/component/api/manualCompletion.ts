/**
 * Completions from outside (API-EXTENSIONS section 11): the app's `complete` call and an attempt's
 * timeout each file one outcome for one attempt of a `manualCompletion` job into
 * `pendingCompletion`, marked `from`, and only while that attempt may still take one: it is the
 * running one, not canceled, and has no completion kept on the job or filed already. Both read
 * the same `pendingCompletion` range they write, so two that race conflict and the second sees
 * the first. Appends only: the loop settles the outcome (mainLoop/awaiting.ts); this never changes
 * a job's state, and `complete` never throws for a late, duplicate or unknown completion.
 */
import { v } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { recordCompletion } from "../mainLoop/complete.js";
import { described, invalidArgument } from "../model/errors.js";
import { attemptSuccess } from "../model/outcomes.js";
import { validateCompletionOutcome } from "../model/validate.js";
import { runNumber, type AttemptResult, type CompletionOutcome } from "../model/validators.js";
import { parseWorkId } from "./jobStatus.js";

/**
 * Files the app's completion of a job's current attempt (or, given `attempt`, of that attempt
 * only: its `previousAttempts`). Returns true when it was filed, false when it decides nothing.
 * Throws InvalidArgument (writing nothing) for a malformed id, outcome, attempt or a return value
 * the pool cannot hold.
 */
export async function fileCompletion(
  ctx: MutationCtx,
  { id, outcome, attempt }: { id: string; outcome: CompletionOutcome; attempt?: number },
): Promise<boolean> {
  const workId = parseWorkId(ctx.db, id);
  validateCompletionOutcome(outcome);
  if (attempt !== undefined && (!Number.isInteger(attempt) || attempt < 0)) {
    invalidArgument(
      "options.attempt",
      "must be a whole number ≥ 0 (the attempt's previousAttempts)",
      attempt,
    );
  }
  const result = attemptResultOf(outcome);
  const work = await ctx.db.get("work", workId);
  if (work === null || !(await takesCompletion(ctx, work, attempt))) return false;
  await recordCompletion(ctx, { workId, attempt: runNumber(work), result, from: "completion" });
  return true;
}

/** The attempt outcome a completion stands for; a return value the pool cannot hold is an invalid
 * argument (the function's own would fail the attempt; the caller can still fix this one). */
function attemptResultOf(outcome: CompletionOutcome): AttemptResult {
  if (outcome.kind === "failed") {
    return outcome.nonRetryable === true
      ? { kind: "failed", error: outcome.error, nonRetryable: true }
      : { kind: "failed", error: outcome.error };
  }
  const result = attemptSuccess(outcome.returnValue);
  if (result.kind !== "success") {
    const rule = result.kind === "failed" ? result.error.replace(/^workpool: /, "") : "";
    invalidArgument("returnValue", `must be a value the pool can store: ${rule}`, described("it"));
  }
  return result;
}

/** Whether the job's running attempt (`previousAttempts`, when given, must match) still takes a
 * completion: it waits for one, is not canceled, and has none kept or filed. */
async function takesCompletion(
  ctx: MutationCtx,
  work: Doc<"work">,
  previousAttempts?: number,
): Promise<boolean> {
  if (work.manualCompletion === undefined || work.canceled === true) return false;
  if (work.state.kind !== "running" || work.state.wait?.kind === "kept") return false;
  if (previousAttempts !== undefined && previousAttempts !== work.attempts) return false;
  return !(await completionFiled(ctx, work._id, runNumber(work)));
}

/** Whether a completion or timeout of this attempt waits in `pendingCompletion` (filed as rows
 * of their own, so by workId and attempt). */
async function completionFiled(
  ctx: MutationCtx,
  workId: Id<"work">,
  attempt: number,
): Promise<boolean> {
  const rows = await ctx.db
    .query("pendingCompletion")
    .withIndex("by_workId", (q) => q.eq("workId", workId).eq("attempt", attempt))
    .collect();
  return rows.some((row) => row.from !== undefined);
}

/** What a timed-out attempt fails with. */
export function timeoutError(timeoutMs: number): string {
  return `workpool: no completion came within manualCompletion.timeoutMs (${timeoutMs} ms) of the attempt's start`;
}

/** The timeout of one attempt, scheduled by the loop when the attempt started (mainLoop/
 * awaiting.ts): files a failure for that attempt unless it took a completion first. */
export const timeout = internalMutation({
  args: { workId: v.id("work"), attempt: v.number() },
  returns: v.null(),
  handler: async (ctx, { workId, attempt }) => {
    const work = await ctx.db.get("work", workId);
    if (work === null || runNumber(work) !== attempt) return null;
    if (!(await takesCompletion(ctx, work))) return null;
    const timeoutMs = work.manualCompletion?.timeoutMs ?? 0;
    await recordCompletion(ctx, {
      workId,
      attempt,
      result: { kind: "failed", error: timeoutError(timeoutMs) },
      from: "timeout",
    });
    return null;
  },
});
