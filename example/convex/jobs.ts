// What a UI or an operator uses: a job's status (subscribe to it with useQuery), cancelation, the
// recorded outcomes, changing a pool's parallelism at run time, and one key's progress, pause,
// cancelation and parallelism (a key is a host in scrapePool, an email's poolKey in emailPool).
//
// These are public functions that read jobs or change a pool, so each checks its caller first, by
// the same rule as the dashboard's (operators.ts: `requireOperator`). The app's product functions
// (emails.sendEmails, scrape.scrapeSite, llm.summarizePages) stay open in this example: anyone may
// enqueue (a real app checks who is asking and limits each caller: docs/scheduling.md).
import { v } from "convex/values";
import { vKeyStatus, vWorkId } from "convex-workpool";
import { components } from "./_generated/api.js";
import { mutation, query } from "./_generated/server.js";
import { requireOperator } from "./operators.js";
import { pools } from "./pools.js";
import { vPoolName } from "./schema.js";

/** A job's status in its pool, and the outcome the app recorded once it finished. */
export const status = query({
  args: { pool: vPoolName, workId: vWorkId },
  handler: async (ctx, { pool, workId }) => {
    await requireOperator(ctx, "read", "jobs.status");
    const status = await pools[pool].status(ctx, workId);
    const outcome = await ctx.db
      .query("outcomes")
      .withIndex("by_pool_workId", (q) => q.eq("pool", pool).eq("workId", workId))
      .unique();
    return { status, outcome };
  },
});

/**
 * Cancels a job: if it has not started it never will. A running action is not interrupted; a
 * running summary (an llmPool task) has its `signal` aborted and stops waiting.
 */
export const cancel = mutation({
  args: { pool: vPoolName, workId: vWorkId },
  returns: v.null(),
  handler: async (ctx, { pool, workId }) => {
    await requireOperator(ctx, "jobs", "jobs.cancel");
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
    await requireOperator(ctx, "settings", "jobs.setMaxParallelism");
    await ctx.runMutation(components[pool].config.update, { maxParallelism });
    return null;
  },
});

/**
 * Sets (or, with `null`, removes) a pool's rate limit: at most `starts` attempts start in any
 * `periodMs`. Stored in the component's config like maxParallelism (`config.update`).
 */
export const setRateLimit = mutation({
  args: {
    pool: vPoolName,
    rateLimit: v.union(v.object({ starts: v.number(), periodMs: v.number() }), v.null()),
  },
  returns: v.null(),
  handler: async (ctx, { pool, rateLimit }) => {
    await requireOperator(ctx, "settings", "jobs.setRateLimit");
    await ctx.runMutation(components[pool].config.update, { rateLimit });
    return null;
  },
});

/** The recorded outcomes of a pool's jobs, oldest first. */
export const listOutcomes = query({
  args: { pool: vPoolName },
  handler: async (ctx, { pool }) => {
    await requireOperator(ctx, "read", "jobs.listOutcomes");
    return await ctx.db
      .query("outcomes")
      .withIndex("by_pool_finishedAt", (q) => q.eq("pool", pool))
      .collect();
  },
});

/**
 * One key's progress in a pool: `{ pending, running, succeeded, failed, canceled, paused,
 * parallelism }`, the pool's own counts (finished jobs count while their status is retained, a day
 * by default). A job waiting out a retry's backoff counts as pending. Subscribe to it with useQuery
 * for a per-host progress bar.
 */
export const keyProgress = query({
  args: { pool: vPoolName, key: v.string() },
  returns: vKeyStatus,
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "read", "jobs.keyProgress");
    return await pools[pool].keyStatus(ctx, key);
  },
});

/**
 * Pauses one key: none of its jobs starts (retries included) until resumeKey; a running job
 * finishes. Other keys and unkeyed jobs go on. Stored in the pool, so it lasts across deploys.
 */
export const pauseKey = mutation({
  args: { pool: vPoolName, key: v.string() },
  returns: v.null(),
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "settings", "jobs.pauseKey");
    await pools[pool].pause(ctx, { key });
    return null;
  },
});

/** Ends a pause of one key: its jobs start again, in order. */
export const resumeKey = mutation({
  args: { pool: vPoolName, key: v.string() },
  returns: v.null(),
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "settings", "jobs.resumeKey");
    await pools[pool].resume(ctx, { key });
    return null;
  },
});

/**
 * Cancels every unfinished job of one key, and no other: waiting jobs never start; a running one is
 * not interrupted (and not retried). Each gets its onComplete, as with `cancel`.
 */
export const cancelKey = mutation({
  args: { pool: vPoolName, key: v.string() },
  returns: v.null(),
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "jobs", "jobs.cancelKey");
    await pools[pool].cancelAll(ctx, { key });
    return null;
  },
});

/**
 * How many jobs of one key may run at once (a whole number, at least 1), e.g. a host that allows
 * more; `null` returns the key to the pool's keyParallelism. Stored apart from the pool's config,
 * so no client option overwrites it.
 */
export const setKeyParallelism = mutation({
  args: { pool: vPoolName, key: v.string(), parallelism: v.union(v.number(), v.null()) },
  returns: v.null(),
  handler: async (ctx, { pool, key, parallelism }) => {
    await requireOperator(ctx, "settings", "jobs.setKeyParallelism");
    await pools[pool].setKeyParallelism(ctx, key, parallelism);
    return null;
  },
});
