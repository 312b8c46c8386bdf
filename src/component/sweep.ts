/**
 * The sweeper: deletes finished jobs once their status TTL has passed, with their payloads, in
 * bounded batches. Runs in its own transaction (scheduled by the loop) so that the loop never reads
 * payload rows. Never touches an unfinished job.
 */
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import { internalMutation } from "./_generated/server.js";
import type { Pass } from "./pass.js";

/** Finished jobs deleted per sweep transaction: with their payloads (up to 1 MB each), 50 stays
 * inside the per-transaction read limits. */
export const SWEEP_BATCH = 50;
/** The loop schedules a sweep at most this often; expired rows wait at most this long past TTL. */
export const SWEEP_INTERVAL_MS = 10_000;

export const sweep = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    const now = Date.now();
    const expired = await ctx.db
      .query("work")
      .withIndex("by_expiresAt", (q) => q.gte("expiresAt", 0).lte("expiresAt", now))
      .take(SWEEP_BATCH);
    for (const work of expired) {
      if (work.payloadId) await ctx.db.delete("payloads", work.payloadId);
      if (work.resultPayloadId) await ctx.db.delete("payloads", work.resultPayloadId);
      await ctx.db.delete("work", work._id);
    }
    if (expired.length === SWEEP_BATCH) {
      await ctx.scheduler.runAfter(0, internal.sweep.sweep, {});
    }
    return null;
  },
});

/** The earliest time a finished job expires, if any does. */
export async function firstExpiry(pass: Pass): Promise<number | undefined> {
  const first = await pass.ctx.db
    .query("work")
    .withIndex("by_expiresAt", (q) => q.gte("expiresAt", 0))
    .first();
  return first?.expiresAt;
}

/** Loop stage: schedules a sweep when rows have expired and none was scheduled recently. */
export async function maybeScheduleSweep(pass: Pass, earliestExpiry: number | undefined) {
  if (earliestExpiry === undefined || earliestExpiry > pass.now) return;
  if (pass.now < pass.state.nextSweepAt) return;
  await pass.ctx.scheduler.runAfter(0, internal.sweep.sweep, {});
  pass.state.nextSweepAt = pass.now + SWEEP_INTERVAL_MS;
}
