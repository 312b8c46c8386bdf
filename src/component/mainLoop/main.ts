/**
 * The main loop: one self-rescheduling `main` mutation, fenced by a generation counter. Each pass
 * drains due completions, cancelations, runs recovery when due, moves rows filed early to their
 * due segments, starts work up to maxParallelism, schedules the sweeper, checks deliveries, then
 * schedules itself for the next segment with work — or goes idle. Every stage draws its work from
 * one budget of the pass (passBudget.ts); a stage the budget stops goes on in the next pass, at
 * once. A stage that throws names itself in the error, for the backstop (watchdog.ts), whose
 * narrow passes run one stage at a time. A `main` whose generation is not the current one is
 * stale and returns at once. Never runs user code (onComplete handlers run in delivery
 * transactions of their own, deliver.ts) and never reads payload rows.
 */
import { v } from "convex/values";
import { internal } from "../_generated/api.js";
import type { Doc } from "../_generated/dataModel.js";
import { internalMutation } from "../_generated/server.js";
import { processCancelations } from "./cancel.js";
import { processCompletions } from "./complete.js";
import { readConfig } from "../config.js";
import { checkDeliveries, scheduleDeliveries } from "../runners/deliver.js";
import { flushExecutors } from "./executors.js";
import { firstReadyAt, flushKeys } from "./keyState.js";
import { createLogger } from "../model/logging.js";
import {
  inStage,
  splitsItsStage,
  STAGES,
  vNarrow,
  type LoopState,
  type Narrow,
  type Pass,
  type Stage,
} from "./pass.js";
import { NARROW_SHARE } from "./passBudget.js";
import { nextStartAllowedAt } from "./rateLimit.js";
import { nextRecoveryAt, recover, recoveryDue } from "./recovery.js";
import { segmentForRunAt, segmentOf, segmentStart } from "../model/segments.js";
import { refileEarlyStarts } from "./refile.js";
import { listKeys, placeActions, startWork } from "./start.js";
import { advancePendingFloor, emptyStats, flushEarlierSecond, maybeReport } from "./stats.js";
import { firstExpiry, maybeScheduleSweep } from "./sweep.js";
import { armWatchdog } from "./watchdog.js";

/** When the loop runs next. */
type Wake =
  | { kind: "now" } // a batch was full: more is due already
  // Sleep until the start of `segment`, or until `at` (in or before it) when a start waits for
  // the rate limit's window, which frees at an instant of its own, not on a segment boundary.
  | { kind: "segment"; segment: number; at?: number }
  | { kind: "idle" }; // nothing to do until a caller wakes it

function initialState(now: number): LoopState {
  return {
    generation: 0,
    running: 0,
    lastRecoveryAt: now,
    nextSweepAt: now,
    stats: emptyStats(now),
  };
}

function withoutSystemFields(row: Doc<"loopState">): LoopState {
  const state: Partial<Doc<"loopState">> = { ...row };
  delete state._id;
  delete state._creationTime;
  return state as LoopState;
}

