// Sending email through emailPool: an action that may fail (and is retried by the pool), enqueued
// by a mutation.
import { v } from "convex/values";
import { NonRetryableError, type WorkId } from "convex-workpool";
import { internal } from "./_generated/api.js";
import { internalAction, mutation } from "./_generated/server.js";
import { emailPool, track, type TrackedJob } from "./pools.js";
import { vPriority } from "./schema.js";
import { attemptFails, sleep, workMs } from "./sim.js";

const vSim = { ms: v.number(), failRate: v.number(), seed: v.number() };

/**
 * Sends one email (simulated: takes about `ms`, and an attempt fails when the seeded rule says so).
 * An address without "@" bounces: that is not worth retrying, so it throws NonRetryableError.
 */
export const send = internalAction({
  args: { key: v.string(), to: v.string(), ...vSim },
  returns: v.object({ messageId: v.string() }),
  handler: async (ctx, { key, to, ms, failRate, seed }): Promise<{ messageId: string }> => {
    const attempt: number = await ctx.runMutation(internal.attempts.start, { key });
    await sleep(workMs(seed, key, ms));
    let error: Error | undefined;
    if (!to.includes("@")) error = new NonRetryableError(`bounced: ${to} is not an address`);
    else if (attemptFails(seed, key, attempt, failRate)) {
      error = new Error(`smtp 451: try again later (${key}, attempt ${attempt})`);
    }
    await ctx.runMutation(internal.attempts.end, { key, attempt, error: error?.message });
    if (error) throw error;
    return { messageId: `${key}@attempt-${attempt}` };
  },
});

/**
 * Enqueues one email per entry; returns their work ids in the same order. `key` names the email in
 * the app's tables; an entry's optional `poolKey` is passed to the pool as its `key`: emails sharing
 * one are sent one at a time (emailPool's keyParallelism, 1 by default), in the order given, a retry
 * keeping its place (e.g. one recipient's messages, so they arrive in order). An entry's optional
 * `priority` is the pool's: due "high" emails go before "normal" ones, and those before "low".
 */
export const sendEmails = mutation({
  args: {
    emails: v.array(
      v.object({
        key: v.string(),
        to: v.string(),
        poolKey: v.optional(v.string()),
        priority: v.optional(vPriority),
      }),
    ),
    ...vSim,
  },
  returns: v.array(v.string()),
  handler: async (ctx, { emails, ms, failRate, seed }): Promise<WorkId[]> => {
    const ids: WorkId[] = [];
    for (const { key, to, poolKey, priority } of emails) {
      const context: TrackedJob = { pool: "emailPool", key, kind: "email", poolKey, priority };
      const id: WorkId = await emailPool.enqueueAction(
        ctx,
        internal.emails.send,
        { key, to, ms, failRate, seed },
        { onComplete: internal.pools.recordOutcome, context, key: poolKey, priority },
      );
      await track(ctx, context, id);
      ids.push(id);
    }
    return ids;
  },
});
