/**
 * Waking the loop. Every enqueue, cancel and completion calls `kickLoop` with the segment its row went
 * into. It reads `runStatus` and writes it only when the loop must be woken (idle, or asleep until a
 * later segment), so that while the loop runs, callers only read: they never write a document the
 * loop writes. Never starts work itself.
 */
import { internal } from "./_generated/api.js";
import type { MutationCtx } from "./_generated/server.js";
import { nextSegment, segmentStart } from "./segments.js";
import { armWatchdog } from "./watchdog.js";

export async function kickLoop(ctx: MutationCtx, segment: number): Promise<void> {
  const status = await ctx.db.query("runStatus").first();
  if (status !== null) {
    const state = status.state;
    switch (state.kind) {
      case "running":
        return;
      case "scheduled":
        if (state.segment <= segment) return;
        // The sleeping loop would wake too late for this work: wake it earlier. The same generation
        // is passed, so whichever of the two runs second is stale; cancel the later one to save a
        // call.
        await ctx.scheduler.cancel(state.scheduledId);
        break;
      case "idle":
        break;
      default:
        state satisfies never;
    }
  }
  const generation = status?.generation ?? 0;
  const scheduledId = await scheduleMain(ctx, generation, segment);
  // "running" promises that the loop reads the next segment; a wake for a later segment is a sleep.
  const next =
    segment <= nextSegment(Date.now())
      ? { kind: "running" as const }
      : { kind: "scheduled" as const, segment, scheduledId };
  const watchdogArmed = status?.watchdogArmed || (await armWatchdog(ctx, generation));
  if (status === null) await ctx.db.insert("runStatus", { state: next, generation, watchdogArmed });
  else await ctx.db.patch("runStatus", status._id, { state: next, watchdogArmed });
}

async function scheduleMain(ctx: MutationCtx, generation: number, segment: number) {
  const at = Math.max(Date.now(), segmentStart(segment));
  return await ctx.scheduler.runAt(at, internal.loop.main, { generation });
}
