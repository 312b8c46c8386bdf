// The test app's group callback: records what a group's onComplete received, and how many job
// callbacks had committed by then (they all must have).
import { internalMutationGeneric } from "convex/server";
import { v } from "convex/values";

export const onGroupComplete = internalMutationGeneric({
  args: { groupId: v.string(), context: v.optional(v.any()), counts: v.any() },
  handler: async (ctx, { groupId, context, counts }) => {
    const jobCallbacks = (await ctx.db.query("completions").collect()).filter(
      (row) => row.result?.group === undefined,
    ).length;
    await ctx.db.insert("completions", {
      workId: groupId,
      context,
      result: { group: true, counts, jobCallbacks },
    });
  },
});
