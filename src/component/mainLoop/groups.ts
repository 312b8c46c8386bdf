/**
 * Groups, the loop's side (API-EXTENSIONS section 12): counting each group's running and finished
 * jobs in its `groupState` row (written only here, so no enqueue conflicts with it), and marking a
 * closed group done (`finishedAt`) when it finishes its last job. Reads a group's ledger only once
 * the group is closed, when no enqueue writes it. Only the loop calls this; it never changes a
 * job's state.
 */
import { internal } from "../_generated/api.js";
import type { Id } from "../_generated/dataModel.js";
import { groupTotal } from "../api/groups.js";
import type { Pass } from "./pass.js";

type Counted = "running" | "succeeded" | "failed" | "canceled";

/** Adds `delta` to one of the group's counts. */
export async function countInGroup(
  pass: Pass,
  groupId: Id<"groups">,
  field: Counted,
  delta: number,
): Promise<void> {
  const { db } = pass.ctx;
  const state = await db
    .query("groupState")
    .withIndex("by_group", (q) => q.eq("groupId", groupId))
    .first();
  if (state === null) {
    const zero = { running: 0, succeeded: 0, failed: 0, canceled: 0 };
    await db.insert("groupState", { groupId, ...zero, [field]: delta });
    return;
  }
  await db.patch("groupState", state._id, { [field]: state[field] + delta });
}

/** Counts a job of the group finished, and marks the group done when it was closed and this was
 * its last unfinished job. */
export async function finishInGroup(
  pass: Pass,
  groupId: Id<"groups">,
  kind: Exclude<Counted, "running">,
): Promise<void> {
  await countInGroup(pass, groupId, kind, 1);
  const { db } = pass.ctx;
  const group = await db.get("groups", groupId);
  if (group === null || !group.closed || group.finishedAt !== undefined) return;
  const state = await db
    .query("groupState")
    .withIndex("by_group", (q) => q.eq("groupId", groupId))
    .first();
  const finished = (state?.succeeded ?? 0) + (state?.failed ?? 0) + (state?.canceled ?? 0);
  if (finished >= (await groupTotal(db, groupId))) {
    await db.patch("groups", groupId, { finishedAt: pass.now });
    await pass.ctx.scheduler.runAfter(0, internal.runners.groupCallback.notify, { groupId });
    pass.log.info("groupDone", { groupId, finished });
  }
}
