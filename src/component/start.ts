/**
 * Loop stage: starting pending work. Takes due rows from `pendingStart` up to the free capacity
 * (`maxParallelism` minus running), schedules a worker for each and marks the job running. The only
 * place a job enters "running".
 */
import { internal } from "./_generated/api.js";
import type { Doc } from "./_generated/dataModel.js";
import { advanceCursor, tableFrom, type Pass } from "./pass.js";
import { recordStart } from "./stats.js";

/** Starts one pass makes at most: about four reads and two writes each, so 100 keeps a pass far
 * inside Convex's limits while draining a backlog of 10,000 in a hundred passes. */
export const START_BATCH = 100;

/** Returns true when it started a full batch and has capacity left (more may be due). */
export async function startWork(pass: Pass): Promise<boolean> {
  const { ctx } = pass;
  const capacity = pass.config.maxParallelism - pass.state.running;
  if (capacity <= 0) return false;
  const take = Math.min(capacity, START_BATCH);
  const rows = await ctx.db
    .query("pendingStart")
    .withIndex("by_segment", (q) =>
      q.gte("segment", tableFrom(pass, "start")).lte("segment", pass.segment),
    )
    .take(take);
  // Rows below the last one taken are gone; when fewer than asked were due, all due rows are.
  advanceCursor(pass, "start", rows.length === take ? rows[rows.length - 1].segment : pass.segment);
  for (const row of rows) {
    await ctx.db.delete("pendingStart", row._id);
    const work = await ctx.db.get("work", row.workId);
    if (work === null || work.state.kind !== "pending") {
      pass.log.error("invariant", {
        message: "a pendingStart row pointed at a job that is not pending",
        workId: row.workId,
        state: work?.state.kind ?? "missing",
      });
      continue;
    }
    const scheduledId = await scheduleWorker(pass, work);
    await ctx.db.patch("work", work._id, {
      state: { kind: "running", scheduledId, startedAt: pass.now },
      // The worker has the arguments now; only a retry would need them again.
      ...(work.retryBehavior === undefined ? { fnArgs: undefined } : {}),
    });
    pass.state.running++;
    recordStart(pass.state.stats, Math.max(0, pass.now - row.runAt));
    pass.log.debug("started", {
      workId: work._id,
      fnName: work.fnName,
      attempt: work.attempts + 1,
    });
  }
  return rows.length === take && capacity > take;
}

async function scheduleWorker(pass: Pass, work: Doc<"work">) {
  const args = {
    workId: work._id,
    attempt: work.attempts + 1,
    fnHandle: work.fnHandle,
    fnArgs: work.fnArgs,
    payloadId: work.payloadId,
  };
  switch (work.fnType) {
    case "action":
      return await pass.ctx.scheduler.runAfter(0, internal.worker.runAction, args);
    case "mutation":
    case "query":
      return await pass.ctx.scheduler.runAfter(0, internal.worker.runMutationOrQuery, {
        ...args,
        fnType: work.fnType,
      });
    default:
      return work.fnType satisfies never;
  }
}
