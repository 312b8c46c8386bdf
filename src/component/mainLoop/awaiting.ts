/**
 * Waiting jobs, the loop's side (API-EXTENSIONS section 11): an attempt of a job enqueued with
 * `manualCompletion` ends when both its function's run and its completion (the app's `complete`,
 * or the attempt's timeout) have come, in either order; a function that throws decides alone.
 * Owns the running state's `wait` (validators.ts `vAttemptWait`) and the one timeout each attempt
 * gets at its start. Only the loop calls this; it never files outcomes (api/manualCompletion.ts
 * does) and never runs user code. No stage of its own: it settles what the completion stage reads,
 * and the timeout is one scheduled call per attempt, made where the attempt starts.
 */
import { internal } from "../_generated/api.js";
import type { Doc } from "../_generated/dataModel.js";
import {
  assertNever,
  runNumber,
  type AttemptWait,
  type FiledOutcome,
} from "../model/validators.js";
import { endAttempt, finishJob, settleAttempt } from "./complete.js";
import type { Pass } from "./pass.js";

/** Schedules the timeout of the attempt `work` starts now: at its deadline it files a failure for
 * this attempt alone, unless a completion came first (api/manualCompletion.ts `timeout`). One
 * scheduled call per attempt; a stale one does nothing. */
export async function scheduleTimeout(pass: Pass, work: Doc<"work">): Promise<void> {
  if (work.manualCompletion === undefined) return;
  await pass.ctx.scheduler.runAt(
    pass.now + work.manualCompletion.timeoutMs,
    internal.api.manualCompletion.timeout,
    { workId: work._id, attempt: runNumber(work) },
  );
}

/** The running state's wait, or undefined for a job in any other state. */
function waitOf(work: Doc<"work">): AttemptWait | undefined {
  return work.state.kind === "running" ? work.state.wait : undefined;
}

/** True when the job's attempt waits for its completion after its function returned. */
export function isAwaiting(work: Doc<"work">): boolean {
  return waitOf(work)?.kind === "awaiting";
}

/**
 * Settles an outcome (not stale: its attempt is the running one) of a `manualCompletion` job:
 * - its function's run: a throw (or a snooze) ends the attempt as it would any job's, dropping a
 *   kept completion; a return ends it with the kept completion, or starts the wait (the job keeps
 *   its pool and key slots); a canceled job ends canceled at once.
 * - a completion or a timeout: ends a waiting attempt with it; while the function still runs it
 *   is kept on the job for the function's return. A second one is dropped.
 */
export async function settleWaiting(
  pass: Pass,
  work: Doc<"work">,
  outcome: FiledOutcome,
): Promise<void> {
  const { ctx } = pass;
  if (work.state.kind !== "running") return;
  const state = work.state;
  const wait = state.wait;
  const drop = async (payload = outcome.returnValuePayloadId) => {
    if (payload !== undefined) await ctx.db.delete("payloads", payload);
  };
  if (outcome.from === undefined) {
    // The function's own run ended.
    if (wait?.kind === "awaiting") {
      // A second report of the same run (its direct call committed after all): ignore it.
      await drop();
      pass.state.stats.staleCompletions++;
      return;
    }
    if (outcome.result.kind !== "success") {
      // A throw decides the attempt (section 11); a kept completion is dropped.
      if (wait?.kind === "kept") await drop(wait.returnValuePayloadId);
      await endAttempt(pass, work);
      await settleAttempt(pass, work, outcome.result, outcome.returnValuePayloadId);
      return;
    }
    // Its return value is not the job's: the completion's is.
    await drop();
    if (work.canceled === true) {
      // Canceled while it ran: it waits for nothing.
      if (wait?.kind === "kept") await drop(wait.returnValuePayloadId);
      await endAttempt(pass, work);
      await finishJob(pass, { ...work, attempts: work.attempts + 1 }, { kind: "canceled" });
      return;
    }
    if (wait?.kind === "kept") {
      await endAttempt(pass, work);
      await settleAttempt(pass, work, wait.result, wait.returnValuePayloadId);
      return;
    }
    wait satisfies undefined;
    const deadline = state.startedAt + (work.manualCompletion?.timeoutMs ?? 0);
    await ctx.db.patch("work", work._id, {
      state: { ...state, wait: { kind: "awaiting", since: pass.now, deadline } },
    });
    pass.log.info("awaiting", { workId: work._id, fnName: work.fnName, deadline });
    return;
  }
  // A completion, or the attempt's timeout.
  const kind = wait?.kind;
  switch (kind) {
    case undefined:
      await ctx.db.patch("work", work._id, {
        state: {
          ...state,
          wait: {
            kind: "kept",
            result: outcome.result,
            ...(outcome.returnValuePayloadId === undefined
              ? {}
              : { returnValuePayloadId: outcome.returnValuePayloadId }),
          },
        },
      });
      return;
    case "kept":
      // The attempt has its completion already (filing refuses a second; this is a safeguard).
      await drop();
      pass.state.stats.staleCompletions++;
      return;
    case "awaiting":
      if (outcome.from === "timeout") {
        pass.log.warn("timedOut", { workId: work._id, fnName: work.fnName });
      }
      await endAttempt(pass, work);
      await settleAttempt(pass, work, outcome.result, outcome.returnValuePayloadId);
      return;
    default:
      assertNever(kind, "attempt wait");
  }
}

/** Deletes the payload of a completion kept for an attempt that recovery ends instead (its
 * runner died, or its report was lost): the completion goes with the attempt. */
export async function dropKept(pass: Pass, work: Doc<"work">): Promise<void> {
  const wait = waitOf(work);
  if (wait?.kind === "kept" && wait.returnValuePayloadId !== undefined) {
    await pass.ctx.db.delete("payloads", wait.returnValuePayloadId);
  }
}

/** Cancels a job whose attempt waits after its function returned: it ends canceled now and frees
 * its pool and key slots. Returns false (doing nothing) for any other job. */
export async function cancelWaiting(pass: Pass, work: Doc<"work">): Promise<boolean> {
  if (!isAwaiting(work)) return false;
  await endAttempt(pass, work);
  await finishJob(pass, { ...work, attempts: work.attempts + 1 }, { kind: "canceled" });
  return true;
}
