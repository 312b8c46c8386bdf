// Summaries through llmPool: an executor whose task waits on a (simulated) model call, 50 at once
// inside one action, and the mutation that enqueues a batch of them. A summary is a job of llmPool
// like any other (status, cancel, list, stats, onComplete), but no action is started per job: the
// pool starts an executor action when tasks are due and hands each up to 50 of them.
import { v } from "convex/values";
import { type WorkId } from "convex-workpool";
import { internal } from "./_generated/api.js";
import { mutation } from "./_generated/server.js";
import { llmPool, track, type JobContext } from "./pools.js";
import { attemptFails, sleep, workMs } from "./sim.js";

/** Summaries one executor action waits on at once: model calls spend their time waiting. */
export const SUMMARIZE_CONCURRENCY = 50;
/** How long one attempt of a summary may take before the pool fails it (and retries it). */
const SUMMARIZE_TIMEOUT_MS = 30_000;

const vSim = { ms: v.number(), failRate: v.number(), seed: v.number() };

/** What a summary returns (onComplete records it as the outcome's returnValue). */
export type Summary = { summary: string; attempts: number };

/**
 * The executor (the pool starts it; export it, never call it). Its one task, `summarize`, waits
 * about `ms` for the "model" (sim.ts, seeded) and fails an attempt when the seeded rule says so; it
 * passes `signal` on, as it would to `fetch`, so a canceled summary stops waiting at once.
 */
export const run = llmPool.executor({
  concurrency: SUMMARIZE_CONCURRENCY,
  tasks: {
    summarize: {
      args: { key: v.string(), url: v.string(), ...vSim },
      timeoutMs: SUMMARIZE_TIMEOUT_MS,
      // The return type is written out, as for any function of a module that uses `internal`.
      handler: async (
        _ctx,
        { key, url, ms, failRate, seed },
        { attempt, signal },
      ): Promise<Summary> => {
        await sleep(workMs(seed, key, ms), signal);
        // `attempt` counts from 0; sim.ts numbers attempts from 1, as the attempts table does.
        if (attemptFails(seed, key, attempt + 1, failRate)) {
          throw new Error(`model 529: overloaded (${key}, attempt ${attempt + 1})`);
        }
        return { summary: `the gist of ${url}`, attempts: attempt + 1 };
      },
    },
  },
});

/**
 * Enqueues one summary per page, in one call (enqueueTaskBatch); returns their work ids in the same
 * order. A batch's options are shared by all its jobs, so the onComplete context names no job:
 * recordOutcome finds each job's key in the `jobs` table, written here.
 */
export const summarizePages = mutation({
  args: { pages: v.array(v.object({ key: v.string(), url: v.string() })), ...vSim },
  returns: v.array(v.string()),
  handler: async (ctx, { pages, ms, failRate, seed }): Promise<WorkId[]> => {
    const context: JobContext = { pool: "llmPool", kind: "summary" };
    const ids = await llmPool.enqueueTaskBatch(
      ctx,
      internal.llm.run,
      "summarize",
      pages.map(({ key, url }) => ({ key, url, ms, failRate, seed })),
      { onComplete: internal.pools.recordOutcome, context },
    );
    for (const [i, id] of ids.entries()) await track(ctx, { ...context, key: pages[i].key }, id);
    return ids;
  },
});
