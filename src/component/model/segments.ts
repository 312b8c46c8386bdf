/**
 * Time segments: the short slices of time that the pending tables are indexed by. Callers append into
 * a segment after the one the loop may be reading, so their inserts never land in a range the running
 * loop has read. Pure arithmetic; owns no state.
 */

/** One slice of time. 100 ms keeps the start lag of an idle pool under a tenth of a second while
 * letting one loop pass batch everything that arrived during the slice. */
export const SEGMENT_MS = 100;

/** The segment that contains the instant `ms`. */
export function segmentOf(ms: number): number {
  return Math.floor(ms / SEGMENT_MS);
}

/** The first segment a caller may write into at `now`: the loop reads up to `segmentOf(now)`. */
export function nextSegment(now: number): number {
  return segmentOf(now) + 1;
}

/** The first segment whose start is not before `runAt`: a job due then is never started early. */
export function dueSegment(runAt: number): number {
  return Math.ceil(runAt / SEGMENT_MS);
}

/** The segment the loop puts a job due at `runAt` in: never before the next one, never early. */
export function segmentForRunAt(runAt: number, now: number): number {
  return Math.max(nextSegment(now), dueSegment(runAt));
}

/** The instant a segment starts. */
export function segmentStart(segment: number): number {
  return segment * SEGMENT_MS;
}

/** How far below its cursor the loop still reads a pending table: a writer whose clock is up to a
 * second behind the loop's may still append there. The cursor exists so that a pass does not walk
 * the tombstones of every row it ever deleted (they stay in the index until compaction); a second
 * of them is a small, bounded cost. */
export const CURSOR_MARGIN_SEGMENTS = 10;

/** The lowest segment a pass reads of a table whose rows below `cursor` are all gone. */
export function readFrom(cursor: number | undefined): number {
  return Math.max(0, (cursor ?? 0) - CURSOR_MARGIN_SEGMENTS);
}
