// What a UI or an operator uses: a job's status (subscribe to it with useQuery), cancelation, the
// recorded outcomes, and changing a pool's parallelism at run time.
import { v } from "convex/values";
import { vWorkId } from "convex-workpool";
import { components } from "./_generated/api.js";
import { mutation, query } from "./_generated/server.js";
import { pools } from "./pools.js";
import { vPoolName } from "./schema.js";

/** A job's status in its pool, and the outcome the app recorded once it finished. */
export const status = query({
  args: { pool: vPoolName, workId: vWorkId },
  handler: async (ctx, { pool, workId }) => {
    const status = await pools[pool].status(ctx, workId);
    const outcome = await ctx.db
      .query("outcomes")
      .withIndex("by_pool_workId", (q) => q.eq("pool", pool).eq("workId", workId))
      .unique();
    return { status, outcome };
  },
});

/** Cancels a job: if it has not started it never will; a running job is not interrupted. */
export const cancel = mutation({
  args: { pool: vPoolName, workId: vWorkId },
  returns: v.null(),
  handler: async (ctx, { pool, workId }) => {
    await pools[pool].cancel(ctx, workId);
    return null;
  },
});

/**
 * Changes how many jobs a pool runs at once (0 pauses starting new work), through the component's
 * `config.update`, the same function `npx convex run --component scrapePool config:update
 * '{"maxParallelism": 4}'` calls. See pools.ts for how long a change to scrapePool lasts.
 */
export const setMaxParallelism = mutation({
  args: { pool: vPoolName, maxParallelism: v.number() },
  returns: v.null(),
  handler: async (ctx, { pool, maxParallelism }) => {
    await ctx.runMutation(components[pool].config.update, { maxParallelism });
    return null;
  },
});

/** The recorded outcomes of a pool's jobs, oldest first. */
export const listOutcomes = query({
  args: { pool: vPoolName },
  handler: async (ctx, { pool }) => {
    return await ctx.db
      .query("outcomes")
      .withIndex("by_pool_finishedAt", (q) => q.eq("pool", pool))
      .collect();
  },
});
