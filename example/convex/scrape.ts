// Scraping through scrapePool (at most 2 at once, no retries): an action fetches a page; when it
// succeeds, onComplete (pools.recordOutcome) enqueues the mutation job that stores it. Each fetch is
// keyed by its url's host, so a host is fetched one page at a time, in the order asked for, while
// other hosts' fetches run beside it (scrapePool's keyParallelism is 1).
import { v } from "convex/values";
import type { WorkId } from "convex-workpool";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation, mutation } from "./_generated/server.js";
import { scrapePool, track, type TrackedJob } from "./pools.js";
import { attemptFails, chance, sleep, workMs } from "./sim.js";

const vSim = { ms: v.number(), failRate: v.number(), seed: v.number() };

/** Fetches one page (simulated); fails when the seeded rule says so. */
export const fetchPage = internalAction({
  args: { key: v.string(), url: v.string(), ...vSim },
  returns: v.object({ url: v.string(), bytes: v.number() }),
  handler: async (
    ctx,
    { key, url, ms, failRate, seed },
  ): Promise<{ url: string; bytes: number }> => {
    const attempt: number = await ctx.runMutation(internal.attempts.start, { key });
    await sleep(workMs(seed, key, ms));
    const fails = attemptFails(seed, key, attempt, failRate);
    const error = fails ? `HTTP 503 from ${url}` : undefined;
    await ctx.runMutation(internal.attempts.end, { key, attempt, error });
    if (error) throw new Error(error);
    return { url, bytes: 1000 + Math.floor(chance(seed, key, -1) * 50_000) };
  },
});

/** The mutation job: stores a fetched page (once per url). */
export const storePage = internalMutation({
  args: { url: v.string(), bytes: v.number() },
  returns: v.null(),
  handler: async (ctx, { url, bytes }) => {
    const existing = await ctx.db
      .query("pages")
      .withIndex("by_url", (q) => q.eq("url", url))
      .unique();
    if (existing) await ctx.db.patch("pages", existing._id, { bytes });
    else await ctx.db.insert("pages", { url, bytes });
    return null;
  },
});

/** The host of an absolute url (e.g. "example.com" of "https://example.com/a"); throws naming it if
 * it is not one. */
function hostOf(url: string): string {
  let host = "";
  try {
    host = new URL(url).host;
  } catch {
    // Reported below.
  }
  if (host === "") throw new Error(`not an absolute url with a host: ${JSON.stringify(url)}`);
  return host;
}

/**
 * Enqueues one fetch per url, keyed by the url's host (pages of one host are fetched one at a time,
 * in this order); returns their work ids in the same order.
 */
export const scrapeSite = mutation({
  args: { urls: v.array(v.string()), ...vSim },
  returns: v.array(v.string()),
  handler: async (ctx, { urls, ms, failRate, seed }): Promise<WorkId[]> => {
    const ids: WorkId[] = [];
    for (const url of urls) {
      const poolKey = hostOf(url);
      const context: TrackedJob = {
        pool: "scrapePool",
        key: `fetch:${url}`,
        kind: "fetch",
        poolKey,
      };
      const id: WorkId = await scrapePool.enqueueAction(
        ctx,
        internal.scrape.fetchPage,
        { key: context.key, url, ms, failRate, seed },
        { onComplete: internal.pools.recordOutcome, context, key: poolKey },
      );
      await track(ctx, context, id);
      ids.push(id);
    }
    return ids;
  },
});
