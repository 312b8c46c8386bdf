/**
 * Recurring schedules, the public API (API-EXTENSIONS §10): `schedule` (create or replace by name),
 * `pause`, `resume`, `unschedule`, `runNow`, `get`, `list`, and `fire`, the internal mutation each
 * schedule's one timer calls at its next time (a path the scheduler stores: it stays here).
 * Each public function checks its input before writing anything and touches one schedule's row (by
 * its name) and the jobs it enqueues (api/scheduleRuns.ts); none reads other schedules, so neither
 * a call nor a fire costs more with more schedules. Never starts or finishes a job (the loop does).
 */
import { paginationOptsValidator } from "convex/server";
import { v } from "convex/values";
import type { Doc } from "./_generated/dataModel.js";
import {
  internalMutation,
  mutation,
  query,
  type DatabaseReader,
  type MutationCtx,
} from "./_generated/server.js";
import { applyConfig, validateConfigUpdate } from "./config.js";
import { validateEnqueueItem } from "./api/enqueue.js";
import { invalidArgument } from "./model/errors.js";
import { validatePageSize } from "./model/validate.js";
import {
  checkScheduleOptions,
  validateScheduleName,
  vScheduleInfo,
  vSchedulePage,
  vScheduleOptions,
  vScheduleRun,
  type ScheduleInfo,
} from "./model/schedule.js";
import { vConfigUpdate } from "./model/validators.js";
import { enqueueRun, fireDue, nextTimeOf, setTimer } from "./api/scheduleRuns.js";

/** The most schedules one `list` page holds: two reads each (the row, its last run). */
export const MAX_SCHEDULE_PAGE = 1000;

async function byName(db: DatabaseReader, name: string): Promise<Doc<"schedules"> | null> {
  return await db
    .query("schedules")
    .withIndex("by_name", (q) => q.eq("name", name))
    .unique();
}

/** The first time a schedule may run after a (re)start at `now`: at `now` or later, and never
 * one it handled already (`lastTime`), so that a replaced or resumed schedule runs no time twice. */
function afterForRestart(schedule: Pick<Doc<"schedules">, "lastTime">, now: number): number {
  return Math.max(now - 1, schedule.lastTime ?? Number.NEGATIVE_INFINITY);
}

/**
 * Creates the schedule `name`, or replaces the one of that name (function, args, timing, options,
 * `paused`; counts and last run kept, the next time computed afresh); returns its id.
 */
export const schedule = mutation({
  args: {
    name: v.string(),
    run: vScheduleRun,
    ...vScheduleOptions,
    config: v.optional(vConfigUpdate),
  },
  returns: v.string(),
  handler: async (ctx, { name, run, config, ...options }): Promise<string> => {
    const now = Date.now();
    validateScheduleName(name);
    if (config) validateConfigUpdate(config, "config.");
    const checked = checkScheduleOptions(options, now);
    const { runName, ...job } = run;
    validateEnqueueItem({ ...job, fnName: runName ?? name }, now);
    if (config) await applyConfig(ctx, config);
    const fields = {
      name,
      run,
      timing: checked.timing,
      startAt: checked.startAt,
      endAt: checked.endAt,
      overlap: checked.overlap,
      catchupWindowMs: checked.catchupWindowMs,
      jitterMs: checked.jitterMs,
    };
    let row = await byName(ctx.db, name);
    if (row === null) {
      const id = await ctx.db.insert("schedules", {
        ...fields,
        state: { kind: "ended" },
        generation: 0,
        counts: { enqueued: 0, skipped: 0, missed: 0 },
      });
      row = (await ctx.db.get("schedules", id))!;
    } else {
      row = { ...row, ...fields };
    }
    const timer = await setTimer(
      ctx,
      row,
      checked.paused
        ? { kind: "paused" }
        : { kind: "at", time: nextTimeOf(row, afterForRestart(row, now)) },
    );
    await ctx.db.patch("schedules", row._id, { ...fields, ...timer });
    return row._id;
  },
});

/** Stops a schedule's times (not counted; `nextRunAt` null) until `resume`. False for an unknown
 * name. */
export const pause = mutation({
  args: { name: v.string() },
  returns: v.boolean(),
  handler: async (ctx, { name }) => {
    validateScheduleName(name);
    const row = await byName(ctx.db, name);
    if (row === null) return false;
    if (row.state.kind === "paused") return true;
    await ctx.db.patch("schedules", row._id, await setTimer(ctx, row, { kind: "paused" }));
    return true;
  },
});

/** Ends a schedule's pause: it goes on from its next future time. False for an unknown name. */
export const resume = mutation({
  args: { name: v.string() },
  returns: v.boolean(),
  handler: async (ctx, { name }) => {
    validateScheduleName(name);
    const row = await byName(ctx.db, name);
    if (row === null) return false;
    if (row.state.kind !== "paused") return true;
    const time = nextTimeOf(row, afterForRestart(row, Date.now()));
    await ctx.db.patch("schedules", row._id, await setTimer(ctx, row, { kind: "at", time }));
    return true;
  },
});