export const main = internalMutation({
  // A pass of the loop's own chain carries its generation; a wake-up an enqueue scheduled carries
  // none and always runs (it must read the segment its enqueue wrote into).
  // `narrow`: set by the watchdog on a pass it restarts after passes failed (the backstop,
  // watchdog.ts `restartPass`), and carried by a narrow pass to the next while outcomes are left.
  args: { generation: v.optional(v.number()), narrow: v.optional(vNarrow) },
  returns: v.null(),
  handler: async (ctx, args) => {
    const row = await ctx.db.query("loopState").first();
    const now = Date.now();
    const config = await readConfig(ctx.db);
    const log = createLogger(config.logLevel);
    const expected = row?.generation ?? 0;
    const generation = args.generation ?? expected;
    if (generation !== expected) {
      log.debug("staleMain", { generation, expected });
      return null;
    }
    const woken = args.generation === undefined;
    const state: LoopState = row ? withoutSystemFields(row) : initialState(now);
    const pass: Pass = {
      ctx,
      now,
      segment: segmentOf(now),
      config,
      log,
      state,
      deliveries: [],
      keys: new Map(),
      executors: new Map(),
      executorsById: new Map(),
      actionStarts: [],
      narrow: args.narrow,
    };
    if (pass.narrow) return await narrowPass(pass, row);

    await flushEarlierSecond(pass);
    const leftPendingBefore = state.stats.started + state.stats.canceled;
    // Every stage draws from one budget (passBudget.ts) and stops when it is spent; a stage that
    // throws names itself in the error, for the backstop (watchdog.ts `restartPass`).
    const moreCompletions = await inStage("completions", () => processCompletions(pass));
    const moreCancelations = await inStage("cancels", () => processCancelations(pass));
    await inStage("recovery", async () => {
      if (recoveryDue(pass)) await recover(pass);
    });
    // Rows filed early are moved before anything starts; while more wait, nothing starts yet.
    const moreEarly = await inStage("refile", () => refileEarlyStarts(pass));
    const starts = await inStage("start", async () => {
      const outcome = moreEarly ? { more: true, heldByRate: false } : await startWork(pass);
      await placeActions(pass);
      return outcome;
    });
    const expiry = await firstExpiry(pass);
    await inStage("sweep", () => maybeScheduleSweep(pass, expiry));
    await inStage("deliveryCheck", () => checkDeliveries(pass));
    await scheduleDeliveries(pass, pass.deliveries);
    await listKeys(pass);
    await flushKeys(pass);
    await flushExecutors(pass);
    if (state.stats.started + state.stats.canceled > leftPendingBefore) {
      await advancePendingFloor(pass);
    }

    // A stage the budget stopped goes on in the next pass, at once.
    const wake: Wake =
      moreCompletions || moreCancelations || starts.more || pass.budgetStop !== undefined
        ? { kind: "now" }
        : await nextWake(pass, expiry, starts.heldByRate);
    // Quiet: nothing runs and the loop sleeps. (A full pool also sleeps between completions, and a
    // rate-limited one until its window frees; their reports wait for the interval, so the backlog
    // scan is not paid on every pass.)
    const goingQuiet =
      wake.kind === "idle" ||
      (wake.kind === "segment" &&
        wake.segment > pass.segment + 1 &&
        state.running === 0 &&
        !starts.heldByRate);
    await maybeReport(pass, goingQuiet);
    state.generation = generation + 1;
    // A wake-up's pass supersedes the pass the chain had scheduled: cancel it if it has not begun.
    if (woken) await cancelScheduledPass(pass);
    await scheduleNext(pass, wake);
    if (row) await ctx.db.replace("loopState", row._id, state);
    else await ctx.db.insert("loopState", state);
    if (config.logLevel === "DEBUG") {
      const metrics = await ctx.meta.getTransactionMetrics();
      log.debug("pass", {
        generation,
        running: state.running,
        wake: wake.kind,
        documentsRead: metrics.documentsRead.used,
        documentsWritten: metrics.documentsWritten.used,
        bytesRead: metrics.bytesRead.used,
        functionsScheduled: metrics.functionsScheduled.used,
        databaseQueries: metrics.databaseQueries.used,
        budgetStop: pass.budgetStop,
      });
    }
    return null;
  },
});

/**
 * A narrow pass (the backstop, watchdog.ts `restartPass`): after passes failed, runs one stage
 * alone, then hands on to a narrow pass of the next stage, and after the last to an ordinary
 * pass; so the stages of the pass that failed each get a transaction of their own. The stage the
 * failed pass was in (`failed`) is split: it runs on a sixteenth of the ordinary budget
 * (NARROW_SHARE), and "completions" settles one outcome a pass (up to `left` of them), so that
 * the outcome the failed pass could not commit is met alone; or it sets that outcome's job aside
 * (`setAside`: the watchdog saw two narrow passes fail on it with a limit error). Any other stage
 * that failed twice so is skipped once (`skip`). The bookkeeping (deliveries, keys, executors)
 * runs in every narrow pass.
 */
