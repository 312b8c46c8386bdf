/**
 * What one pass of the loop carries from stage to stage: the transaction, the pass's clock and segment,
 * the config it read, its logger, and the loop state it will write back at the end; and the
 * pending tables' read cursors, and the one read of due `pendingStart` rows that uses them.
 */
import { v, type Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel.js";
import type { MutationCtx } from "../_generated/server.js";
import type { Config } from "../config.js";
import type { DeliveryItem } from "../runners/deliver.js";
import type { ExecutorEntry } from "./executors.js";
import type { KeyEntry } from "./keyState.js";
import type { Logger } from "../model/logging.js";
import { PRIORITY_LEVELS, type StoredPriority } from "../model/validators.js";
import { dueSegment, readFrom, segmentStart } from "../model/segments.js";
import { valueSizeBytes } from "../model/valueMeasure.js";
import { budgetSpent } from "./passBudget.js";
import { errorMessage } from "../model/errors.js";

/** Bytes of rows one batch read of a pass may take (the row that crosses it included: it was
 * read). A pass reads several batches; 2 MiB each keeps the whole pass far below Convex's 16 MiB
 * per transaction, whatever sizes the rows reach within their own caps. */
export const BATCH_READ_BYTES = 2 * 1024 * 1024;

/** True once the pass's stages have spent their budget (passBudget.ts), on any metric: kept for
 * the stages that ask without naming themselves (recovery's judgement of a runner's rows). */
export async function passReadSpent(pass: Pass): Promise<boolean> {
  return await budgetSpent(pass, "recovery");
}

/**
 * Rows of `query`, in its order, until `maxRows` were taken or their bytes reached `maxBytes`.
 * `full` is true when it stopped on either limit (more may wait). Every batch a pass reads goes
 * through here or `.first()`: a count alone does not bound a read of rows whose size users control.
 * With `weigh`, a row counts for its weight towards `maxRows` (a completion row for its outcomes):
 * a row that would carry the count past it is left for later, unless it is the first.
 */
export async function takeWithinBudget<T>(
  query: AsyncIterable<T>,
  maxRows: number,
  maxBytes: number = BATCH_READ_BYTES,
  weigh: (row: T) => number = () => 1,
): Promise<{ rows: T[]; full: boolean }> {
  const rows: T[] = [];
  let count = 0;
  let bytes = 0;
  if (maxRows <= 0) return { rows, full: true };
  for await (const row of query) {
    const weight = weigh(row);
    if (rows.length > 0 && count + weight > maxRows) return { rows, full: true };
    rows.push(row);
    count += weight;
    bytes += valueSizeBytes(row);
    if (count >= maxRows || bytes >= maxBytes) return { rows, full: true };
  }
  return { rows, full: false };
}

export type LoopState = Omit<Doc<"loopState">, "_id" | "_creationTime">;
export type Cursors = NonNullable<LoopState["cursors"]>;

/** The segment a pass reads `table` from (its cursor, less the margin). `start` is the cursor of
 * the "normal" level of `pendingStart`, `startHigh` and `startLow` those of the other two. */
export function tableFrom(pass: Pass, table: keyof Cursors): number {
  return readFrom(pass.state.cursors?.[table]);
}

/** The start cursor of a priority level: of its rows without a key, or (`keyed`) of its keyed
 * rows. In due order (`fairness: "due"`) the stage reads both kinds together from the lower one
 * and moves both (`dueStartsFrom`); under fair share each kind has its own. */
export function startCursorOf(priority: StoredPriority, keyed = false): keyof Cursors {
  return keyed
    ? ofLevel(priority, "keyedHigh", "keyedStart", "keyedLow")
    : ofLevel(priority, "startHigh", "start", "startLow");
}

/** The cursor of a level's hints in `keyReady` (schema.ts `cursors.hints`). */
export function hintCursorOf(priority: StoredPriority): keyof Cursors {
  return ofLevel(priority, "hintsHigh", "hints", "hintsLow");
}

/** The one of three cursors that belongs to a priority level. */
function ofLevel(
  priority: StoredPriority,
  high: keyof Cursors,
  normal: keyof Cursors,
  low: keyof Cursors,
): keyof Cursors {
  return priority === "high" ? high : priority === "low" ? low : normal;
}

/** The creation time a pass reads a level's hints from: its cursor's segment, less the margin, as
 * for the pending tables (a hint's writer's clock may be behind the loop's). */
export function hintsFrom(pass: Pass, level: StoredPriority): number {
  return segmentStart(tableFrom(pass, hintCursorOf(level)));
}

/** Records that every hint of a level created before `createdAt`'s segment was read and placed
 * (or dropped) by this pass. */
export function advanceHintCursor(pass: Pass, level: StoredPriority, createdAt: number): void {
  advanceCursor(pass, hintCursorOf(level), dueSegment(createdAt));
}

/** Drops the hint cursors: under `fairness: "due"` the loop lists keys without a tier, in rows of
 * any age, which a later pass under fair share must read as hints from the start. */
export function forgetHintCursors(pass: Pass): void {
  const cursors = pass.state.cursors;
  if (cursors === undefined) return;
  delete cursors.hints;
  delete cursors.hintsHigh;
  delete cursors.hintsLow;
}

/** The cursor of a level's keys waiting for their rate limit (schema.ts `cursors.waiting`). */
function waitingCursorOf(priority: StoredPriority): keyof Cursors {
  return ofLevel(priority, "waitingHigh", "waiting", "waitingLow");
}

/** The time a pass reads a level's waiting keys from: no waiting row of the level is below it. */
export function waitingFrom(pass: Pass, level: StoredPriority): number {
  return pass.state.cursors?.[waitingCursorOf(level)] ?? 0;
}

/** True once a level's waiting cursor was set (a pass read a waiting row of the level). */
export function hasWaitingCursor(pass: Pass, level: StoredPriority): boolean {
  return pass.state.cursors?.[waitingCursorOf(level)] !== undefined;
}

/** Records that every waiting row of a level below `time` was read by this pass, which places
 * each one again at its end (start.ts `startLevelShared`). */
export function advanceWaitingCursor(pass: Pass, level: StoredPriority, time: number): void {
  advanceCursor(pass, waitingCursorOf(level), time);
}

/** Keeps a level's waiting cursor at or below `time`, the time of a waiting row being written:
 * the cursor's rule then holds whatever clock the writer's pass had. */
export function lowerWaitingCursor(pass: Pass, level: StoredPriority, time: number): void {
  const name = waitingCursorOf(level);
  const cursor = pass.state.cursors?.[name];
  if (cursor !== undefined && time < cursor) pass.state.cursors![name] = time;
}

/** The segment due order reads a level's rows (both kinds) from: the lower of its two cursors. */
function dueStartsFrom(pass: Pass, level: StoredPriority): number {
  const keyed = pass.state.cursors?.[startCursorOf(level, true)];
  const from = tableFrom(pass, startCursorOf(level));
  return keyed === undefined ? from : Math.min(from, tableFrom(pass, startCursorOf(level, true)));
}

/** Which of a level's due rows a read takes: all of them in due order, or one kind. */
export type StartRows = "all" | "keyed" | "unkeyed";

/** The jobs a `pendingStart` row holds: its own, and a batch's others (`more`). */
export function jobsIn(row: Doc<"pendingStart">): number {
  return 1 + (row.more?.length ?? 0);
}

/**
 * Due `pendingStart` rows of one priority level, in (segment, runAt) order, until they hold
 * `limit` jobs (a batch's row holds up to 100), read from that level's own cursor (index
 * `by_priority`). `full` is true when it stopped there: more may be due. Every read of due start
 * rows goes through here: a read across levels by segment would start at the oldest level's
 * cursor and walk the deleted rows of the others.
 */
export async function readDueStarts(
  pass: Pass,
  level: StoredPriority,
  limit: number,
  kind: StartRows = "all",
): Promise<{ rows: Doc<"pendingStart">[]; full: boolean }> {
  const rows: Doc<"pendingStart">[] = [];
  let jobs = 0;
  if (limit <= 0) return { rows, full: true };
  const table = pass.ctx.db.query("pendingStart");
  const query =
    kind === "all"
      ? table.withIndex("by_priority", (q) =>
          q
            .eq("priority", level)
            .gte("segment", dueStartsFrom(pass, level))
            .lte("segment", pass.segment),
        )
      : table.withIndex("by_keyed", (q) =>
          q
            .eq("keyed", kind === "keyed" ? true : undefined)
            .eq("priority", level)
            .gte("segment", tableFrom(pass, startCursorOf(level, kind === "keyed")))
            .lte("segment", pass.segment),
        );
  for await (const row of query) {
    rows.push(row);
    jobs += jobsIn(row);
    if (jobs >= limit) return { rows, full: true };
  }
  return { rows, full: false };
}

/** Due jobs of every level, up to `limit` in all (at most one range per level). */
export async function countDueStarts(pass: Pass, limit: number): Promise<number> {
  let count = 0;
  for (const level of PRIORITY_LEVELS) {
    if (count >= limit) break;
    const { rows } = await readDueStarts(pass, level, limit - count);
    count += rows.reduce((sum, row) => sum + jobsIn(row), 0);
  }
  return Math.min(count, limit);
}

/** Records that every row of a level's `kind` below `segment` is gone ("all": both kinds). */
export function advanceStartCursor(
  pass: Pass,
  level: StoredPriority,
  kind: StartRows,
  segment: number,
): void {
  if (kind !== "keyed") advanceCursor(pass, startCursorOf(level), segment);
  if (kind !== "unkeyed") advanceCursor(pass, startCursorOf(level, true), segment);
}

/** Records that every row of `table` below `segment` is gone (for the waiting keys' cursors,
 * whose rows are ordered by time, `segment` is a time). */
export function advanceCursor(pass: Pass, table: keyof Cursors, segment: number): void {
  const cursors = pass.state.cursors ?? { start: 0, completion: 0, cancelation: 0 };
  cursors[table] = Math.max(cursors[table] ?? 0, segment);
  pass.state.cursors = cursors;
}

export type Pass = {
  ctx: MutationCtx;
  /** The pass's clock (ms since epoch), read once. */
  now: number;
  /** The segment the pass drains up to, inclusive. */
  segment: number;
  config: Config;
  log: Logger;
  /** The loop's bookkeeping; stages change it in place and `main` writes it back once. */
  state: LoopState;
  /** onComplete callbacks of the jobs this pass finished, delivered after it (deliver.ts). */
  deliveries: DeliveryItem[];
  /** The keys this pass read, by key; `flushKeys` writes back the ones it changed. */
  keys: Map<string, KeyEntry>;
  /** The executors this pass read, by executor function and by id (executors.ts). */
  executors: Map<string, ExecutorEntry[]>;
  executorsById: Map<Id<"executors">, ExecutorEntry>;
  /** Action jobs the start stage started, to be given their runners when it is over
   * (start.ts `placeActions`). */
  actionStarts: Doc<"work">[];
  /** Set on a pass the watchdog started after passes failed (the backstop, watchdog.ts): it
   * settles one outcome and nothing else, or sets that outcome's job aside (`setAside`: why). */
  narrow?: Narrow;
  /** The share of Convex's limits the stages may use (passBudget.ts): STAGE_SHARE, or a narrow
   * pass's NARROW_SHARE. */
  budgetShare?: number;
  /** The first stage the budget stopped, and on which metric: the loop runs again at once. */
  budgetStop?: { stage: string; metric: string };
};

/** The stages of an ordinary pass, in their order; a narrow pass (the backstop) runs one. */
export const STAGES = [
  "completions",
  "cancels",
  "recovery",
  "refile",
  "start",
  "sweep",
  "deliveryCheck",
] as const;
export type Stage = (typeof STAGES)[number];
export const vStage = v.union(...STAGES.map((stage) => v.literal(stage)));

/** A narrow pass (main.ts `narrowPass`, started by the watchdog's backstop): the stage it runs
 * alone (undefined: "completions", as a pass scheduled before stages were named); the stage the
 * failed pass was in (`failed`; undefined: unknown, taken as "completions"), which is split (a
 * small budget, completions one outcome a pass, up to `left` of them) while the others run on
 * the ordinary budget; and, when that stage failed twice with a limit error, the reason its
 * first outcome's job is set aside (`setAside`, completions) or that the stage is skipped this
 * once (`skip`, any other stage). */
export const vNarrow = v.object({
  left: v.number(),
  setAside: v.optional(v.string()),
  stage: v.optional(vStage),
  failed: v.optional(vStage),
  skip: v.optional(v.boolean()),
});
export type Narrow = Infer<typeof vNarrow>;

/** The prefix of the error a stage of a pass throws with, which the watchdog reads back from the
 * scheduler's record of the failed pass (`stageOfError`). */
const STAGE_ERROR_PREFIX = "workpool: the loop pass failed in stage ";

/** Runs a stage; an error it throws (a limit met, a fault) goes on with the stage's name. */
export async function inStage<T>(stage: Stage, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    // The cause is set as a property, not as `{ cause }`: apps compile this source with their own
    // lib, which may predate ES2022 (tsconfig.consumer.json checks that it compiles with ES2021).
    const failed: Error & { cause?: unknown } = new Error(
      `${STAGE_ERROR_PREFIX}${stage}: ${errorMessage(error)}`,
    );
    failed.cause = error;
    throw failed;
  }
}

/** The stage a failed pass's error names, if it names one (see `inStage`). */
export function stageOfError(error: string): Stage | undefined {
  const at = error.indexOf(STAGE_ERROR_PREFIX);
  if (at < 0) return undefined;
  const name = error.slice(at + STAGE_ERROR_PREFIX.length).split(":")[0];
  return STAGES.find((stage) => stage === name);
}

/** Whether a narrow pass splits the stage it runs: the one the failed pass was in. */
export function splitsItsStage(narrow: Narrow): boolean {
  return (narrow.stage ?? "completions") === (narrow.failed ?? "completions");
}
