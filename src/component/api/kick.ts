/**
 * Waking the loop, and choosing the segment a caller writes into.
 *
 * The enqueue path (`targetFor` + `wakeFor`) never reads what the loop writes: it writes into
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

/** How far past the next segment a job may be due and still be filed in its own segment, with a
 * pass of its own scheduled there. A job due later is filed "early" into the next segment, whose
 * one pass the loop uses to move it to its due segment, where it wakes itself (mainLoop/refile.ts). So the passes one transaction schedules are bounded by this number (plus
 * one), not by how many distinct due times it enqueues: 1,500 reminders a second apart in one
 * mutation schedule a dozen passes, far inside Convex's 1,000 per transaction. 10 segments (1 s)
 * keeps jobs due within a second as cheap as before (no refile). */
export const OWN_WAKE_SEGMENTS = 10;

/** The segment an enqueue writes a job into when it is filed in its own: the next one, or the one
 * it is due in if later. */
export function enqueueSegment(now: number, dueSegment: number): number {
  return Math.max(segmentOf(now) + 1, dueSegment);
}

/** A pass an enqueue scheduled for a segment's start, recorded on the row it writes there. */
export type Wake = Doc<"pendingStart">["wake"];

/** Where an enqueue writes a job's start row: its segment, the wake-up to record on the row (when
 * this enqueue scheduled the segment's pass), and whether the row is filed early (before its due
 * segment, for the loop to move). */
export type Target = { segment: number; wake: Wake; early?: true };

/**
 * Where an enqueue files a job due at `runAt`, making sure of a pass there (`wakeFor`). `known`
 * holds the segments this call already made sure of (an enqueueBatch passes one set for all its
 * jobs), so that only the first job into a segment looks.
 */
export async function targetFor(
  ctx: MutationCtx,
  now: number,
  dueSegment: number,
  known: Set<number> = new Set(),
): Promise<Target> {
  const next = segmentOf(now) + 1;
  const own = enqueueSegment(now, dueSegment);
  const ensure = async (segment: number): Promise<Wake> => {
    if (known.has(segment)) return undefined;
    known.add(segment);
    return await wakeFor(ctx, segment);
  };
  if (own - next <= OWN_WAKE_SEGMENTS || known.has(own)) {
    return { segment: own, wake: await ensure(own) };
  }
  // Filed early, with the next segment's pass: one index read per enqueue (Convex counts 4,096
  // per transaction, and one mutation may enqueue a thousand jobs one by one).
  return { segment: next, wake: await ensure(next), early: true };
}

/** True when a row of `segment` records the pass an enqueue scheduled there. */
async function wakeRecorded(ctx: MutationCtx, segment: number): Promise<boolean> {
  const row = await ctx.db
    .query("pendingStart")
    .withIndex("by_wake", (q) => q.eq("wake.segment", segment))
    .first();
  return row !== null;
}

/**
 * Makes sure a pass runs at the start of `segment`, where an enqueue is about to write. Returns the
 * wake-up to record on the row it writes there when it scheduled that pass itself (the first
 * enqueue into the segment); undefined when a row of the segment already records one. The pass runs
 * after this transaction commits, so it reads what it wrote.
 */
export async function wakeFor(ctx: MutationCtx, segment: number): Promise<Wake> {
  if (await wakeRecorded(ctx, segment)) return undefined;
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
