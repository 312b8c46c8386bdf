/**
 * The schedule model (API-EXTENSIONS §10): validators (the single source of truth for a schedule's
 * shapes: the request, the stored state, what `getSchedule` returns) and the pure input rules of a
 * schedule request, shared by the component and the client. No database access here, and no clock
 * read: callers pass `now`.
 *
 * A schedule's life, as its `state` records it:
 *   waiting → waiting   its timer fired: the time (and any passed since) was handled, the next set
 *   waiting → ended     no time is left (after `endAt`, or a cron with no further time)
 *   waiting ⇄ paused    pauseSchedule / resumeSchedule (resume goes on from the next future time)
 *   any     → waiting   scheduled again under its name (replaced: timing computed afresh)
 *   any     → (deleted) unschedule
 */
import { v, type Infer } from "convex/values";
import { paginationResultValidator } from "convex/server";
import { invalidArgument } from "./errors.js";
import {
  CRON_HORIZON_MS,
  isKnownTimezone,
  nextTime,
  parseCron,
  type Timing,
} from "./scheduleTimes.js";
import { vFnType, vOnCompleteSpec, vPriority, vResultKind, vRetryBehavior } from "./validators.js";
import { validateString } from "./validate.js";

/** The longest schedule name (§10: 1–256 characters). */
export const MAX_SCHEDULE_NAME_LENGTH = 256;
/** The shortest interval: §10's floor, so that a schedule is never a busy loop. */
export const MIN_EVERY_MS = 1000;
/** How late a time may still be enqueued when the caller does not say (§10's default): a minute
 * covers a deploy or a slow pass, not an outage. */
export const DEFAULT_CATCHUP_WINDOW_MS = 60_000;

/** What a time does while an earlier run of the schedule is unfinished (§10 `overlap`). */
export const vOverlap = v.union(
  v.literal("skip"),
  v.literal("bufferOne"),
  v.literal("allowAll"),
  v.literal("cancelOther"),
);
export type Overlap = Infer<typeof vOverlap>;
const OVERLAPS: readonly string[] = vOverlap.members.map((member) => member.value);

/** When a schedule's times fall, as stored: a cron in a zone, or an interval from its first time
 * (`startAt`, or the call time + everyMs). */
export const vTiming = v.union(
  v.object({ kind: v.literal("cron"), cron: v.string(), timezone: v.string() }),
  v.object({ kind: v.literal("every"), everyMs: v.number(), firstAt: v.number() }),
);
// The validator says what scheduleTimes.ts computes with.
void ({} as Infer<typeof vTiming> satisfies Timing);

/**
 * Where a schedule is in its life (see the top of this file). `waiting` holds the one scheduled
 * `fire` that handles `nextRunAt`, and its guard: the same `fire`, due a little later, that handles
 * the time instead if the timer's transaction failed for good (Convex gave up on it), and that the
 * timer cancels when it commits. The row's `generation` fences both (a replaced, paused or deleted
 * schedule's old timer finds another generation and does nothing; so does the second of the two).
 */
export const vScheduleState = v.union(
  v.object({
    kind: v.literal("waiting"),
    nextRunAt: v.number(),
    timerId: v.id("_scheduled_functions"),
    /** Absent on rows set before guards existed. */
    guardId: v.optional(v.id("_scheduled_functions")),
  }),
  v.object({ kind: v.literal("paused") }),
  v.object({ kind: v.literal("ended") }),
);
export type ScheduleState = Infer<typeof vScheduleState>;

/** Times that came due while not paused, by what became of them (§10 `counts`). */
export const vScheduleCounts = v.object({
  enqueued: v.number(),
  skipped: v.number(),
  missed: v.number(),
});
export type ScheduleCounts = Infer<typeof vScheduleCounts>;

/** The job each time enqueues, as the schedule stores it (an enqueue request without timing). */
export const vScheduleRun = v.object({
  fnHandle: v.string(),
  /** The function's path (`getSchedule`'s `fnName`). */
  fnName: v.string(),
  fnArgs: v.any(),
  fnType: vFnType,
  /** The runs' name (info, list, logs); default the schedule's name. */
  runName: v.optional(v.string()),
  retryBehavior: v.optional(vRetryBehavior),
  onComplete: v.optional(vOnCompleteSpec),
  statusTtlMs: v.optional(v.number()),
  key: v.optional(v.string()),
  priority: v.optional(vPriority),
});
export type ScheduleRun = Infer<typeof vScheduleRun>;

/** A schedule request's timing and options, as the client sends them (all but `name` and the run). */
export const vScheduleOptions = {
  cron: v.optional(v.string()),
  timezone: v.optional(v.string()),
  everyMs: v.optional(v.number()),
  startAt: v.optional(v.number()),
  endAt: v.optional(v.number()),
  overlap: v.optional(vOverlap),
  catchupWindowMs: v.optional(v.number()),
  jitterMs: v.optional(v.number()),
  paused: v.optional(v.boolean()),
};
export const vScheduleOptionsObject = v.object(vScheduleOptions);
export type ScheduleOptions = Infer<typeof vScheduleOptionsObject>;

