/**
 * Groups, the loop's side (API-EXTENSIONS section 12): counting each group's running and finished
 * jobs in its `groupState` row (written only here, so no enqueue conflicts with it), and marking a
 * closed group done (`finishedAt`) when it finishes its last job. Reads a group's ledger only once
 * the group is closed, when no enqueue writes it. Only the loop calls this; it never changes a
 * job's state.
 */
import { internal } from "../_generated/api.js";
import type { Id } from "../_generated/dataModel.js";
import type { MutationCtx } from "../_generated/server.js";
import { DEFAULT_STATUS_TTL_MS } from "../api/enqueue.js";
import { groupTotal } from "../api/groups.js";
import type { Pass } from "./pass.js";

type Counted = "running" | "succeeded" | "failed" | "canceled";

/** How long a done group's status stays readable: a day, a job's default statusTtl (a group has
 * no statusTtl of its own yet). */
export const GROUP_STATUS_TTL_MS = DEFAULT_STATUS_TTL_MS;

/** Done groups the sweeper deletes per sweep transaction at most: each costs a read and a write
 * for its row, its state row and up to 16 ledger rows, so 20 stay far inside a transaction. */
export const GROUP_SWEEP_BATCH = 20;

/** Deletes up to GROUP_SWEEP_BATCH groups that expired by `upTo`, with their ledger and state
 * rows (the sweeper's, once per sweep; more wait for the next). */
export async function sweepGroups(ctx: MutationCtx, upTo: number): Promise<void> {
  const expired = await ctx.db
    .query("groups")
    .withIndex("by_expiresAt", (q) => q.gt("expiresAt", 0).lte("expiresAt", upTo))
    .take(GROUP_SWEEP_BATCH);
  for (const group of expired) {
    const rows = [
      ...(await ctx.db
        .query("groupLedger")
        .withIndex("by_groupShard", (q) => q.eq("groupId", group._id))
        .collect()),
    ];
    for (const row of rows) await ctx.db.delete("groupLedger", row._id);
    const state = await ctx.db
      .query("groupState")
      .withIndex("by_group", (q) => q.eq("groupId", group._id))
      .first();
    if (state !== null) await ctx.db.delete("groupState", state._id);
    await ctx.db.delete("groups", group._id);
  }
}

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
    await db.patch("groups", groupId, {
      finishedAt: pass.now,
      expiresAt: pass.now + GROUP_STATUS_TTL_MS,
    });
    await pass.ctx.scheduler.runAfter(0, internal.runners.groupCallback.notify, { groupId });
    pass.log.info("groupDone", { groupId, finished });
  }
}
