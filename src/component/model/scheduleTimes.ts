/**
 * A schedule's times: parsing a cron expression (with `croner`), the wall clock of an IANA time zone
 * (with `Intl`), and the next time of a cron or an interval after an instant, within `startAt` and
 * `endAt`. Pure arithmetic: no database access, no clock reads (every function takes its instants).
 *
 * Daylight saving. Croner is asked only for wall-clock times in UTC, where no day has a gap or a
 * repeated hour; this module maps each wall-clock time to an instant of the schedule's zone itself,
 * by API-EXTENSIONS §10's rule for every expression (croner's own rule differs for expressions with
 * a wildcard or a step: it skips a missing time and runs a repeated one twice):
 * - a wall-clock time that does not exist (the spring-forward gap) maps to the first instant after
 *   the gap, so several such times fall on one instant and fire once;
 * - a wall-clock time that occurs twice (fall back) maps to its first occurrence only: a time that
 *   maps to an instant at or before the one it follows is passed over.
 * It must never return a time at or before the `after` it was given (the fire that follows a time
 * asks for the next one after it, so no time can come back).
 */
import { Cron } from "croner";

/** A day in ms: the window around a wall-clock time in which its zone's offsets are looked up
 * (no zone changes its offset twice within two days). */
const DAY_MS = 24 * 60 * 60 * 1000;

/** How far ahead a cron must have a time to be accepted: §10's "no time in the next 28 years"
 * (28 years is the full cycle of weekdays and leap years, so a cron without a time in it has none). */
export const CRON_HORIZON_MS = 28 * 366 * DAY_MS;

/** The most wall-clock times one `nextCronTime` call passes over (the repeated hour of a cron that
 * fires every second is 3,600 of them): a bound on the work, never reached by a valid schedule. */
const MAX_WALL_STEPS = 10_000;

/** Parses a cron expression as §10 reads it (five fields, or six with seconds first; names,
 * ranges, steps, nicknames; day-of-month and day-of-week OR'ed). Throws croner's error when it
 * does not parse. The returned Cron computes times in UTC: callers map them to their zone. */
export function parseCron(expression: string): Cron {
  return new Cron(expression, {
    timezone: "UTC",
    paused: true,
    mode: "5-or-6-parts",
    domAndDow: false,
  });
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter that reads `timezone`'s wall clock; throws a RangeError for an unknown zone. */
function wallClockOf(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** True when `timezone` is an IANA zone name this runtime knows. */
export function isKnownTimezone(timezone: string): boolean {
  try {
    wallClockOf(timezone);
    return true;
  } catch {
    return false;
  }
}

/** How far `timezone`'s wall clock is ahead of UTC at `instant` (ms; wall = instant + offset). */
export function offsetAt(timezone: string, instant: number): number {
  if (timezone === "UTC") return 0;
  const parts: Record<string, number> = {};
  for (const part of wallClockOf(timezone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  const wall = Date.UTC(
    parts.year,
    parts.month - 1,
    parts.day,
    parts.hour,
    parts.minute,
    parts.second,
  );
  const wholeSecond = instant - (((instant % 1000) + 1000) % 1000);
  return wall - wholeSecond;
}

/**
 * The instant `timezone`'s wall clock shows `wall` (a wall-clock time written as if it were UTC):
 * its first occurrence when it occurs twice, and the first instant after the gap when it does not
 * occur.
 */
export function wallToInstant(timezone: string, wall: number): number {
  const before = offsetAt(timezone, wall - DAY_MS);
  const after = offsetAt(timezone, wall + DAY_MS);
  const candidates = [wall - before, wall - after]
    .filter((instant) => instant + offsetAt(timezone, instant) === wall)
    .sort((a, b) => a - b);
  if (candidates.length > 0) return candidates[0];
  // In a gap: the zone moved from `before` to `after` between these two instants. Find the first
  // instant on the new offset (changes happen on whole seconds).
  let low = Math.floor((wall - after) / 1000);
  let high = Math.ceil((wall - before) / 1000);
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (offsetAt(timezone, middle * 1000) === before) low = middle;
    else high = middle;
  }
  return high * 1000;
}

/** The first time of `cron` in `timezone` strictly after `after`, or null when it has none. */
export function nextCronTime(cron: Cron, timezone: string, after: number): number | null {
  let wall = after + offsetAt(timezone, after);
  for (let step = 0; step < MAX_WALL_STEPS; step++) {
    const next = cron.nextRun(new Date(wall));
    if (next === null) return null;
    const instant = wallToInstant(timezone, next.getTime());
    if (instant > after) return instant;
    // A repeated wall-clock time whose first occurrence is past, or one at `after` itself.
    wall = next.getTime();
  }
  return null;
}

/** When a schedule's times fall, as its row stores it (model/schedule.ts `vTiming`). */
export type Timing =
  | { kind: "cron"; cron: string; timezone: string }
  | { kind: "every"; everyMs: number; firstAt: number };

/** A schedule's bounds: no time before `startAt` nor after `endAt` (both inclusive). */
export type Bounds = { startAt?: number; endAt?: number };

/**
 * The schedule's first time strictly after `after`, within its bounds; null when none is left.
 * `cron` is the parsed expression of a cron timing (callers parse it once per transaction).
 */
export function nextTime(
  timing: Timing,
  bounds: Bounds,
  after: number,
  cron?: Cron,
): number | null {
  const from = bounds.startAt !== undefined ? Math.max(after, bounds.startAt - 1) : after;
  let next: number | null;
  if (timing.kind === "every") {
    const { everyMs, firstAt } = timing;
    const k = from < firstAt ? 0 : Math.floor((from - firstAt) / everyMs) + 1;
    next = firstAt + k * everyMs;
  } else {
    next = nextCronTime(cron ?? parseCron(timing.cron), timing.timezone, from);
  }
  if (next === null || (bounds.endAt !== undefined && next > bounds.endAt)) return null;
  return next;
}