async function narrowPass(pass: Pass, row: Doc<"loopState"> | null): Promise<null> {
  const { ctx, state } = pass;
  const narrow = pass.narrow as Narrow;
  const stage = narrow.stage ?? "completions";
  const split = splitsItsStage(narrow);
  if (split) pass.budgetShare = NARROW_SHARE;
  await flushEarlierSecond(pass);
  const leftPendingBefore = state.stats.started + state.stats.canceled;
  const more = narrow.skip ? false : await inStage(stage, () => runStage(pass, stage));
  await scheduleDeliveries(pass, pass.deliveries);
  await listKeys(pass);
  await flushKeys(pass);
  await flushExecutors(pass);
  if (state.stats.started + state.stats.canceled > leftPendingBefore) {
    await advancePendingFloor(pass);
  }
  state.generation += 1;
  pass.log.warn("narrowPass", {
    stage,
    failed: narrow.failed,
    left: narrow.left,
    setAside: narrow.setAside !== undefined,
    skip: narrow.skip === true,
    more,
  });
  // The next pass: a split "completions" goes on one outcome a pass while outcomes are left of
  // what the failed pass would have taken; then each later stage once; then an ordinary pass.
  const left = narrow.left - 1;
  const later = STAGES[STAGES.indexOf(stage) + 1] as Stage | undefined;
  const failed = narrow.failed === undefined ? {} : { failed: narrow.failed };
  const next: Narrow | undefined =
    stage === "completions" && split && more && left > 0
      ? { stage, left, ...failed }
      : later === undefined
        ? undefined
        : { stage: later, left: narrow.left, ...failed };
  const scheduledId = await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, {
    generation: state.generation,
    ...(next ? { narrow: next } : {}),
  });
  state.nextPassId = scheduledId;
  if (row) await ctx.db.replace("loopState", row._id, state);
  else await ctx.db.insert("loopState", state);
  return null;
}

/** Runs one stage of a pass alone (a narrow pass); true when it left work for a later pass. */
async function runStage(pass: Pass, stage: Stage): Promise<boolean> {
  switch (stage) {
    case "completions":
      return await processCompletions(pass);
    case "cancels":
      return await processCancelations(pass);
    case "recovery":
      if (recoveryDue(pass)) await recover(pass);
      return pass.budgetStop !== undefined;
    case "refile":
      return await refileEarlyStarts(pass);
    case "start": {
      // As in an ordinary pass, nothing starts while rows filed early wait to be moved.
      if (await refileEarlyStarts(pass)) return true;
      const { more } = await startWork(pass);
      await placeActions(pass);
      return more;
    }
    case "sweep":
      await maybeScheduleSweep(pass, await firstExpiry(pass));
      return pass.budgetStop !== undefined;
    case "deliveryCheck":
      await checkDeliveries(pass);
      return pass.budgetStop !== undefined;
    default:
      return stage satisfies never;
  }
}

/** Cancels the chain's next pass (scheduled by an earlier pass) if it is still waiting to run. */
async function cancelScheduledPass(pass: Pass): Promise<void> {
  const id = pass.state.nextPassId;
  if (id === undefined) return;
  if ((await pass.ctx.db.system.get(id))?.state.kind === "pending") {
    await pass.ctx.scheduler.cancel(id);
  }
}

/** The first segment after this pass's that holds a row the loop itself put in `pendingStart` (a
 * retry or a snooze): enqueued rows bring their own wake-up, and reading past the current segment
 * would cover the ones being written now. */
async function firstLaterOwnStart(pass: Pass): Promise<number | undefined> {
  const row = await pass.ctx.db
    .query("pendingStart")
    .withIndex("by_fromLoop", (q) => q.eq("fromLoop", true).gt("segment", pass.segment))
    .first();
  return row?.segment;
}

/** The first segment after this pass's that holds a row of `table`, if any. */
async function firstLaterSegment(
  pass: Pass,
  table: "pendingCompletion" | "pendingCancelation",
): Promise<number | undefined> {
  const row = await pass.ctx.db
    .query(table)
    .withIndex("by_segment", (q) => q.gt("segment", pass.segment))
    .first();
  return row?.segment;
}

/**
 * The earliest segment after this one in which something needs the loop: a start (only if there is
 * room to start it; otherwise a completion will wake the loop), a completion, a cancelation, a
 * recovery check while jobs run, or an expiry for the sweeper.
 */
