// The app's two pools, and the onComplete both use to record how each job ended.
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
import { v, type Infer } from "convex/values";
import { Workpool, type WorkId } from "convex-workpool";
import { components, internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";
import { vPoolName, vPriority } from "./schema.js";

export const emailPool = new Workpool(components.emailPool, { retryActionsByDefault: true });
export const scrapePool = new Workpool(components.scrapePool, {
  maxParallelism: 2,
  keyParallelism: 1,
});

export type PoolName = Infer<typeof vPoolName>;
export const pools: Record<PoolName, Workpool> = { emailPool, scrapePool };

/**
 * What the app passes as onComplete's context: enough to find the job in its own tables. `poolKey`
 * is the pool's `key` the job was enqueued with, if any.
 */
export const vJobContext = v.object({
  pool: vPoolName,
  key: v.string(),
  kind: v.union(v.literal("email"), v.literal("fetch"), v.literal("store")),
  poolKey: v.optional(v.string()),
  priority: v.optional(vPriority),
});
export type JobContext = Infer<typeof vJobContext>;

/** Records an enqueued job in the app's `jobs` table. */
export async function track(ctx: MutationCtx, context: JobContext, workId: WorkId): Promise<void> {
  await ctx.db.insert("jobs", { ...context, workId, enqueuedAt: Date.now() });
}

/**
 * onComplete of every job in both pools (defineOnComplete only builds an internal mutation, so one
 * definition serves both). Runs exactly once per job, in its own transaction: records the outcome,
 * and when a page fetch succeeded, enqueues the mutation job that stores the page.
 */
export const recordOutcome = emailPool.defineOnComplete({
  context: vJobContext,
  handler: async (ctx: MutationCtx, { workId, context, result }) => {
    await ctx.db.insert("outcomes", {
      pool: context.pool,
      workId,
      key: context.key,
      kind: result.kind,
      error: result.kind === "failed" ? result.error : undefined,
      returnValue: result.kind === "success" ? result.returnValue : undefined,
      finishedAt: Date.now(),
    });
    if (context.kind === "fetch" && result.kind === "success") {
      const page = result.returnValue as { url: string; bytes: number };
      const next: JobContext = { pool: "scrapePool", key: `store:${page.url}`, kind: "store" };
      const id = await scrapePool.enqueueMutation(ctx, internal.scrape.storePage, page, {
        onComplete: internal.pools.recordOutcome,
        context: next,
      });
      await track(ctx, next, id);
    }
  },
});