/** Deletes a schedule (its runs already enqueued go on). False for an unknown name. */
export const unschedule = mutation({
  args: { name: v.string() },
  returns: v.boolean(),
  handler: async (ctx, { name }) => {
    validateScheduleName(name);
    const row = await byName(ctx.db, name);
    if (row === null) return false;
    await setTimer(ctx, row, { kind: "paused" });
    await ctx.db.delete("schedules", row._id);
    return true;
  },
});

/**
 * Enqueues one run now (`scheduledFor` the call time) under the schedule's `overlap`, also while
 * paused or after `endAt`; not counted in `counts`, but it is the schedule's `lastRun`. Returns the
 * run's id, or null when `overlap` enqueued nothing. An unknown name is rejected.
 */
export const runNow = mutation({
  args: { name: v.string(), config: v.optional(vConfigUpdate) },
  returns: v.union(v.string(), v.null()),
  handler: async (ctx, { name, config }): Promise<string | null> => {
    const now = Date.now();
    validateScheduleName(name);
    if (config) validateConfigUpdate(config, "config.");
    const row = await byName(ctx.db, name);
    if (row === null) invalidArgument("name", "must name a schedule of this pool", name);
    if (config) await applyConfig(ctx, config);
    const workId = await enqueueRun(ctx, row, now, now);
    if (workId === null) return null;
    await ctx.db.patch("schedules", row._id, { lastRun: { workId, scheduledFor: now } });
    return workId;
  },
});

/** What `get` and `list` show of a schedule (one read: its last run's job). */
async function scheduleInfo(db: DatabaseReader, row: Doc<"schedules">): Promise<ScheduleInfo> {
  let lastRun: ScheduleInfo["lastRun"];
  if (row.lastRun !== undefined) {
    const work = await db.get("work", row.lastRun.workId);
    // A run swept after statusTtl finished long ago; its outcome is no longer known.
    const state = work === null ? "finished" : work.state.kind;
    const outcome = work?.state.kind === "finished" ? work.state.result.kind : undefined;
    lastRun = {
      workId: row.lastRun.workId,
      scheduledFor: row.lastRun.scheduledFor,
      state,
      ...(outcome !== undefined ? { outcome } : {}),
    };
  }
  const { timing } = row;
  return {
    id: row._id,
    name: row.name,
    fnName: row.run.fnName,
    ...(timing.kind === "cron"
      ? { cron: timing.cron, timezone: timing.timezone }
      : { everyMs: timing.everyMs }),
    ...(row.startAt !== undefined ? { startAt: row.startAt } : {}),
    ...(row.endAt !== undefined ? { endAt: row.endAt } : {}),
    overlap: row.overlap,
    catchupWindowMs: row.catchupWindowMs,
    jitterMs: row.jitterMs,
    paused: row.state.kind === "paused",
    nextRunAt: row.state.kind === "waiting" ? row.state.nextRunAt : null,
    ...(lastRun !== undefined ? { lastRun } : {}),
    counts: row.counts,
  };
}

/** A schedule by name, or null. */
export const get = query({
  args: { name: v.string() },
  returns: v.union(vScheduleInfo, v.null()),
  handler: async (ctx, { name }) => {
    validateScheduleName(name);
    const row = await byName(ctx.db, name);
    return row === null ? null : await scheduleInfo(ctx.db, row);
  },
});

/** A page of schedules, by name. */
export const list = query({
  args: { paginationOpts: paginationOptsValidator },
  returns: vSchedulePage,
  handler: async (ctx, { paginationOpts }) => {
    const { numItems } = paginationOpts;
    validatePageSize("paginationOpts.numItems", numItems, MAX_SCHEDULE_PAGE);
    const result = await ctx.db.query("schedules").withIndex("by_name").paginate(paginationOpts);
    const page = [];
    for (const row of result.page) page.push(await scheduleInfo(ctx.db, row));
    return { ...result, page };
  },
});

/**
 * A schedule's timer, or its guard (`guard`: the same call due FIRE_GUARD_AFTER_MS later, for a
 * timer whose transaction failed for good): handles its due time (and any passed since), then sets
 * the next timer and guard. Whichever of the two commits first handles the time and cancels the
 * other; a call of another generation (the schedule was replaced, paused, resumed or deleted after
 * setting it, or the other call handled the time) or for a schedule no longer waiting does nothing:
 * no time is handled twice, and none is left unhandled by one failed transaction.
 */
export const fire = internalMutation({
  args: {
    scheduleId: v.id("schedules"),
    generation: v.number(),
    /** Set on the guard (for whoever reads the scheduler's list); it acts as the timer does. */
    guard: v.optional(v.boolean()),
  },
  returns: v.null(),
  handler: async (ctx: MutationCtx, { scheduleId, generation }) => {
    const row = await ctx.db.get("schedules", scheduleId);
    if (row === null || row.generation !== generation || row.state.kind !== "waiting") return null;
    await fireDue(ctx, row, Date.now());
    return null;
  },
});
