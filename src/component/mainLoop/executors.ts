/**
 * Tasks, the loop's side: handing an admitted task to an executor (an app action that runs many
 * tasks at once, runners/executor.ts), starting executors when none has room, counting what each
 * holds, and taking back tasks an executor never took. The loop admits a task exactly as any other
 * job (start.ts); only how it reaches its runner differs: a `handovers` row instead of a scheduled
 * worker. Only the loop calls this; it never runs user code and never waits for an executor.
 */
import type { FunctionHandle } from "convex/server";
import type { Doc, Id } from "../_generated/dataModel.js";
import { runNumber } from "../model/validators.js";
import type { Pass } from "./pass.js";

/** Tasks an executor is handed before it says how many it runs at once (its first report): the
 * API's default concurrency, so an executor that keeps the default is filled at once. */
export const DEFAULT_EXECUTOR_CONCURRENCY = 50;
/** An executor is handed tasks for this long after it started; later tasks go to a new one.
 * Convex ends an action after 10 minutes and a task may take 5 (the longest timeoutMs), so a task
 * handed over in the first 4 minutes always has time to run. */
export const EXECUTOR_HANDOVER_WINDOW_MS = 4 * 60_000;
/** Executors of one executor function a pass looks at: with 1,000 tasks in flight at the smallest
 * concurrency worth using (10), 100 executors; more would mean a pool of far more actions than
 * Convex runs at once. */
export const MAX_EXECUTORS_PER_FUNCTION = 100;
/** One executor as a pass sees it: its row, and whether the pass changed its count. */
export type ExecutorEntry = {
  row: Doc<"executors">;
  dirty: boolean;
  gone?: boolean;
  /** Started by this pass: its first report runs after the pass commits. */
  fresh?: boolean;
};

/** The executors of one executor function, read once per pass. */
async function executorsOf(pass: Pass, fnHandle: string): Promise<ExecutorEntry[]> {
  const known = pass.executors.get(fnHandle);
  if (known) return known;
  const rows = await pass.ctx.db
    .query("executors")
    .withIndex("by_fnHandle", (q) => q.eq("fnHandle", fnHandle))
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
      await pass.ctx.db.delete("executors", row._id);
      entry.gone = true;
      continue;
    }
    entries.push(entry);
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
  if (gone || row.ending || row.scheduledId === undefined) return false;
  if (pass.now - row.startedAt >= EXECUTOR_HANDOVER_WINDOW_MS) return false;
  return row.assigned < (row.concurrency ?? DEFAULT_EXECUTOR_CONCURRENCY);
}

/**
 * Hands an admitted task to an executor with room (starting one when none has), as a `handovers`
 * row in the next segment. Returns what the job's running state records: the executor and its
 * action's scheduled run (recovery asks the scheduler about it, as about a worker).
 */
export async function handOverTask(
  pass: Pass,
  work: Doc<"work">,
): Promise<{ scheduledId: Id<"_scheduled_functions">; executorId: Id<"executors"> }> {
  const entries = await executorsOf(pass, work.fnHandle);
  const entry =
    entries.find((candidate) => hasRoom(pass, candidate)) ??
    (await startExecutor(pass, work.fnHandle, entries));
  entry.row.assigned++;
  entry.dirty = true;
  await pass.ctx.db.insert("handovers", {
    executorId: entry.row._id,
    // A running executor's reports read up to their own segment: the next one is not being read.
    // One started by this pass reports only after it commits, so it may read this one.
    segment: entry.fresh ? pass.segment : pass.segment + 1,
    kind: "task",
    workId: work._id,
    attempt: runNumber(work),
    previousAttempts: work.attempts,
    task: work.task,
    fnArgs: work.fnArgs,
    payloadId: work.payloadId,
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
  const id = await ctx.db.insert("executors", { fnHandle, startedAt: pass.now, assigned: 0 });
  const scheduledId = await ctx.scheduler.runAfter(0, fnHandle as FunctionHandle<"action">, {
    executorId: id,
  });
  await ctx.db.patch("executors", id, { scheduledId });
  const row: Doc<"executors"> = {
    _id: id,
    _creationTime: pass.now,
    fnHandle,
    startedAt: pass.now,
    assigned: 0,
    scheduledId,
  };
  const entry = { row, dirty: false, fresh: true };
  entries.push(entry);
  pass.executorsById.set(id, entry);
  pass.log.debug("executorStarted", { executorId: id });
  return entry;
}

/** Counts a task's attempt as ended in its executor (reported, taken back, or found dead). */
export async function releaseTask(pass: Pass, executorId: Id<"executors">): Promise<void> {
  const entry = await executorById(pass, executorId);
  if (entry === undefined) return;
  entry.row.assigned = Math.max(0, entry.row.assigned - 1);
  entry.dirty = true;
}

/** Asks the executor running a task to cancel it (its signal aborts at its next report). */
export async function handOverCancel(pass: Pass, work: Doc<"work">): Promise<void> {
  if (work.state.kind !== "running" || work.state.executorId === undefined) return;
  await pass.ctx.db.insert("handovers", {
    executorId: work.state.executorId,
    segment: pass.segment + 1,
    kind: "cancel",
    workId: work._id,
    attempt: runNumber(work),
  });
}

/** The task hand-over of a running task that its executor has not taken yet, if any. */
export async function untakenHandover(
  pass: Pass,
  workId: Id<"work">,
): Promise<Doc<"handovers"> | null> {
  const rows = await pass.ctx.db
    .query("handovers")
    .withIndex("by_workId", (q) => q.eq("workId", workId))
    .take(4);
  return rows.find((row) => row.kind === "task") ?? null;
}

/** Whether an executor's action is over (ended, failed, canceled or gone), per the scheduler. */
async function actionOver(pass: Pass, row: Doc<"executors">): Promise<boolean> {
  if (row.scheduledId === undefined) return false;
  const run = await pass.ctx.db.system.get(row.scheduledId);
  return run === null || (run.state.kind !== "pending" && run.state.kind !== "inProgress");
}

/**
 * Writes back the executors this pass changed. One whose tasks have all ended is deleted once it
 * said it ends, or once its action is over (it died, or ended on its own): nothing refers to it.
 */
export async function flushExecutors(pass: Pass): Promise<void> {
  for (const entry of pass.executorsById.values()) {
    if (!entry.dirty || entry.gone) continue;
    const { row } = entry;
    if (row.assigned === 0 && (row.ending || (await actionOver(pass, row)))) {
      await pass.ctx.db.delete("executors", row._id);
      entry.gone = true;
    } else {
      await pass.ctx.db.patch("executors", row._id, { assigned: row.assigned });
    }
  }
}
