// The app's two pools, and the onComplete both use to record how each job ended.
//
// emailPool retries failed actions (with the default backoff: 5 attempts, 250 ms doubling) and runs
// at the parallelism stored in its component config: 10 unless an operator changes it at run time
// (jobs.setMaxParallelism, or `npx convex run`), and such a change stays.
//
// scrapePool does not retry and runs at most 2 jobs at once. Because `maxParallelism` is set on this
// client, the client writes 2 to the component's config on every enqueue and cancel through it
// (including the store jobs recordOutcome enqueues), so a run-time change to scrapePool lasts only
// until the next one. To scale a pool at run time, leave maxParallelism off its client, as emailPool
// does.
import { v, type Infer } from "convex/values";
import { Workpool, type WorkId } from "convex-workpool";
import { components, internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";
import { vPoolName } from "./schema.js";

export const emailPool = new Workpool(components.emailPool, { retryActionsByDefault: true });
export const scrapePool = new Workpool(components.scrapePool, { maxParallelism: 2 });

export type PoolName = Infer<typeof vPoolName>;
export const pools: Record<PoolName, Workpool> = { emailPool, scrapePool };

/** What the app passes as onComplete's context: enough to find the job in its own tables. */
export const vJobContext = v.object({
  pool: vPoolName,
  key: v.string(),
  kind: v.union(v.literal("email"), v.literal("fetch"), v.literal("store")),
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
