/**
 * Tasks, the loop's side: handing an admitted task to an executor (an app action that runs many
 * tasks at once, runners/executor.ts), starting executors when none has room, counting what each
 * holds, and taking back tasks an executor never took. The loop admits a task exactly as any other
 * job (start.ts); only how it reaches its runner differs: a `handovers` row (one per executor per
 * pass, holding every task the pass handed it) instead of a scheduled worker. Only the loop calls this; it never runs user code and never waits for an executor.
 */
import type { FunctionHandle } from "convex/server";
import { internal } from "../_generated/api.js";
import { capErrorMessage, errorMessage } from "../model/errors.js";
import type { Doc, Id } from "../_generated/dataModel.js";
import { runNumber, type TaskHandover } from "../model/validators.js";
import { valueSizeBytes } from "../model/valueMeasure.js";
import type { MutationCtx } from "../_generated/server.js";
import type { Pass } from "./pass.js";
import { keyEntry } from "./keyState.js";

/** Tasks an executor is handed before it says how many it runs at once (its first report): the
 * API's default concurrency, so an executor that keeps the default is filled at once. */
export const DEFAULT_EXECUTOR_CONCURRENCY = 50;
/** An executor is handed tasks for this long after it started; later tasks go to a new one.
 * Convex ends an action after 10 minutes and a task may take 5 (the longest timeoutMs), so a task
 * handed over in the first 4 minutes always has time to run. */
export const EXECUTOR_HANDOVER_WINDOW_MS = 4 * 60_000;
/** When an executor's row is checked for deletion after its start: Convex ends an action 10
 * minutes after it starts, plus a minute for a late start and clocks (runners/executor.ts
 * `dropIfOver`). */
export const EXECUTOR_ROW_CHECK_AFTER_MS = 11 * 60_000;
/** Bytes of tasks one `handovers` row holds at most (a pass handing more writes more rows): each
 * task's args are inline only up to 8 KiB; 64 KiB keeps what recovery may read of a dead
 * executor's rows (HANDOVER_ROWS_READ of them) near a megabyte. */
export const HANDOVER_ROW_BYTES = 64 * 1024;
/** Hand-over rows of one executor that recovery reads (once a pass) when it looks for a task the
 * executor never took: the executor is over, so its rows only shrink (each untaken task is taken
 * back); a task not among them is judged again in the next cycle. */
export const HANDOVER_ROWS_READ = 20;
/** Executors of one executor function a pass looks at: with 1,000 tasks in flight at the smallest
 * concurrency worth using (10), 100 executors; more would mean a pool of far more actions than
 * Convex runs at once. */
export const MAX_EXECUTORS_PER_FUNCTION = 100;
/** One executor as a pass sees it: its row, and whether the pass changed its count. */
export type ExecutorEntry = {
  row: Doc<"executors">;
  dirty: boolean;
  /** What this pass hands it, written as its `handovers` rows by `flushExecutors`. */
  handed?: { tasks: TaskHandover[]; cancels: Id<"work">[] };
  gone?: boolean;
  /** Started by this pass: its first report runs after the pass commits. */
  fresh?: boolean;
};

/** Whether an executor may take more tasks as far as its counts and age go (its row's `open`):
 * one past its hand-over window is closed for good, so that old executors do not fill the
 * bounded read of open ones. */
export function isOpen(
  row: Pick<Doc<"executors">, "ending" | "assigned" | "concurrency" | "startedAt">,
  now: number,
) {
  return (
    !row.ending &&
    now - row.startedAt < EXECUTOR_HANDOVER_WINDOW_MS &&
    row.assigned < (row.concurrency ?? DEFAULT_EXECUTOR_CONCURRENCY)
  );
}

/** The executors of one executor function that may take tasks, read once per pass: the open ones,
 * and those this pass already read (one whose task this pass settled may have room now). */
