/**
 * The watchdog: restarts a loop that died. If a `main` pass throws, its transaction rolls back —
 * including the scheduling of the next pass — while `runStatus` still tells callers the loop is
 * awake, so nobody would wake it. Armed when the loop leaves idle (or a caller wakes it), the
 * watchdog checks twice per interval. The loop is alive while the pass it (or a waking caller)
 * scheduled is still due or running, as the scheduler tells (`_scheduled_functions`); when none is,
 * it schedules `main` again and logs an error. The verdict never rests on how much time passed, so
 * a clock that jumps (a test's fake timers, a backed-up scheduler) is not a stall; nor on whether
 * the generation moved since the last check (a loop that moved and then died is dead now).
 * It stops when the loop is idle. Never starts or finishes work itself: a pass it restarts after
 * failures is narrow (one stage at a time), and a job is set aside only when two narrow passes
 * failed on its outcome with a limit error (`restartPass`).
 * Enqueues wake the loop through wake-ups recorded on their own `pendingStart` rows (kick.ts);
 * `checkWakes` watches those.
 */
import { v } from "convex/values";
import { internal } from "../_generated/api.js";
import type { Doc, Id } from "../_generated/dataModel.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { readConfig } from "../config.js";
import { capErrorMessage } from "../model/errors.js";
import { createLogger } from "../model/logging.js";
import { COMPLETION_BATCH, COMPLETION_ROW_OUTCOMES } from "./complete.js";
import { readFrom, segmentOf, segmentStart } from "../model/segments.js";
import { stageOfError, type Narrow, type Stage } from "./pass.js";

/** The promise: a loop that died runs again within this. An awake loop passes at least every
 * segment and a sleeping one is due at a known time, so a minute without a pass is a dead loop. */
export const WATCHDOG_INTERVAL_MS = 60_000;

/** How often the watchdog looks: twice per interval, so that a pass that dies just after a check
 * is restarted within the interval even when the next check and the pass it schedules each start
 * seconds late (a busy scheduler). Two small transactions a minute while the loop is awake. */
export const WATCHDOG_CHECK_MS = WATCHDOG_INTERVAL_MS / 2;

/**
 * Arms the wake-ups' check if it is not armed: called by an enqueue that scheduled a wake. Reads and
 * writes only `wakeWatch`, which the loop never touches.
 */
export async function armWakeWatch(ctx: MutationCtx): Promise<void> {
  const watch = await ctx.db.query("wakeWatch").first();
  if (watch?.armed) return;
  await ctx.scheduler.runAfter(WATCHDOG_CHECK_MS, internal.mainLoop.watchdog.checkWakes, {});
  if (watch) await ctx.db.patch("wakeWatch", watch._id, { armed: true });
  else await ctx.db.insert("wakeWatch", { armed: true });
}

/**
 * Restarts the pass of a wake-up that failed. A wake-up is recorded on the `pendingStart` row of
 * the enqueue that scheduled it (kick.ts), and the loop deletes that row once a pass has read its
 * segment; so a recorded wake-up whose segment has begun and whose scheduled `main` failed or was
 * canceled (the scheduler says so; the clock alone proves nothing: a late pass is still pending)
 * marks work no pass may read: a new pass is scheduled and recorded on the row. A row whose pass
 * succeeded may stay (its job waits for a free slot), so the check keeps a cursor (`from`) past the
 * wake-ups settled in order and the rows already gone, so that its one bounded read never walks
 * the index entries of deleted rows. Disarms itself when no wake-up is left from there.
 */