/** The last run a schedule enqueued, as `getSchedule` shows it. */
export const vLastRun = v.object({
  workId: v.string(),
  scheduledFor: v.number(),
  state: v.union(v.literal("pending"), v.literal("running"), v.literal("finished")),
  outcome: v.optional(vResultKind),
});

/** What `getSchedule` returns, and each entry of a `listSchedules` page. */
export const vScheduleInfo = v.object({
  id: v.string(),
  name: v.string(),
  fnName: v.string(),
  cron: v.optional(v.string()),
  timezone: v.optional(v.string()),
  everyMs: v.optional(v.number()),
  startAt: v.optional(v.number()),
  endAt: v.optional(v.number()),
  overlap: vOverlap,
  catchupWindowMs: v.number(),
  jitterMs: v.number(),
  paused: v.boolean(),
  /** The next time (before jitter); null when paused or no time is left. */
  nextRunAt: v.union(v.number(), v.null()),
  lastRun: v.optional(vLastRun),
  counts: vScheduleCounts,
});
export type ScheduleInfo = Infer<typeof vScheduleInfo>;
export const vSchedulePage = paginationResultValidator(vScheduleInfo);

/** A checked request's timing and settings, ready to store. */
export type CheckedSchedule = {
  timing: Timing;
  startAt?: number;
  endAt?: number;
  overlap: Overlap;
  catchupWindowMs: number;
  jitterMs: number;
  paused: boolean;
};

function wholeAtLeast(value: unknown, min: number, argument: string): void {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    invalidArgument(argument, `must be a whole number ≥ ${min}`, value);
  }
}

function instant(value: unknown, argument: string): void {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    invalidArgument(argument, "must be a time in ms since the epoch", value);
  }
}

/** Checks a schedule's name (1–256 characters). */
export function validateScheduleName(name: string, argument = "name"): void {
  validateString(name, MAX_SCHEDULE_NAME_LENGTH, argument);
}

/**
 * Checks a schedule request's timing and options (§10's rules), throwing InvalidArgument naming the
 * option; returns them as stored. `now` is the call time: `endAt` must be after it, and an interval
 * without `startAt` begins one interval after it.
 */
export function checkScheduleOptions(options: ScheduleOptions, now: number): CheckedSchedule {
  const { cron, timezone, everyMs, startAt, endAt } = options;
  if (cron === undefined && everyMs === undefined) {
    invalidArgument("cron/everyMs", "give exactly one of cron and everyMs", "neither");
  }
  if (cron !== undefined && everyMs !== undefined) {
    invalidArgument("cron/everyMs", "give exactly one of cron and everyMs", "both");
  }
  if (startAt !== undefined) instant(startAt, "startAt");
  if (endAt !== undefined) {
    instant(endAt, "endAt");
    if (startAt !== undefined && endAt <= startAt) {
      invalidArgument("endAt", "must be after startAt", endAt);
    }
    if (endAt <= now) invalidArgument("endAt", "must be in the future", endAt);
  }
  let timing: Timing;
  if (cron !== undefined) {
    if (typeof cron !== "string") invalidArgument("cron", "must be a string", cron);
    const zone = timezone ?? "UTC";
    if (typeof zone !== "string" || !isKnownTimezone(zone)) {
      invalidArgument("timezone", "must be an IANA time zone name, e.g. Europe/Berlin", zone);
    }
    let parsed;
    try {
      parsed = parseCron(cron);
    } catch (error) {
      invalidArgument("cron", `does not parse (${(error as Error).message})`, cron);
    }
    timing = { kind: "cron", cron, timezone: zone };
    const first = nextTime(timing, {}, now, parsed);
    if (first === null || first > now + CRON_HORIZON_MS) {
      invalidArgument("cron", "has no time in the next 28 years", cron);
    }
  } else {
    if (timezone !== undefined) {
      invalidArgument("timezone", "goes only with cron (an interval has no wall clock)", timezone);
    }
    wholeAtLeast(everyMs, MIN_EVERY_MS, "everyMs");
    timing = { kind: "every", everyMs: everyMs!, firstAt: startAt ?? now + everyMs! };
  }
  const overlap = options.overlap ?? "skip";
  if (!OVERLAPS.includes(overlap)) {
    invalidArgument("overlap", `must be one of ${OVERLAPS.join(", ")}`, overlap);
  }
  const catchupWindowMs = options.catchupWindowMs ?? DEFAULT_CATCHUP_WINDOW_MS;
  wholeAtLeast(catchupWindowMs, 0, "catchupWindowMs");
  const jitterMs = options.jitterMs ?? 0;
  wholeAtLeast(jitterMs, 0, "jitterMs");
  const paused = options.paused ?? false;
  if (typeof paused !== "boolean") invalidArgument("paused", "must be a boolean", paused);
  return { timing, startAt, endAt, overlap, catchupWindowMs, jitterMs, paused };
}
