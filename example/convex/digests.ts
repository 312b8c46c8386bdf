// A recurring email per user through emailPool (API-EXTENSIONS §10): the daily digest at 09:00 in
// the user's own time zone. The schedule is created in the mutation that decides it (here, the one
// a user calls to subscribe), so it exists exactly when that mutation commits; each run is an
// ordinary emailPool job, retried as emailPool retries, with its outcome recorded like any email's.
import { v } from "convex/values";
import type { ScheduleId, ScheduleInfo } from "convex-workpool";
import { internal } from "./_generated/api.js";
import { mutation, query } from "./_generated/server.js";
import { emailPool } from "./pools.js";

const vSim = { ms: v.number(), failRate: v.number(), seed: v.number() };

/** The schedule's name for one address: one digest per user (scheduling again replaces it). */
function digestName(to: string): string {
  return `digest:${to}`;
}

/** When a digest goes out unless the subscriber says otherwise: 09:00 every day. */
const DAILY_AT_NINE = "0 9 * * *";

/**
 * Subscribes `to` to a daily digest at 09:00 in `timezone` (an IANA name, e.g.
 * "America/New_York"), or on `cron` when given (the demo sends one every few seconds). A digest
 * still being sent at the next time makes that time be skipped, and a time missed by more than an
 * hour (a deployment that was down) is not sent late.
 */
export const subscribe = mutation({
  args: { to: v.string(), timezone: v.string(), cron: v.optional(v.string()), ...vSim },
  returns: v.string(),
  handler: async (ctx, { to, timezone, cron, ms, failRate, seed }): Promise<ScheduleId> => {
    return await emailPool.scheduleAction(
      ctx,
      digestName(to),
      internal.emails.send,
      { key: digestName(to), to, ms, failRate, seed },
      { cron: cron ?? DAILY_AT_NINE, timezone, overlap: "skip", catchupWindowMs: 60 * 60 * 1000 },
    );
  },
});

/** Ends `to`'s digest; false when there was none. */
export const unsubscribe = mutation({
  args: { to: v.string() },
  returns: v.boolean(),
  handler: async (ctx, { to }) => await emailPool.unschedule(ctx, digestName(to)),
});

/** `to`'s digest schedule: its next time, last run and counts; null when not subscribed. */
export const digest = query({
  args: { to: v.string() },
  handler: async (ctx, { to }): Promise<ScheduleInfo | null> =>
    await emailPool.getSchedule(ctx, digestName(to)),
});