export const checkWakes = internalMutation({
  args: {},
  returns: v.null(),
  handler: async (ctx) => {
    const now = Date.now();
    const watch = await ctx.db.query("wakeWatch").first();
    const rows = await ctx.db
      .query("pendingStart")
      .withIndex("by_wake", (q) => q.gte("wake.segment", watch?.from ?? 0))
      .take(WAKE_CHECK_BATCH);
    // The cursor moves past what no check needs to read again: rows gone (the loop deleted them:
    // their index entries would otherwise be walked by every later check), and wake-ups whose pass
    // ran. It stops at the first wake-up still to settle, and never passes where an enqueue may
    // still record one (the segment after its own; its clock may lag by the cursor margin).
    const newWakesFrom = readFrom(segmentOf(now) + 1);
    let from = watch?.from ?? 0;
    let settled = true; // every wake-up read so far had its pass run
    const stopAt = (segment: number) => {
      if (settled) from = Math.max(from, Math.min(segment, newWakesFrom));
      settled = false;
    };
    for (const row of rows) {
      const wake = row.wake!;
      if (wake.segment > segmentOf(now)) {
        stopAt(wake.segment);
        break;
      }
      const job = await ctx.db.system.get(wake.scheduledId);
      const kind = job?.state.kind;
      if (kind === "success") {
        if (settled) from = wake.segment + 1;
        continue;
      }
      stopAt(wake.segment);
      if (kind !== undefined && OUTSTANDING.has(kind)) continue;
      const log = createLogger((await readConfig(ctx.db)).logLevel);
      log.error("wakeFailed", {
        message: "a pass an enqueue scheduled failed or was canceled; scheduling another",
        segment: wake.segment,
      });
      const scheduledId = await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, {});
      await ctx.db.patch("pendingStart", row._id, { wake: { ...wake, scheduledId } });
      break;
    }
    // Nothing left from the cursor: every wake-up from it settled or is gone.
    if (rows.length === 0) from = Math.max(from, newWakesFrom);
    // A full batch may have more wake-ups after it: the next check reads on from the cursor.
    const left = rows.length === WAKE_CHECK_BATCH || rows.some((row) => row.wake!.segment >= from);
    if (watch) await ctx.db.patch("wakeWatch", watch._id, { from, armed: left });
    else await ctx.db.insert("wakeWatch", { from, armed: left });
    if (left)
      await ctx.scheduler.runAfter(WATCHDOG_CHECK_MS, internal.mainLoop.watchdog.checkWakes, {});
    return null;
  },
});

/** Due wake rows one check looks at: one restarted pass reads every segment before its own. */
const WAKE_CHECK_BATCH = 10;

/** Schedules the first check; called by a caller that wakes the loop when none is armed. */
export async function armWatchdog(ctx: MutationCtx, generation: number): Promise<boolean> {
  await ctx.scheduler.runAfter(WATCHDOG_CHECK_MS, internal.mainLoop.watchdog.check, {
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
    if (!(await passOutstanding(ctx, loop, state, current !== generation, now))) {
      await restartPass(ctx, status, loop, state, current, now);
    }
    // A loop asleep until a later segment needs no look before that segment is overdue.
    const nextCheckAt =
      state.kind === "scheduled"
        ? Math.max(now, segmentStart(state.segment)) + WATCHDOG_CHECK_MS
        : now + WATCHDOG_CHECK_MS;
    await ctx.scheduler.runAt(nextCheckAt, internal.mainLoop.watchdog.check, {
      generation: current,
    });
    return null;
  },
});

type RunState = Doc<"runStatus">["state"];

/** Outcomes a narrow chain settles one per pass after a failed pass: all a pass may take (its
 * batch, and the rest of the row it took last), so the one the failed pass met comes alone. (A
 * function, not a constant: complete.ts and this module import each other's modules.) */
export const narrowOutcomes = (): number => COMPLETION_BATCH + COMPLETION_ROW_OUTCOMES;

/**
 * Restarts a loop whose pass failed — the backstop for a pass that fails at commit whatever it
 * does (a limit met that the pass's budget did not foresee, a fault, Convex giving up on a
 * transaction that kept conflicting). The pass it starts is narrow (main.ts `narrowPass`): it
 * runs one stage alone, and hands on stage by stage to an ordinary pass; the stage the failed
 * pass names in its error (pass.ts `inStage`; "completions" when it names none: it failed at
 * commit) is split, on a small budget. A narrow pass that fails is restarted at its own stage,
 * split, and counted (`runStatus.failedPasses`) only when its error is one of Convex's
 * limits (`isLimitError`) and the loop stayed at one generation and stage: such passes met the
 * same first item. When two did, the stage is narrowed further: "completions" sets that outcome's
 * job aside as failed, with the error; any other stage is skipped once (nothing in it is lost: its
 * rows stay for the ordinary passes). A transient failure never counts, so it never sets a job
 * aside: the stage is simply tried again.
 */
