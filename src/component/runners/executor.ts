/**
 * Executors, the component's side: the one function an executor action (an app action made by the
 * client's `pool.executor`, running many tasks at once) calls. A `report` records the outcomes of
 * the tasks it finished, exactly as a worker's report does (a `pendingCompletion` row each, which
 * the loop settles), and carries back what the loop handed the executor since: tasks to run and
 * tasks to cancel. An executor with nothing left says so in its last report and ends, unless that
 * report brings it more. Writes only `pendingCompletion` (and a payload for a large result), the
 * hand-overs it takes, and its own executor row (`concurrency`, `ending`, or its deletion when the
 * loop has nothing of it left to settle); never decides
 * retries, never changes a job's state, never admits a task (the loop does, mainLoop/executors.ts).
 */
import { v, type Infer } from "convex/values";
import type { Id } from "../_generated/dataModel.js";
import { mutation, type MutationCtx } from "../_generated/server.js";
import { recordCompletions, type ReportedOutcome } from "../mainLoop/complete.js";
import { isOpen } from "../mainLoop/executors.js";
import { invalidArgument } from "../model/errors.js";
import { valueSizeBytes } from "../model/payloads.js";
import { segmentOf } from "../model/segments.js";
import { vAttemptResult } from "../model/validators.js";

/** Tasks one report takes at most: the most tasks an executor runs at once. */
export const REPORT_TAKE_BATCH = 1000;
/** Bytes of task arguments one report returns at most (large ones are read from their payload):
 * a report's answer stays far below Convex's limits, and the rest come with the next report. */
export const REPORT_ARGS_BYTES = 4 * 1024 * 1024;
/** Outcomes one report carries at most (the executor sends more in further reports). */
export const MAX_REPORT_OUTCOMES = 1000;

/** A task the executor is to run. */
const vHandedTask = v.object({
  workId: v.string(),
  attempt: v.number(),
  previousAttempts: v.number(),
  task: v.string(),
  fnArgs: v.any(),
});

export const vReportAnswer = v.object({
  /** Tasks to run. */
  tasks: v.array(vHandedTask),
  /** Tasks (by id) to cancel: abort their signal. */
  cancels: v.array(v.string()),
  /** More hand-overs wait than this answer carries: report again soon. */
  more: v.boolean(),
  /** The executor is not (or no longer) known to the pool: end now. */
  stop: v.boolean(),
});

const NONE = { tasks: [], cancels: [], more: false, stop: true };

/**
 * An executor's report: the outcomes it has for the pool, and (with `ending`) that it has nothing
 * left and will end unless the answer brings more. `concurrency` is how many tasks it runs at
 * once, said on its first report.
 */
export const report = mutation({
  args: {
    executorId: v.string(),
    concurrency: v.optional(v.number()),
    outcomes: v.array(
      v.object({ workId: v.string(), attempt: v.number(), result: vAttemptResult }),
    ),
    ending: v.optional(v.boolean()),
  },
  returns: vReportAnswer,
  handler: async (ctx, { executorId, concurrency, outcomes, ending }) => {
    if (outcomes.length > MAX_REPORT_OUTCOMES) {
      invalidArgument("outcomes", `at most ${MAX_REPORT_OUTCOMES} per report`, outcomes.length);
    }
    const id = ctx.db.normalizeId("executors", executorId);
    const row = id === null ? null : await ctx.db.get("executors", id);
    const reported: ReportedOutcome[] = [];
    for (const outcome of outcomes) {
      const workId = ctx.db.normalizeId("work", outcome.workId);
      if (workId === null) continue; // not a job of this pool: nothing to record
      reported.push({ workId, attempt: outcome.attempt, result: outcome.result });
    }
    // Filed under the executor's id, which its tasks' running state names (for recovery).
    await recordCompletions(ctx, reported, row?._id);
    if (row === null) return NONE;
    if (concurrency !== undefined && row.concurrency !== concurrency) {
      await ctx.db.patch("executors", row._id, {
        concurrency,
        open: isOpen({ ...row, concurrency }),
      });
    }
    const answer = await takeHandovers(ctx, row._id, ending === true);
    if (ending && answer.tasks.length === 0 && !answer.more) {
      // Nothing of its own left for the loop to settle: the row goes now. Otherwise the loop
      // deletes it once it settled the rest (mainLoop/executors.ts `flushExecutors`).
      if (row.assigned === 0) await ctx.db.delete("executors", row._id);
      else await ctx.db.patch("executors", row._id, { ending: true, open: false });
      return { ...answer, stop: true };
    }
    return answer;
  },
});

/**
 * Takes (deletes and returns) what the loop handed the executor up to this moment's segment: the
 * loop writes into the segment after its own, so a report does not read what a pass that runs
 * meanwhile writes. A last report (`all`) reads every segment instead: a pass handing it a task at
 * that moment then conflicts with it (one of the two runs again, and sees the other), so no task
 * is handed to an executor that has ended. Stops at REPORT_TAKE_BATCH tasks or REPORT_ARGS_BYTES
 * of arguments, leaving the rest of a row in it for the next report (`more`).
 */
async function takeHandovers(ctx: MutationCtx, executorId: Id<"executors">, all: boolean) {
  const tasks: Array<Infer<typeof vHandedTask>> = [];
  const cancels: string[] = [];
  let bytes = 0;
  const full = () => tasks.length >= REPORT_TAKE_BATCH || bytes >= REPORT_ARGS_BYTES;
  const rows = ctx.db
    .query("handovers")
    .withIndex("by_executor", (q) =>
      all
        ? q.eq("executorId", executorId)
        : q.eq("executorId", executorId).lte("segment", segmentOf(Date.now())),
    );
  for await (const row of rows) {
    if (full()) return { tasks, cancels, more: true, stop: false };
    cancels.push(...row.cancels);
    let taken = 0;
    for (const handed of row.tasks) {
      if (full()) break;
      const payload = handed.payloadId ? await ctx.db.get("payloads", handed.payloadId) : null;
      const fnArgs = payload ? payload.fnArgs : handed.fnArgs;
      bytes += valueSizeBytes(fnArgs);
      const { workId, attempt, previousAttempts, task } = handed;
      tasks.push({ workId, attempt, previousAttempts, task, fnArgs });
      taken++;
    }
    if (taken < row.tasks.length) {
      // The rest of the row waits for the next report (its cancels were taken).
      await ctx.db.patch("handovers", row._id, { tasks: row.tasks.slice(taken), cancels: [] });
      return { tasks, cancels, more: true, stop: false };
    }
    await ctx.db.delete("handovers", row._id);
  }
  return { tasks, cancels, more: false, stop: false };
}
