/**
 * Loop stage, within `finishJob`: a schedule's run buffered by `overlap: "bufferOne"` (written with
 * `waitsFor` and no `pendingStart` row, api/scheduleRuns.ts) gets its start row when the run it
 * waits for finishes, due at its own time or now, whichever is later. Only the loop calls this; it
 * reads one index entry per finished job (`by_waitsFor`) and never reads or writes a schedule's row.
 */
import type { Doc } from "../_generated/dataModel.js";
import { segmentForRunAt } from "../model/segments.js";
import type { Pass } from "./pass.js";

/** Files the start of the run waiting for `finished`, if one does. */
export async function releaseBufferedRun(pass: Pass, finished: Doc<"work">): Promise<void> {
  if (finished.schedule === undefined) return;
  const { ctx, now } = pass;
  const waiting = await ctx.db
    .query("work")
    .withIndex("by_waitsFor", (q) => q.eq("waitsFor", finished._id))
    .first();
  if (waiting === null || waiting.state.kind !== "pending") return;
  const runAt = Math.max(waiting.listAt, now);
  await ctx.db.patch("work", waiting._id, { waitsFor: undefined, listAt: runAt });
  await ctx.db.insert("pendingStart", {
    workId: waiting._id,
    runAt,
    segment: segmentForRunAt(runAt, now),
    priority: waiting.priority,
    ...(waiting.key !== undefined ? { key: waiting.key, keyed: true as const } : {}),
    fromLoop: true,
  });
}