async function executorsOf(pass: Pass, fnHandle: string): Promise<ExecutorEntry[]> {
  const known = pass.executors.get(fnHandle);
  if (known) return known;
  const rows = await pass.ctx.db
    .query("executors")
    .withIndex("by_open", (q) => q.eq("fnHandle", fnHandle).eq("open", true))
    .take(MAX_EXECUTORS_PER_FUNCTION);
  const entries: ExecutorEntry[] = [];
  for (const row of rows) {
    // One entry per executor in a pass: one settling a task may have read it already.
    const entry = pass.executorsById.get(row._id) ?? { row, dirty: false };
    pass.executorsById.set(row._id, entry);
    if (entry.gone) continue;
    // An executor that ended after its last task was settled is not written again by a pass that
    // settles one: it goes here, when its function's executors are next read.
    if (entry.row.assigned === 0 && (entry.row.ending || (await actionOver(pass, entry.row)))) {
      await dropExecutor(pass, entry);
      continue;
    }
    // Past its hand-over window since it was last written: written closed by this pass.
    if (!isOpen(entry.row, pass.now)) entry.dirty = true;
    entries.push(entry);
  }
  for (const entry of pass.executorsById.values()) {
    if (entry.row.fnHandle === fnHandle && !entry.gone && !entries.includes(entry)) {
      entries.push(entry);
    }
  }
  pass.executors.set(fnHandle, entries);
  return entries;
}

/** The entry of one executor, read once per pass. */
async function executorById(pass: Pass, id: Id<"executors">): Promise<ExecutorEntry | undefined> {
  const known = pass.executorsById.get(id);
  if (known) return known;
  const row = await pass.ctx.db.get("executors", id);
  if (row === null) return undefined;
  const entry = { row, dirty: false };
  pass.executorsById.set(id, entry);
  return entry;
}

/** Whether an executor takes another task now. */
function hasRoom(pass: Pass, { row, gone }: ExecutorEntry): boolean {
  return !gone && row.scheduledId !== undefined && isOpen(row, pass.now);
}

/** What the pass hands an executor, gathered until `flushExecutors` writes it. */
function handedTo(entry: ExecutorEntry): NonNullable<ExecutorEntry["handed"]> {
  entry.handed ??= { tasks: [], cancels: [] };
  return entry.handed;
}

/**
 * Hands an admitted task to an executor with room (starting one when none has), in the executor's
 * `handovers` row of this pass. Returns what the job's running state records: the executor and its
 * action's scheduled run (recovery asks the scheduler about it, as about a worker).
 */
export async function handOverTask(
  pass: Pass,
  work: Doc<"work">,
  runAt: number,
): Promise<{ scheduledId: Id<"_scheduled_functions">; executorId: Id<"executors"> }> {
  const entries = await executorsOf(pass, work.fnHandle);
  const entry =
    entries.find((candidate) => hasRoom(pass, candidate)) ??
    (await startExecutor(pass, work.fnHandle, entries));
  entry.row.assigned++;
  entry.dirty = true;
  handedTo(entry).tasks.push({
    workId: work._id,
    attempt: runNumber(work),
    previousAttempts: work.attempts,
    task: work.task ?? "",
    fnArgs: work.fnArgs,
    payloadId: work.payloadId,
    runAt,
    ...(work.key === undefined
      ? {}
      : { key: work.key, keyParallelism: (await keyEntry(pass, work.key)).limit }),
  });
  return { scheduledId: entry.row.scheduledId!, executorId: entry.row._id };
}

