/**
 * A group's onComplete (API-EXTENSIONS section 12): called once the group is done, after every
 * job's own onComplete has committed (or was recorded failed for good). Scheduled by whoever marks
 * the group done (the loop, or `closeGroup`); it waits while any `deliveries` row from before the
 * group was done is left (each job's callbacks are in such a row until their commit; a row split
 * or retried later carries the time of the first, `since`), checking
 * again every GROUP_CALLBACK_RETRY_MS, then calls the handler in a sub-transaction (a throw rolls
 * back only the handler's writes and is logged) and marks the group notified in the same commit,
 * so the callback happens exactly once. Never changes a job's state.
 */
import { v } from "convex/values";
import type { FunctionHandle } from "convex/server";
import { internal } from "../_generated/api.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { groupCounts } from "../api/groups.js";
import { readConfig } from "../config.js";
import { errorMessage } from "../model/errors.js";
import { createLogger } from "../model/logging.js";

/** How long a group's callback waits before it looks again for job callbacks still undelivered:
 * deliveries usually commit within a pass or two (100 ms each); a quarter second keeps the wait
 * to a few cheap transactions. */
export const GROUP_CALLBACK_RETRY_MS = 250;

/** Slack added to the group's done time when comparing it with delivery rows' creation times: a
 * row written in the pass that finished the group's last job is created at that transaction's
 * commit, a little after the time the pass read. */
export const DELIVERY_ROW_SLACK_MS = 1000;

/** When the oldest callbacks still undelivered were first written (Infinity when none): the
 * oldest row's creation time, or the `since` of a row made from an earlier one (a split, a retry
 * or a continuation is created later than the callbacks it carries). Two single-row reads. */
async function oldestDeliverySince(ctx: MutationCtx): Promise<number> {
  const created = await ctx.db.query("deliveries").order("asc").first();
  const rewritten = await ctx.db
    .query("deliveries")
    .withIndex("by_since", (q) => q.gte("since", 0))
    .first();
  return Math.min(created?._creationTime ?? Infinity, rewritten?.since ?? Infinity);
}

export const notify = internalMutation({
  args: { groupId: v.id("groups") },
  returns: v.null(),
  handler: async (ctx, { groupId }) => {
    const group = await ctx.db.get("groups", groupId);
    if (group === null || group.finishedAt === undefined || group.notified === true) return null;
    if ((await oldestDeliverySince(ctx)) <= group.finishedAt + DELIVERY_ROW_SLACK_MS) {
      await ctx.scheduler.runAfter(GROUP_CALLBACK_RETRY_MS, internal.runners.groupCallback.notify, {
        groupId,
      });
      return null;
    }
    await ctx.db.patch("groups", groupId, { notified: true });
    if (group.onComplete === undefined) return null;
    const { succeeded, failed, canceled } = await groupCounts(ctx.db, groupId);
    try {
      await ctx.runMutation(group.onComplete.fnHandle as FunctionHandle<"mutation">, {
        groupId,
        context: group.onComplete.context,
        counts: { succeeded, failed, canceled },
      });
    } catch (error) {
      const log = createLogger((await readConfig(ctx.db)).logLevel);
      log.error("groupOnCompleteFailed", { groupId, error: errorMessage(error) });
    }
    return null;
  },
});