async function nextWake(
  pass: Pass,
  expiry: number | undefined,
  heldByRate: boolean,
): Promise<Wake> {
  const candidates: Array<number | undefined> = [
    await firstLaterSegment(pass, "pendingCompletion"),
    await firstLaterSegment(pass, "pendingCancelation"),
  ];
  let rateWakeAt: number | undefined;
  if (pass.state.running < pass.config.maxParallelism && !pass.config.paused) {
    const readyAt = await firstReadyAt(pass);
    const starts = [
      await firstLaterOwnStart(pass),
      readyAt === undefined ? undefined : segmentForRunAt(readyAt, pass.now),
      heldByRate ? pass.segment + 1 : undefined,
    ].filter((s): s is number => s !== undefined);
    // Under a spent rate limit, a start waits until the window lets one through: no pass before.
    const allowedAt = nextStartAllowedAt(pass);
    const notBefore = allowedAt === undefined ? 0 : segmentForRunAt(allowedAt, pass.now);
    if (starts.length > 0) candidates.push(Math.max(Math.min(...starts), notBefore));
    if (heldByRate && allowedAt !== undefined) rateWakeAt = allowedAt;
  }
  const recoveryAt = nextRecoveryAt(pass);
  if (recoveryAt !== undefined) candidates.push(segmentForRunAt(recoveryAt, pass.now));
  if (pass.state.deliveryCheckAt !== undefined) {
    candidates.push(segmentForRunAt(pass.state.deliveryCheckAt, pass.now));
  }
  if (expiry !== undefined) {
    candidates.push(segmentForRunAt(Math.max(expiry, pass.state.nextSweepAt), pass.now));
  }
  const segments = candidates.filter((s): s is number => s !== undefined);
  if (segments.length === 0) return { kind: "idle" };
  const segment = Math.max(pass.segment + 1, Math.min(...segments));
  // Due work held by the rate limit starts the moment its window frees, if nothing comes sooner.
  if (rateWakeAt !== undefined && rateWakeAt <= segmentStart(segment)) {
    return { kind: "segment", segment, at: rateWakeAt };
  }
  return { kind: "segment", segment };
}

/** Schedules the next `main` and records in `runStatus` whether callers must wake it. */
async function scheduleNext(pass: Pass, wake: Wake): Promise<void> {
  const { ctx } = pass;
  const generation = pass.state.generation;
  const status = await ctx.db.query("runStatus").first();
  // A loop that is not idle is watched, however it was woken: a chain pass that throws rolls
  // back the scheduling of the next one, and callers that find the loop "running" wake nobody.
  // The loop arms the watchdog on the write that leaves idle (or on its first write after a row
  // from before it did so); the check disarms it when it finds the loop idle.
  const write = async (next: {
    state: NonNullable<typeof status>["state"];
    generation: number;
  }) => {
    const watch =
      next.state.kind !== "idle" && !status?.watchdogArmed
        ? { watchdogArmed: await armWatchdog(ctx, generation) }
        : {};
    if (status) await ctx.db.patch("runStatus", status._id, { ...next, ...watch });
    else await ctx.db.insert("runStatus", { ...next, ...watch });
  };
  switch (wake.kind) {
    case "now":
    case "segment": {
      const at = wake.kind === "now" ? pass.now : (wake.at ?? segmentStart(wake.segment));
      const scheduledId = await ctx.scheduler.runAt(at, internal.mainLoop.main.main, {
        generation,
      });
      pass.state.nextPassId = scheduledId;
      if (wake.kind === "now" || wake.segment === pass.segment + 1) {
        // Running hot: callers only ever append into the next segment, which the loop will read.
        if (status?.state.kind !== "running" || !status.watchdogArmed)
          await write({ state: { kind: "running" }, generation });
      } else {
        await write({
          state: { kind: "scheduled", segment: wake.segment, scheduledId },
          generation,
        });
      }
      return;
    }
    case "idle":
      delete pass.state.nextPassId;
      await write({ state: { kind: "idle" }, generation });
      return;
    default:
      wake satisfies never;
  }
}