async function restartPass(
  ctx: MutationCtx,
  status: Doc<"runStatus">,
  loop: Doc<"loopState"> | null,
  state: Exclude<RunState, { kind: "idle" }>,
  current: number,
  now: number,
): Promise<void> {
  const failed = await lastFailedPass(ctx, loop, state);
  const before = status.failedPasses;
  const error = capErrorMessage(failed.error);
  const left = narrowOutcomes();
  const limit = isLimitError(failed.error);
  let stage: Stage;
  let count = 0;
  let narrow: Narrow;
  if (failed.narrow === undefined) {
    // An ordinary pass: every stage gets a pass of its own, the one it failed in split.
    stage = stageOfError(failed.error) ?? "completions";
    narrow = { stage: "completions", left, failed: stage };
  } else {
    // A narrow pass: its stage again, split, until it failed twice with a limit error.
    stage = failed.narrow.stage ?? "completions";
    const same =
      before !== undefined &&
      before.generation === current &&
      (before.stage ?? "completions") === stage;
    count = (same ? before.count : 0) + (limit ? 1 : 0);
    narrow =
      count < 2
        ? { stage, left, failed: stage }
        : stage === "completions"
          ? { stage, left, failed: stage, setAside: error }
          : { stage, left, failed: stage, skip: true };
  }
  const log = createLogger((await readConfig(ctx.db)).logLevel);
  log.error("loopStalled", {
    message: "the loop's next pass failed or was canceled, and none is due; restarting it",
    generation: current,
    stage,
    limitError: limit,
    failedNarrowPasses: count,
    error: failed.error,
  });
  const scheduledId = await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, {
    generation: current,
    narrow,
  });
  // Recorded like a caller's wake-up, so the next check sees this pass as outstanding.
  await ctx.db.patch("runStatus", status._id, {
    state: { kind: "waking", segment: segmentOf(now), scheduledId },
    failedPasses: { count, generation: current, error, stage },
  });
}

/** Whether a pass's error is one of Convex's limits (a count or a size met: it would be met
 * again by the same work), rather than a passing failure (an OCC give-up, a commit fault, a
 * server restart) that the same work may pass on its next try. */
export function isLimitError(error: string): boolean {
  return /Convex limit|single function execution|too many|too much|too large|too long|too nested|exceeds/i.test(
    error,
  );
}

/** The loop's pass that failed, as the scheduler recorded it: its error, and its narrow
 * arguments when it was narrow. */
async function lastFailedPass(
  ctx: MutationCtx,
  loop: Doc<"loopState"> | null,
  state: Exclude<RunState, { kind: "idle" }>,
): Promise<{ error: string; narrow?: Narrow }> {
  const ids = [loop?.nextPassId, state.kind === "running" ? undefined : state.scheduledId];
  for (const id of ids) {
    if (id === undefined) continue;
    const job = await ctx.db.system.get(id);
    if (job?.state.kind === "failed") {
      // Convex records the error; a backend that keeps none (convex-test) still gets a reason.
      const error: string | undefined = job.state.error;
      const args = job.args[0] as { narrow?: Narrow } | undefined;
      return {
        error: error ?? "the pass failed (the scheduler kept no error)",
        narrow: args?.narrow,
      };
    }
  }
  return { error: "the pass was canceled, or its record is gone" };
}

/** Scheduled-function states in which a pass will still run (or is running). */
const OUTSTANDING: ReadonlySet<string> = new Set(["pending", "inProgress"]);

/**
 * True when a pass of the loop is still to come: the one the last pass scheduled, or the one a
 * caller scheduled when it woke the loop. Rows written before these ids were recorded fall back on
 * time and movement: a loop that moved since the last check, or asleep past its segment by less
 * than an interval.
 */
async function passOutstanding(
  ctx: MutationCtx,
  loop: Doc<"loopState"> | null,
  state: Exclude<RunState, { kind: "idle" }>,
  moved: boolean,
  now: number,
): Promise<boolean> {
  const ids = [loop?.nextPassId, state.kind === "running" ? undefined : state.scheduledId].filter(
    (id): id is Id<"_scheduled_functions"> => id !== undefined,
  );
  if (ids.length === 0) {
    if (moved) return true;
    return state.kind !== "running" && segmentStart(state.segment) + WATCHDOG_INTERVAL_MS >= now;
  }
  for (const id of ids) {
    const job = await ctx.db.system.get(id);
    if (job && OUTSTANDING.has(job.state.kind)) return true;
  }
  return false;
}