/** Starts an executor action for `fnHandle` (its row first: the action is told its id). */
async function startExecutor(
  pass: Pass,
  fnHandle: string,
  entries: ExecutorEntry[],
): Promise<ExecutorEntry> {
  const { ctx } = pass;
  const concurrency = await knownConcurrency(pass, fnHandle, entries);
  const id = await ctx.db.insert("executors", {
    fnHandle,
    startedAt: pass.now,
    assigned: 0,
    open: true,
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  let scheduledId: Id<"_scheduled_functions">;
  try {
    scheduledId = await ctx.scheduler.runAfter(0, fnHandle as FunctionHandle<"action">, {
      executorId: id,
    });
  } catch (error) {
    // The executor cannot be scheduled (a deploy removed its function): the pass must not fail
    // (it would fail again on every run, and wedge the loop). A stand-in that fails at once runs
    // instead, so that recovery meets an executor that failed before taking its tasks, and the
    // tasks end in bounded time as for any such executor (recovery.ts, TAKE_BACKS_FREE).
    pass.log.error("executorUnschedulable", { fnHandle, error: errorMessage(error) });
    // What it said of its concurrency goes with it (a deploy that brings it back says again).
    const said = await concurrencyRow(pass.ctx, fnHandle);
    if (said !== null) await ctx.db.delete("executorFunctions", said._id);
    scheduledId = await ctx.scheduler.runAfter(0, internal.runners.executor.unschedulable, {
      executorId: id,
      error: capErrorMessage(errorMessage(error)),
    });
  }
  await ctx.db.patch("executors", id, { scheduledId });
  // Once its action is over for certain, its row goes if nothing else deleted it (its last report
  // may fail as it dies, and nothing reads a closed row again).
  await ctx.scheduler.runAfter(EXECUTOR_ROW_CHECK_AFTER_MS, internal.runners.executor.dropIfOver, {
    executorId: id,
  });
  const row: Doc<"executors"> = {
    _id: id,
    _creationTime: pass.now,
    fnHandle,
    startedAt: pass.now,
    assigned: 0,
    open: true,
    scheduledId,
    ...(concurrency === undefined ? {} : { concurrency }),
  };
  const entry = { row, dirty: false, fresh: true };
  entries.push(entry);
  pass.executorsById.set(id, entry);
  pass.log.debug("executorStarted", { executorId: id });
  return entry;
}

/** The row holding what an executor function said of its concurrency (`executorFunctions`). */
export async function concurrencyRow(
  ctx: MutationCtx,
  fnHandle: string,
): Promise<Doc<"executorFunctions"> | null> {
  return await ctx.db
    .query("executorFunctions")
    .withIndex("by_fnHandle", (q) => q.eq("fnHandle", fnHandle))
    .first();
}

/** How many tasks an executor of `fnHandle` runs at once, as one said in a report (the same code
 * says the same): a new executor is handed no more than that before its own first report, so it
 * holds no task it cannot start. What an executor this pass holds said comes first; otherwise the
 * function's `executorFunctions` row, which outlives its executors. Undefined when none has said
 * yet. (A report that writes that row meanwhile makes one of the two transactions run again.) */
async function knownConcurrency(
  pass: Pass,
  fnHandle: string,
  entries: ExecutorEntry[],
): Promise<number | undefined> {
  const known = entries.find((entry) => entry.row.concurrency !== undefined);
  if (known) return known.row.concurrency;
  return (await concurrencyRow(pass.ctx, fnHandle))?.concurrency;
}

/** Counts a task's attempt as ended in its executor (reported, taken back, or found dead). */
export async function releaseTask(pass: Pass, executorId: Id<"executors">): Promise<void> {
  const entry = await executorById(pass, executorId);
  if (entry === undefined) return;
  entry.row.assigned = Math.max(0, entry.row.assigned - 1);
  entry.dirty = true;
}

/** Closes an executor whose action recovery found over (it died, or ended leaving a task
 * untaken): it is handed nothing more, though its row stays open to counts until every task it
 * held is settled. Without this a pass would hand the tasks recovery freed to the dead executor
 * again, and recovery take them back, until its hand-over window closed. */
export async function closeExecutor(pass: Pass, executorId: Id<"executors">): Promise<void> {
  const entry = await executorById(pass, executorId);
  if (entry === undefined || entry.row.ending) return;
  entry.row.ending = true;
  entry.dirty = true;
}

/** Asks the executor running a task to cancel it (its signal aborts at its next report). */
export async function handOverCancel(pass: Pass, work: Doc<"work">): Promise<void> {
  if (work.state.kind !== "running" || work.state.executorId === undefined) return;
  // A running task's executor keeps its row (it is deleted only once nothing it holds runs).
  const entry = await executorById(pass, work.state.executorId);
  if (entry === undefined) return;
  handedTo(entry).cancels.push(work._id);
  entry.dirty = true;
}

/** A task hand-over an executor has not taken yet: the row that holds it, and the task. */
export type Untaken = { row: Doc<"handovers">; task: TaskHandover };

/** An over executor's hand-over rows, as recovery read them once in a pass (`partial`: it has
 * more than HANDOVER_ROWS_READ). Rows that held only cancels are gone: they are moot for an
 * executor that is over, so the rows left ahead of an untaken task only shrink. */
export type LeftHandovers = { rows: Doc<"handovers">[]; partial: boolean };

export async function leftHandovers(
  pass: Pass,
  executorId: Id<"executors">,
): Promise<LeftHandovers> {
  const read = await pass.ctx.db
    .query("handovers")
    .withIndex("by_executor", (q) => q.eq("executorId", executorId))
    .take(HANDOVER_ROWS_READ);
  const rows: Doc<"handovers">[] = [];
  for (const row of read) {
    if (row.tasks.length > 0) rows.push(row);
    else await pass.ctx.db.delete("handovers", row._id);
  }
  return { rows, partial: read.length === HANDOVER_ROWS_READ };
}

/** The hand-over of a task its executor never took: null when it was taken, "unknown" when the
 * executor has more rows than were read and none read holds it. */
export function untakenIn(left: LeftHandovers, workId: Id<"work">): Untaken | null | "unknown" {
  for (const row of left.rows) {
    // Tasks a report took (kept for a retry of that report) were taken: not untaken.
    if (row.takenBy !== undefined) continue;
    const task = row.tasks.find((handed) => handed.workId === workId);
    if (task) return { row, task };
  }
  return left.partial ? "unknown" : null;
}

/** Takes an untaken task back from its hand-over row (the row goes with its last task). */
export async function takeBack(pass: Pass, { row, task }: Untaken): Promise<void> {
  const tasks = row.tasks.filter((handed) => handed.workId !== task.workId);
  // Its executor is over: cancels left with the last task are moot.
  if (tasks.length === 0) {
    await pass.ctx.db.delete("handovers", row._id);
  } else {
    await pass.ctx.db.patch("handovers", row._id, { tasks });
  }
  row.tasks = tasks;
}

/** Whether an executor's action is over (ended, failed, canceled or gone), per the scheduler. */
async function actionOver(pass: Pass, row: Doc<"executors">): Promise<boolean> {
  if (row.scheduledId === undefined) return false;
  const run = await pass.ctx.db.system.get(row.scheduledId);
  return run === null || (run.state.kind !== "pending" && run.state.kind !== "inProgress");
}

/**
 * Writes back the executors this pass changed, and what it handed them. One whose tasks have all
 * ended is deleted once it said it ends, or once its action is over (it died, or ended on its
 * own): nothing refers to it.
 */
export async function flushExecutors(pass: Pass): Promise<void> {
  for (const entry of pass.executorsById.values()) {
    if (!entry.dirty || entry.gone) continue;
    const { row } = entry;
    if (entry.handed) await writeHandovers(pass, entry, entry.handed);
    if (row.assigned === 0 && (row.ending || (await actionOver(pass, row)))) {
      await dropExecutor(pass, entry);
    } else {
      await pass.ctx.db.patch("executors", row._id, {
        assigned: row.assigned,
        open: isOpen(row, pass.now),
        ...(row.ending ? { ending: true as const } : {}),
      });
    }
  }
}

/** Deletes an executor that holds no task any more, with the hand-overs it left: only cancels
 * can be left (an untaken task counts as held until it is taken back), and they are moot. */
async function dropExecutor(pass: Pass, entry: ExecutorEntry): Promise<void> {
  await deleteExecutorRow(pass.ctx, entry.row._id);
  entry.gone = true;
}

/** Deletes an executor's row and the hand-over rows it left (see dropExecutor). */
export async function deleteExecutorRow(ctx: MutationCtx, id: Id<"executors">): Promise<void> {
  const left = await ctx.db
    .query("handovers")
    .withIndex("by_executor", (q) => q.eq("executorId", id))
    .take(HANDOVER_ROWS_READ);
  for (const row of left) await ctx.db.delete("handovers", row._id);
  await ctx.db.delete("executors", id);
}

/** Writes what the pass handed one executor: as few rows as HANDOVER_ROW_BYTES allows. */
async function writeHandovers(
  pass: Pass,
  entry: ExecutorEntry,
  { tasks, cancels }: NonNullable<ExecutorEntry["handed"]>,
): Promise<void> {
  // A running executor's reports read up to their own segment: the next one is not being read.
  // One started by this pass reports only after it commits, so it may read this one.
  const segment = entry.fresh ? pass.segment : pass.segment + 1;
  const insert = (rowTasks: TaskHandover[], rowCancels: Id<"work">[]) =>
    pass.ctx.db.insert("handovers", {
      executorId: entry.row._id,
      segment,
      tasks: rowTasks,
      cancels: rowCancels,
      ...(rowTasks.length > 0 ? { maxParallelism: pass.config.maxParallelism } : {}),
    });
  let row: TaskHandover[] = [];
  let bytes = 0;
  let rowCancels = cancels;
  for (const task of tasks) {
    const size = valueSizeBytes(task);
    if (row.length > 0 && bytes + size > HANDOVER_ROW_BYTES) {
      await insert(row, rowCancels);
      row = [];
      bytes = 0;
      rowCancels = [];
    }
    row.push(task);
    bytes += size;
  }
  if (row.length > 0 || rowCancels.length > 0) await insert(row, rowCancels);
}
