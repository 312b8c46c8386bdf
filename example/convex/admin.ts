// What an admin page binds to (useQuery, usePaginatedQuery, useMutation): every pool's health, a
// pool's jobs page by page with their state, outcome and key filters, one job's details (why it
// failed), retrying a failed or canceled job, a key's progress, and pausing a pool or a key.
//
// These are public functions, so each checks its caller first, by the same rule as the dashboard's
// (operators.ts: `requireOperator`); a caller the dashboard refuses is refused here too.
import { paginationOptsValidator, paginationResultValidator } from "convex/server";
import { v } from "convex/values";
import {
  vKeyStatus,
  vListedWorkInfo,
  vListFilter,
  vStats,
  vWorkId,
  vWorkInfo,
} from "convex-workpool";
import { mutation, query } from "./_generated/server.js";
import { requireOperator } from "./operators.js";
import { emailPool, llmPool, pools, scrapePool } from "./pools.js";
import { vPoolName } from "./schema.js";

/** Each pool's health: `{ pending, running, maxParallelism, paused, oldestPendingMs, lastMinute }`
 * (llmPool's counts are its tasks: a job, however many run in one executor action). */
export const stats = query({
  args: {},
  returns: v.object({ emailPool: vStats, scrapePool: vStats, llmPool: vStats }),
  handler: async (ctx) => {
    await requireOperator(ctx, "read", "admin.stats");
    return {
      emailPool: await emailPool.stats(ctx),
      scrapePool: await scrapePool.stats(ctx),
      llmPool: await llmPool.stats(ctx),
    };
  },
});

/**
 * A page of one pool's jobs for usePaginatedQuery, filtered by `state`, `outcome` (finished jobs
 * only) and `key`: pending jobs by due time, running ones by start time, finished ones newest first.
 */
export const listJobs = query({
  args: { pool: vPoolName, ...vListFilter, paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(vListedWorkInfo),
  handler: async (ctx, { pool, ...args }) => {
    await requireOperator(ctx, "read", "admin.listJobs");
    return await pools[pool].list(ctx, args);
  },
});

/** One job's details, its result included (a failure's `error` says why); null once not retained. */
export const jobInfo = query({
  args: { pool: vPoolName, id: vWorkId },
  returns: v.union(vWorkInfo, v.null()),
  handler: async (ctx, { pool, id }) => {
    await requireOperator(ctx, "read", "admin.jobInfo");
    return await pools[pool].info(ctx, id);
  },
});

/** One key's progress: `{ pending, running, succeeded, failed, canceled, paused, parallelism }`. */
export const keyStatus = query({
  args: { pool: vPoolName, key: v.string() },
  returns: vKeyStatus,
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "read", "admin.keyStatus");
    return await pools[pool].keyStatus(ctx, key);
  },
});

/** Runs a failed or canceled job again, as a new job with the same function, args and options;
 * returns the new job's id. Anything else is rejected (an InvalidArgument error naming `id`). */
export const retryJob = mutation({
  args: { pool: vPoolName, id: vWorkId },
  returns: vWorkId,
  handler: async (ctx, { pool, id }) => {
    await requireOperator(ctx, "jobs", "admin.retryJob");
    return await pools[pool].retry(ctx, id);
  },
});

/** Pauses a pool (or, with `key`, one key): no attempt starts, retries included, until resume. */
export const pause = mutation({
  args: { pool: vPoolName, key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "settings", "admin.pause");
    await pools[pool].pause(ctx, { key });
    return null;
  },
});

/** Ends a pause of a pool (or, with `key`, of one key). */
export const resume = mutation({
  args: { pool: vPoolName, key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { pool, key }) => {
    await requireOperator(ctx, "settings", "admin.resume");
    await pools[pool].resume(ctx, { key });
    return null;
  },
});
