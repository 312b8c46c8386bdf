/**
 * Waking the loop, and choosing the segment a caller writes into.
 *
 * The enqueue path (`enqueueSegment` + `wakeFor`) never reads what the loop writes: it writes into
 * the next segment (or the segment its job is due in), which no pass is reading yet, and makes sure
 * one `main` is scheduled for that segment's start: the first enqueue into a segment schedules it
 * and records it on its own `pendingStart` row (`wake`), which later enqueues into the segment find
 * (index `by_wake`, which the loop never reads). So an enqueue and a pass never conflict, whatever
 * the loop is doing, and a wake-up costs no document of its own; the price is that a job enqueued
 * into an idle pool waits for the next segment boundary (at most SEGMENT_MS).
 *
 * Cancels, completions and settings ask `claimSegment` instead. It reads `runStatus` and writes it
 * only when the loop must be woken (idle, or asleep until a later segment), so that while the loop
 * runs, callers only read: they never write a document the loop writes.
 *
 * - Loop running (scheduled for the next segment): write into the next segment, which the loop has
 *   not read yet.
 * - Loop asleep or idle: nothing is reading now, so write into the current segment and wake the loop
 *   at once ("waking"): an idle pool starts work within milliseconds, and a full pool refills a freed
 *   slot at once. Callers in the same segment join the waking pass without writing anything.
 * Correctness never depends on the choice: the loop re-reads every due segment on each pass, and a
 * write that races a pass lands in a range the pass read, which Convex's OCC serializes.
 * Never starts work itself.
 */
import { internal } from "../_generated/api.js";
import type { Doc } from "../_generated/dataModel.js";
import type { MutationCtx } from "../_generated/server.js";
import { segmentOf, segmentStart } from "../model/segments.js";
import { armWakeWatch, armWatchdog } from "../mainLoop/watchdog.js";

/** The segment an enqueue writes a job into: the next one, or the one it is due in if later. */
export function enqueueSegment(now: number, dueSegment: number): number {
  return Math.max(segmentOf(now) + 1, dueSegment);
}

/** A pass an enqueue scheduled for a segment's start, recorded on the row it writes there. */
export type Wake = Doc<"pendingStart">["wake"];

/** Where an enqueue writes a job's start row: its segment, and the wake-up to record on the row
 * (when this enqueue scheduled the segment's pass). */
export type Target = { segment: number; wake: Wake };

/**
 * Makes sure a pass runs at the start of `segment`, where an enqueue is about to write. Returns the
 * wake-up to record on the row it writes there when it scheduled that pass itself (the first
 * enqueue into the segment); undefined when a row of the segment already records one. The pass runs
 * after this transaction commits, so it reads what it wrote.
 */
export async function wakeFor(ctx: MutationCtx, segment: number): Promise<Wake> {
  const existing = await ctx.db
    .query("pendingStart")
    .withIndex("by_wake", (q) => q.eq("wake.segment", segment))
    .first();
  if (existing !== null) return undefined;
  const scheduledId = await ctx.scheduler.runAt(
    segmentStart(segment),
    internal.mainLoop.main.main,
    {},
  );
  await armWakeWatch(ctx);
  return { segment, scheduledId };
}

/**
 * Returns the segment to write a pending row into, waking the loop if it would not read that row in
 * time. `dueSegment` is the first segment the row may be acted on in (later for a delayed job).
 */
export async function claimSegment(ctx: MutationCtx, dueSegment?: number): Promise<number> {
  const now = Date.now();
  const current = segmentOf(now);
  const target = Math.max(current, dueSegment ?? current);
  const status = await ctx.db.query("runStatus").first();
  if (status !== null) {
    const state = status.state;
    switch (state.kind) {
      case "running":
        return Math.max(current + 1, target);
      case "waking":
        // A pass is scheduled to run now and will read up to its own (current or later) segment.
        return target;
      case "scheduled":
        if (state.segment <= target) return Math.max(current + 1, target);
        // The sleeping loop would wake too late: wake it now. The same generation is passed, so
        // whichever of the two runs second is stale; cancel the later one to save a call.
        // (Only if it has not begun: a pass already under way is simply stale or joins the work.)
        if ((await ctx.db.system.get(state.scheduledId))?.state.kind === "pending") {
          await ctx.scheduler.cancel(state.scheduledId);
        }
        break;
      case "idle":
        break;
      default:
        state satisfies never;
    }
  }
  const generation = status?.generation ?? 0;
  const at = Math.max(now, segmentStart(target));
  const scheduledId = await ctx.scheduler.runAt(at, internal.mainLoop.main.main, { generation });
  const next =
    target === current
      ? { kind: "waking" as const, segment: current, scheduledId }
      : { kind: "scheduled" as const, segment: target, scheduledId };
  const watchdogArmed = status?.watchdogArmed || (await armWatchdog(ctx, generation));
  if (status === null) await ctx.db.insert("runStatus", { state: next, generation, watchdogArmed });
  else await ctx.db.patch("runStatus", status._id, { state: next, watchdogArmed });
  return target;
}
