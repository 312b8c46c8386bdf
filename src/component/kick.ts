/**
 * Waking the loop. Every enqueue, cancel and completion calls `kickLoop` with the segment its row went
 * into. It reads `runStatus` and writes it only when the loop must be woken (idle, or asleep until a
 * later segment), so that while the loop runs, callers only read: they never write a document the
 * loop writes. Never starts work itself.
 */
import { internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";
import { segmentStart } from "./segments.js";
import { armWatchdog } from "./watchdog.js";

export async function kickLoop(ctx: MutationCtx, segment: number): Promise<void> {
  const status = await ctx.db.query("runStatus").first();
  if (status === null) {
    await scheduleMain(ctx, 0, segment);
    const watchdogArmed = await armWatchdog(ctx, 0);
    await ctx.db.insert("runStatus", { state: { kind: "running" }, generation: 0, watchdogArmed });
    return;
  }
  const state = status.state;
  switch (state.kind) {
    case "running":
      return;
    case "scheduled":
      if (state.segment <= segment) return;
      // The sleeping loop would wake too late for this work: wake it earlier. The same generation is
      // passed, so whichever of the two runs second is stale; cancel the later one to save a call.
      await ctx.scheduler.cancel(state.scheduledId);
      break;
    case "idle":
      break;
    default:
      state satisfies never;
  }
  await scheduleMain(ctx, status.generation, segment);
  const watchdogArmed = status.watchdogArmed || (await armWatchdog(ctx, status.generation));
  await ctx.db.patch("runStatus", status._id, { state: { kind: "running" }, watchdogArmed });
}

async function scheduleMain(ctx: MutationCtx, generation: number, segment: number) {
  const at = Math.max(Date.now(), segmentStart(segment));
  return await ctx.scheduler.runAt(at, internal.loop.main, { generation });
}
