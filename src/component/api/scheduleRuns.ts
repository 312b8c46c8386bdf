/**
 * What a schedule does at its times (API-EXTENSIONS §10): handling a time that came due (catch-up
 * window, counts), enqueueing one run under the schedule's `overlap`, and setting the schedule's one
 * timer. A run is an ordinary job written by the enqueue path (enqueue.ts), marked with its schedule
 * and time. Runs inside the caller's transaction (`schedules.fire`, `schedule`, `resumeSchedule`,
 * `runScheduleNow`): every write of a time — the run, the counts, the next timer, the generation —
 * commits together or not at all, which is what makes each time enqueue at most one run.
 * Never changes a job's state (a `cancelOther` files a cancel request for the loop) and never reads
 * another schedule's row.
 */
import type { Doc, Id } from "../_generated/dataModel.js";
import { internal } from "../_generated/api.js";
import type { MutationCtx } from "../_generated/server.js";
import { countEnqueues, insertJob, insertWork, validateEnqueueItem } from "./enqueue.js";
import type { EnqueueItem } from "./enqueue.js";
import { claimSegment, targetFor } from "./kick.js";
import { dueSegment } from "../model/segments.js";
import { nextTime, parseCron } from "../model/scheduleTimes.js";
import type { ScheduleState } from "../model/schedule.js";

/** The most past times one `fire` handles: a schedule that was stopped for long (every second,
 * for a day) has its passed times counted in transactions of this many (each a few ms of
 * arithmetic and no reads), its timer set to the next passed time to go on at once. */
export const MAX_TIMES_PER_FIRE = 1000;

/** How long after a time its guard is due: the guard handles the time only if the timer's
 * transaction failed for good, which Convex decides within seconds of its start (its retries of a
 * conflicted mutation); half the default catch-up window, so that with the default window the time
 * a failed timer dropped is still run, not missed. A timer that commits cancels its guard, so a
 * guard costs a scheduled function's write and its cancel, never a transaction. */
export const FIRE_GUARD_AFTER_MS = 30_000;

/** The schedule's first time strictly after `after` (within its bounds), or null. */
export function nextTimeOf(schedule: Doc<"schedules">, after: number): number | null {
  return nextTime(schedule.timing, schedule, after);
}

/**
 * Drops the schedule's timer and its guard (if it has them) and sets both for `nextRunAt` (or none:
 * ended or paused), bumping the generation: a timer of an earlier generation finds itself stale.
 * Returns the fields to patch onto the row.
 */
export async function setTimer(
  ctx: MutationCtx,
  schedule: Pick<Doc<"schedules">, "_id" | "state" | "generation">,
  next: { kind: "at"; time: number | null } | { kind: "paused" },
): Promise<{ state: ScheduleState; generation: number }> {
  await dropTimer(ctx, schedule.state);
  const generation = schedule.generation + 1;
  if (next.kind === "paused") return { state: { kind: "paused" }, generation };
  if (next.time === null) return { state: { kind: "ended" }, generation };
  const args = { scheduleId: schedule._id, generation };
  const timerId = await ctx.scheduler.runAt(next.time, internal.schedules.fire, args);
  const guardId = await ctx.scheduler.runAt(
    next.time + FIRE_GUARD_AFTER_MS,
    internal.schedules.fire,
    { ...args, guard: true },
  );
  return { state: { kind: "waiting", nextRunAt: next.time, timerId, guardId }, generation };
}

/** Cancels a waiting schedule's timer and guard while they are still pending: a stale one's
 * transaction is saved, and a committed timer's guard never runs (the generation fence makes
 * either harmless anyway). The one running now (the caller) is not pending. */
export async function dropTimer(ctx: MutationCtx, state: ScheduleState): Promise<void> {
  if (state.kind !== "waiting") return;
  for (const id of [state.timerId, state.guardId]) {
    if (id === undefined) continue;
    const timer = await ctx.db.system.get(id);
    if (timer !== null && timer.state.kind === "pending") await ctx.scheduler.cancel(id);
  }
}

/** What a fire did with the times it handled. */
export type FireOutcome = { enqueued: number; skipped: number; missed: number };

