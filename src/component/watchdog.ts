/**
 * The watchdog: restarts a loop that died. If a `main` pass throws, its transaction rolls back —
 * including the scheduling of the next pass — while `runStatus` still tells callers the loop is
 * awake, so nobody would wake it. Armed when a caller wakes the loop, the watchdog checks once per
 * interval that the loop's generation moved; if it did not, it schedules `main` again and logs an
 * error. It stops when the loop is idle. Never starts or finishes work itself.
 */
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import { internalMutation, type MutationCtx } from "./_generated/server.js";
import { readConfig } from "./config.js";
import { createLogger } from "./logging.js";
import { segmentStart } from "./segments.js";

/** How often the watchdog looks. An awake loop passes at least every segment, and a sleeping one is
 * due at a known time, so a minute without progress is a dead loop; one check a minute is cheap. */
export const WATCHDOG_INTERVAL_MS = 60_000;

/** Schedules the first check; called by a caller that wakes the loop when none is armed. */
export async function armWatchdog(ctx: MutationCtx, generation: number): Promise<boolean> {
  await ctx.scheduler.runAfter(WATCHDOG_INTERVAL_MS, internal.watchdog.check, {
    generation,
  });
  return true;
}

export const check = internalMutation({
  args: { generation: v.number() },
  returns: v.null(),
  handler: async (ctx, { generation }) => {
    const status = await ctx.db.query("runStatus").first();
    if (!status) return null;
    const now = Date.now();
    const state = status.state;
    if (state.kind === "idle") {
      await ctx.db.patch("runStatus", status._id, { watchdogArmed: false });
      return null;
    }
    const loop = await ctx.db.query("loopState").first();
    const current = loop?.generation ?? 0;
    const overdue =
      state.kind === "running" || segmentStart(state.segment) + WATCHDOG_INTERVAL_MS < now;
    if (current === generation && overdue) {
      const log = createLogger((await readConfig(ctx.db)).logLevel);
      log.error("loopStalled", {
        message: "the loop made no progress for a watchdog interval; restarting it",
        generation: current,
      });
      await ctx.scheduler.runAfter(0, internal.loop.main, { generation: current });
    }
    // A loop asleep until a later segment needs no look before that segment is overdue.
    const nextCheckAt =
      state.kind === "scheduled"
        ? Math.max(now, segmentStart(state.segment)) + WATCHDOG_INTERVAL_MS
        : now + WATCHDOG_INTERVAL_MS;
    await ctx.scheduler.runAt(nextCheckAt, internal.watchdog.check, { generation: current });
    return null;
  },
});
