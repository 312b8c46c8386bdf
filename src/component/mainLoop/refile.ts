/**
 * Loop stage: moving rows filed early. An enqueue files a job due more than a second out into the
 * next segment (api/kick.ts `targetFor`) instead of scheduling a pass at its due segment, so that
 * one transaction enqueueing many due times schedules a bounded number of passes. When the loop
 * reaches such a row, this stage moves it to its due segment as a row of the loop's own
 * (`fromLoop`), for which the loop wakes itself (main.ts `firstLaterOwnStart`): the job starts on
 * time, and never early. Runs before the start stage, so that the start stage never meets a row
 * filed early. Reads only segments the pass has reached (from its own cursor), writes only rows
 * of the loop's own: no conflict with enqueues. Never starts or finishes a job.
 */
import type { Doc } from "../_generated/dataModel.js";
import { dueSegment } from "../model/segments.js";
import { advanceCursor, startCursorOf, tableFrom, takeWithinBudget, type Pass } from "./pass.js";
import { budgetSpent } from "./passBudget.js";

/** Rows one pass moves: two writes each; 200 keeps a pass's writes well inside its budget, and a
 * mutation that enqueued 1,500 far-off jobs is filed in place within a few passes. */
export const REFILE_BATCH = 200;

/**
 * Moves the early rows of the segments this pass has reached to their due segments. Returns true
 * when a full batch was moved (more may wait: the caller starts nothing this pass and runs again
 * at once).
 */
export async function refileEarlyStarts(pass: Pass): Promise<boolean> {
  const { ctx } = pass;
  if (await budgetSpent(pass, "refile")) return true;
  const { rows, full: fullBatch } = await takeWithinBudget(
    ctx.db
      .query("pendingStart")
      .withIndex("by_early", (q) =>
        q.eq("early", true).gte("segment", tableFrom(pass, "early")).lte("segment", pass.segment),
      ),
    REFILE_BATCH,
  );
  let full = fullBatch;
  let leftAt: number | undefined;
  for (const row of rows) {
    // Two writes a row, asked per row: a pass of small rows must not meet the count limits.
    if (await budgetSpent(pass, "refile", { documentsWritten: 2 })) {
      leftAt = row.segment;
      full = true;
      break;
    }
    await refile(pass, row);
  }
  advanceCursor(pass, "early", leftAt ?? (full ? rows[rows.length - 1].segment : pass.segment));
  return full;
}

/** Replaces an early row by a row of the loop's own in its due segment, even one already past, as
 * long as the start stage still reads it (from its level's cursor, less the margin); older ones
 * all go to that lowest segment read, where the index orders them by due time. So the overdue rows
 * of a loop restarted late, refiled over several passes, start by priority and then in due order
 * (not by the pass that happened to refile them), and with the other due jobs. Callers never
 * write a segment the loop has reached, so the write conflicts with none. The wake-up it recorded
 * has done its work: this pass is reading its segment. */
async function refile(pass: Pass, row: Doc<"pendingStart">): Promise<void> {
  await pass.ctx.db.delete("pendingStart", row._id);
  await pass.ctx.db.insert("pendingStart", {
    workId: row.workId,
    runAt: row.runAt,
    segment: Math.max(
      dueSegment(row.runAt),
      tableFrom(pass, startCursorOf(row.priority, row.key !== undefined)),
    ),
    key: row.key,
    ...(row.key !== undefined ? { keyed: true as const } : {}),
    holdsSlot: row.holdsSlot,
    priority: row.priority,
    fromLoop: true,
    more: row.more,
  });
}
