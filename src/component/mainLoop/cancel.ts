/**
 * Loop stage: processing cancel requests from `pendingCancelation`. A pending job (first attempt or
 * backing off) is finished as canceled at once, and so is a job waiting for its completion after
 * its function returned; a running job is marked so that it is not retried.
 * Only the loop calls this. Takes requests while the pass's budget lasts (passBudget.ts); never
 * assumes its batch alone keeps the pass within Convex's limits.
 */
import { handOverCancel } from "./executors.js";
import { finishJob } from "./complete.js";
import { cancelWaiting } from "./awaiting.js";
import { unqueue } from "./keyState.js";
import { advanceCursor, tableFrom, type Pass } from "./pass.js";
import { budgetSpent } from "./passBudget.js";

/** Cancel requests one pass processes; each costs about four reads and three writes. */
export const CANCEL_BATCH = 100;

/** Returns true when a full batch was taken (more may wait). */
export async function processCancelations(pass: Pass): Promise<boolean> {
  const { ctx } = pass;
  const rows = await ctx.db
    .query("pendingCancelation")
    .withIndex("by_segment", (q) =>
      q.gte("segment", tableFrom(pass, "cancelation")).lte("segment", pass.segment),
    )
    .take(CANCEL_BATCH);
  let full = rows.length === CANCEL_BATCH;
  // The segment of the first request left for the next pass (the budget stopped the stage).
  let leftAt: number | undefined;
  for (const row of rows) {
    // Each request costs a deliverer and a few reads and writes: asked per request (cancels come
    // in bursts of thousands, `cancelAll`).
    if (await budgetSpent(pass, "cancels", { functionsScheduled: 1 })) {
      leftAt = row.segment;
      full = true;
      break;
    }
    await ctx.db.delete("pendingCancelation", row._id);
    const work = await ctx.db.get("work", row.workId);
    if (work === null) continue;
    switch (work.state.kind) {
      case "finished":
        break;
      case "running":
        // A job waiting for its completion after its function returned ends at once (awaiting.ts).
        if (await cancelWaiting(pass, work)) break;
        if (!work.canceled) {
          await ctx.db.patch("work", work._id, { canceled: true });
          // A task's executor aborts its signal; its slots stay held until the handler settles.
          await handOverCancel(pass, work);
        }
        break;
      case "pending": {
        // Waiting in pendingStart, or (a keyed job that was due) in its key's queue.
        const start = await ctx.db
          .query("pendingStart")
          .withIndex("by_workId", (q) => q.eq("workId", work._id))
          .first();
        if (start?.more) {
          // The first of a batch's row: the others stay in it (still marked a batch's, `more`:
          // one of them may have been canceled too).
          const [next, ...more] = start.more;
          if (next === undefined) await ctx.db.delete("pendingStart", start._id);
          else await ctx.db.patch("pendingStart", start._id, { workId: next, more });
        } else if (start) await ctx.db.delete("pendingStart", start._id);
        else if (work.key !== undefined) await unqueue(pass, work._id, work.key);
        await finishJob(pass, work, { kind: "canceled" });
        break;
      }
      default:
        work.state satisfies never;
    }
  }
  advanceCursor(
    pass,
    "cancelation",
    leftAt ?? (full ? rows[rows.length - 1].segment : pass.segment),
  );
  return full;
}