/**
 * Handles the schedule's due time `nextRunAt` and every later time already passed at `now`:
 * of those still within `catchupWindowMs`, only the latest may run (under `overlap`); the others
 * are skipped, and those older than the window are missed. Then sets the timer for the next time.
 * Patches the row once. The caller has checked the fence (generation, state).
 */
export async function fireDue(
  ctx: MutationCtx,
  schedule: Doc<"schedules">,
  now: number,
): Promise<FireOutcome> {
  if (schedule.state.kind !== "waiting") throw new Error("workpool: fireDue on an idle schedule");
  const cron = schedule.timing.kind === "cron" ? parseCron(schedule.timing.cron) : undefined;
  const times = [schedule.state.nextRunAt];
  let next = nextTime(schedule.timing, schedule, times[0], cron);
  while (next !== null && next <= now && times.length < MAX_TIMES_PER_FIRE) {
    times.push(next);
    next = nextTime(schedule.timing, schedule, next, cron);
  }
  // More passed times than one fire handles: none of these is the latest, none runs.
  const capped = next !== null && next <= now;
  const outcome: FireOutcome = { enqueued: 0, skipped: 0, missed: 0 };
  const latest = times[times.length - 1];
  for (const time of times) {
    if (now - time > schedule.catchupWindowMs) outcome.missed++;
    else if (capped || time !== latest) outcome.skipped++;
  }
  let lastRun = schedule.lastRun;
  if (!capped && now - latest <= schedule.catchupWindowMs) {
    const workId = await enqueueRun(ctx, schedule, latest, now);
    if (workId === null) outcome.skipped++;
    else {
      outcome.enqueued++;
      lastRun = { workId, scheduledFor: latest };
    }
  }
  const timer = await setTimer(ctx, schedule, { kind: "at", time: next });
  await ctx.db.patch("schedules", schedule._id, {
    ...timer,
    lastTime: latest,
    lastRun,
    counts: {
      enqueued: schedule.counts.enqueued + outcome.enqueued,
      skipped: schedule.counts.skipped + outcome.skipped,
      missed: schedule.counts.missed + outcome.missed,
    },
  });
  return outcome;
}

/** A random whole number of ms from 0 to `jitterMs`, inclusive. */
function jitter(jitterMs: number): number {
  return jitterMs === 0 ? 0 : Math.floor(Math.random() * (jitterMs + 1));
}

/**
 * Enqueues one run of the schedule for `scheduledFor`, under its `overlap` when its latest run is
 * unfinished: `skip` enqueues nothing; `bufferOne` writes the run without a start row, waiting for
 * that run (`waitsFor`; the loop files its start when that run finishes), or nothing if a run waits
 * so already; `allowAll` enqueues; `cancelOther` files a cancel of that run and enqueues. Returns
 * the run's id, or null when it enqueued nothing. Does not write the schedule row.
 */
export async function enqueueRun(
  ctx: MutationCtx,
  schedule: Doc<"schedules">,
  scheduledFor: number,
  now: number,
): Promise<Id<"work"> | null> {
  const previous = schedule.lastRun ? await ctx.db.get("work", schedule.lastRun.workId) : null;
  let waitsFor: Id<"work"> | undefined;
  if (previous !== null && previous.state.kind !== "finished") {
    switch (schedule.overlap) {
      case "skip":
        return null;
      case "bufferOne":
        if (previous.waitsFor !== undefined) return null;
        waitsFor = previous._id;
        break;
      case "allowAll":
        break;
      case "cancelOther": {
        const segment = await claimSegment(ctx);
        await ctx.db.insert("pendingCancelation", { workId: previous._id, segment });
        break;
      }
      default:
        schedule.overlap satisfies never;
    }
  }
  const { runName, ...run } = schedule.run;
  const item: EnqueueItem = {
    ...run,
    fnName: runName ?? schedule.name,
    runAt: scheduledFor + jitter(schedule.jitterMs),
  };
  const checked = validateEnqueueItem(item, now);
  const extra = { schedule: schedule.name, scheduledFor, waitsFor };
  const workId =
    waitsFor !== undefined
      ? await insertWork(ctx, item, checked, now, extra)
      : await insertJob(
          ctx,
          item,
          checked,
          now,
          await targetFor(ctx, now, dueSegment(checked.runAt)),
          extra,
        );
  await countEnqueues(ctx, [item]);
  return workId;
}
