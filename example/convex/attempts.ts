// The app's own log of action attempts. Actions cannot write the database, so they call these
// mutations when an attempt starts and ends. Attempt numbers come from this log: the action does
// not otherwise know whether the pool is running it for the first time or retrying it.
import { v } from "convex/values";
import { internalMutation } from "./_generated/server.js";

/** Records the start of an attempt of job `key`; returns its number (1 for the first). */
export const start = internalMutation({
  args: { key: v.string() },
  returns: v.number(),
  handler: async (ctx, { key }) => {
    const last = await ctx.db
      .query("attempts")
      .withIndex("by_key", (q) => q.eq("key", key))
      .order("desc")
      .first();
    const attempt = (last?.attempt ?? 0) + 1;
    await ctx.db.insert("attempts", { key, attempt, startedAt: Date.now() });
    return attempt;
  },
});

/** Records the end of attempt `attempt` of job `key`, with its error if it failed. */
export const end = internalMutation({
  args: { key: v.string(), attempt: v.number(), error: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { key, attempt, error }) => {
    const row = await ctx.db
      .query("attempts")
      .withIndex("by_key", (q) => q.eq("key", key).eq("attempt", attempt))
      .unique();
    if (row) await ctx.db.patch("attempts", row._id, { endedAt: Date.now(), error });
    return null;
  },
});
