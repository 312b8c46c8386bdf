// The app's three pools, and the onComplete all use to record how each job ended.
//
// emailPool retries failed actions (with the default backoff: 5 attempts, 250 ms doubling) and runs
// at the parallelism stored in its component config: 10 unless an operator changes it at run time
// (jobs.setMaxParallelism, or `npx convex run`), and such a change stays. Its emails are unkeyed
// unless the caller gives one a `poolKey` (emails.sendEmails): emails sharing one are sent one at a
// time, in order, at the component's default keyParallelism of 1. This client leaves
// keyParallelism off too, so that default is whatever the component's config says (1 unless
// `config:update` changed it).
//
// scrapePool does not retry and runs at most 2 jobs at once, and at most 1 fetch per host: each
// fetch is enqueued with its url's host as `key` (scrape.scrapeSite), so a site gets one request at
// a time, its pages in the order they were asked for, while other hosts' fetches run beside it.
// Because `maxParallelism` and `keyParallelism` are set on this client, the client writes them to
// the component's config on every enqueue and cancel through it (including the store jobs
// recordOutcome enqueues), so a run-time change to scrapePool's config lasts only until the next
// one. To scale a pool at run time, leave them off its client, as emailPool does. (A key's own
// setting, jobs.setKeyParallelism, and a pause, jobs.pauseKey, are stored apart from the config:
// no client option overwrites them.)
//
// llmPool runs tasks, not actions: many summaries wait on a (simulated) model at once inside one
// executor action (llm.run, 50 at a time), so its maxParallelism, the tasks in flight across all its
// executors, is in the hundreds, far above what a pool of ordinary actions should get (each of those
// holds one of the deployment's concurrent action slots while it waits). It retries a failed
// summary: 3 attempts, backoff from 1 s, doubling. Like scrapePool's, its client sets
// maxParallelism, so that is written to its config on every enqueue.
import { v, type Infer } from "convex/values";
import { Workpool, type WorkId } from "convex-workpool";
import { components, internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";
import { vJobKind, vPoolName, vPriority } from "./schema.js";

export const emailPool = new Workpool(components.emailPool, { retryActionsByDefault: true });
export const scrapePool = new Workpool(components.scrapePool, {
  maxParallelism: 2,
  keyParallelism: 1,
});
export const llmPool = new Workpool(components.llmPool, {
  maxParallelism: 200,
  retryActionsByDefault: true,
  defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 1000, base: 2 },
});

export type PoolName = Infer<typeof vPoolName>;
export const pools: Record<PoolName, Workpool> = { emailPool, scrapePool, llmPool };

/**
 * What the app passes as onComplete's context: enough to find the job in its own tables. `poolKey`
 * is the pool's `key` the job was enqueued with, if any. `key` is left out for a batch enqueued in
 * one call (llm.summarizePages): a batch's options, context included, are shared by all its jobs, so
 * recordOutcome finds each job's key in the `jobs` table by its work id.
 */
export const vJobContext = v.object({
  pool: vPoolName,
  key: v.optional(v.string()),
  kind: vJobKind,
  poolKey: v.optional(v.string()),
  priority: v.optional(vPriority),
});
export type JobContext = Infer<typeof vJobContext>;
/** A job as the `jobs` table records it: its context, with its own key. */
export type TrackedJob = JobContext & { key: string };

/** Records an enqueued job in the app's `jobs` table. */
export async function track(ctx: MutationCtx, job: TrackedJob, workId: WorkId): Promise<void> {
  await ctx.db.insert("jobs", { ...job, workId, enqueuedAt: Date.now() });
}

/** The app's key of a job: its context's, or (for a batch) its `jobs` row's. */
async function keyOf(ctx: MutationCtx, context: JobContext, workId: WorkId): Promise<string> {
  if (context.key !== undefined) return context.key;
  const job = await ctx.db
    .query("jobs")
    .withIndex("by_pool_workId", (q) => q.eq("pool", context.pool).eq("workId", workId))
    .unique();
  // The enqueue and its `jobs` row commit together, and onComplete runs after: a missing row is a bug.
  if (job === null) throw new Error(`example: no jobs row for ${context.pool} job ${workId}`);
  return job.key;
}

/**
 * onComplete of every job in all three pools (defineOnComplete only builds an internal mutation, so
 * one definition serves them all). Runs exactly once per job, in its own transaction: records the
 * outcome, and when a page fetch succeeded, enqueues the mutation job that stores the page.
 */
export const recordOutcome = emailPool.defineOnComplete({
  context: vJobContext,
  handler: async (ctx: MutationCtx, { workId, context, result }) => {
    await ctx.db.insert("outcomes", {
      pool: context.pool,
      workId,
      key: await keyOf(ctx, context, workId),
      kind: result.kind,
      error: result.kind === "failed" ? result.error : undefined,
      returnValue: result.kind === "success" ? result.returnValue : undefined,
      finishedAt: Date.now(),
    });
    if (context.kind === "fetch" && result.kind === "success") {
      const page = result.returnValue as { url: string; bytes: number };
      const next: TrackedJob = { pool: "scrapePool", key: `store:${page.url}`, kind: "store" };
      const id = await scrapePool.enqueueMutation(ctx, internal.scrape.storePage, page, {
        onComplete: internal.pools.recordOutcome,
        context: next,
      });
      await track(ctx, next, id);
    }
  },
});
