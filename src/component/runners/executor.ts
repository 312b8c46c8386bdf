/**
 * Executors, the component's side: the one function an executor action (an app action made by the
 * client's `pool.executor`, running many tasks at once) calls. A `report` records the outcomes of
 * the tasks it finished, exactly as a worker's report does (a `pendingCompletion` row each, which
 * the loop settles), and carries back what the loop handed the executor since: tasks to run and
 * tasks to cancel. An executor with nothing left says so in its last report and ends, unless that
 * report brings it more. Writes only `pendingCompletion` (and a payload for a large result), the
 * hand-overs it takes, its own executor row (`concurrency`, `ending`, or its deletion when the
 * loop has nothing of it left to settle) and its function's `executorFunctions` row (the
 * concurrency it states, when new or changed). A task it reads but is not to start (no room, a
 * pause of the pool or of the task's key, a lowered maxParallelism or key parallelism) it gives
 * back as an outcome
 * marked `givenBack`, which the loop undoes as a start; never decides
 * retries, never changes a job's state, never admits a task (the loop does, mainLoop/executors.ts).
 */
import { v, type Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel.js";
import {
  internalAction,
  internalMutation,
  mutation,
  type MutationCtx,
} from "../_generated/server.js";
import { recordCompletions, type ReportedOutcome } from "../mainLoop/complete.js";
import { internal } from "../_generated/api.js";
import {
  concurrencyRow,
  deleteExecutorRow,
  EXECUTOR_ROW_CHECK_AFTER_MS,
  isOpen,
} from "../mainLoop/executors.js";
import { invalidArgument } from "../model/errors.js";
import { valueSizeBytes } from "../model/valueMeasure.js";
import { segmentOf } from "../model/segments.js";
import { vAttemptResult, type TaskHandover } from "../model/validators.js";
import { readConfig } from "../config.js";
import { CANCELED_BEFORE_START } from "./batchRun.js";

/** Tasks one report takes at most: the most tasks an executor runs at once. */
export const REPORT_TAKE_BATCH = 1000;
/** Hand-over rows one report reads at most: rows it leaves tasks in (it takes no more than it has
 * room for) are read again by its next report, for their cancels; the loop writes at most one
 * row per pass per executor, and fills no more than the executor's room. */
export const REPORT_ROWS_READ = 20;
/** Bytes of task arguments one report returns at most (large ones are read from their payload):
 * a report's answer stays far below Convex's limits, and the rest come with the next report. */
export const REPORT_ARGS_BYTES = 4 * 1024 * 1024;
/** Outcomes one report carries at most (the executor sends more in further reports). */
export const MAX_REPORT_OUTCOMES = 1000;

/** A task the executor is to run. */
const vHandedTask = v.object({
  workId: v.string(),
  attempt: v.number(),
  previousAttempts: v.number(),
  task: v.string(),
  fnArgs: v.any(),
});

export const vReportAnswer = v.object({
  /** Tasks to run. */
  tasks: v.array(vHandedTask),
  /** Tasks (by id) to cancel: abort their signal. */
  cancels: v.array(v.string()),
  /** More hand-overs wait than this answer carries: report again soon. */
  more: v.boolean(),
  /** The executor is not (or no longer) known to the pool: end now. */
  stop: v.boolean(),
});

const NONE = { tasks: [], cancels: [], more: false, stop: true };

/**
 * An executor's report: the outcomes it has for the pool, and (with `ending`) that it has nothing
 * left and will end unless the answer brings more. `concurrency` is how many tasks it runs at
 * once, said on its first report.
 */
export const report = mutation({
  args: {
    executorId: v.string(),
    concurrency: v.optional(v.number()),
    /** Tasks the executor can start now: the report takes no more (omitted: as many as wait). */
    room: v.optional(v.number()),
    outcomes: v.array(
      v.object({ workId: v.string(), attempt: v.number(), result: vAttemptResult }),
    ),
    ending: v.optional(v.boolean()),
    /** The report's sequence number: the executor's n-th answered report sends n + 1, and a
     * retry of an unanswered one sends its number again, so a retry never loses what the
     * unanswered call took (omitted: tasks taken are not kept for a retry). */
    seq: v.optional(v.number()),
    /** Bytes of args the executor may still take (its memory rule): the report stops taking
     * tasks once their args pass it, after the first. */
    argsRoom: v.optional(v.number()),
  },
  returns: vReportAnswer,
  handler: async (ctx, { executorId, concurrency, room, outcomes, ending, seq, argsRoom }) => {
    if (outcomes.length > MAX_REPORT_OUTCOMES) {
      invalidArgument("outcomes", `at most ${MAX_REPORT_OUTCOMES} per report`, outcomes.length);
    }
    if (room !== undefined && !(Number.isInteger(room) && room >= 0)) {
      invalidArgument("room", "must be a whole number, 0 or more", room);
    }
    if (argsRoom !== undefined && !(Number.isFinite(argsRoom) && argsRoom >= 0)) {
      invalidArgument("argsRoom", "must be a number of bytes, 0 or more", argsRoom);
    }
    const id = ctx.db.normalizeId("executors", executorId);
    const row = id === null ? null : await ctx.db.get("executors", id);
    const reported: ReportedOutcome[] = [];
    for (const outcome of outcomes) {
      const workId = ctx.db.normalizeId("work", outcome.workId);
      if (workId === null) continue; // not a job of this pool: nothing to record
      reported.push({ workId, attempt: outcome.attempt, result: outcome.result });
    }
    if (row === null) {
      await recordCompletions(ctx, reported);
      return NONE;
    }
    if (concurrency !== undefined) {
      if (row.concurrency !== concurrency) {
        await ctx.db.patch("executors", row._id, {
          concurrency,
          open: isOpen({ ...row, concurrency }, Date.now()),
        });
      }
      await rememberConcurrency(ctx, row.fnHandle, concurrency);
    }
    // Tasks not yet taken obey a pause (of the pool or of their key) and a lowered
    // maxParallelism or key parallelism that came after the loop handed them over: the report
    // gives them back instead (settings change rarely, so these reads seldom conflict).
    const config = await readConfig(ctx.db);
    const keyHolds = keyHoldsBack(ctx, config.keyParallelism);
    const { unstarted, ...answer } = await takeHandovers(ctx, row._id, {
      all: ending === true,
      room: room ?? REPORT_TAKE_BATCH,
      argsRoom: argsRoom ?? REPORT_ARGS_BYTES,
      seq,
      giveBackExcess: room !== undefined,
      withheld: (handover) =>
        config.paused === true ||
        (handover.maxParallelism !== undefined && config.maxParallelism < handover.maxParallelism),
      keyHolds,
    });
    // Filed under the executor's id, which its tasks' running state names (for recovery).
    await recordCompletions(ctx, [...reported, ...unstarted], row._id);
    if (ending && answer.tasks.length === 0 && !answer.more) {
      // Nothing of its own left for the loop to settle: the row goes now. Otherwise the loop
      // deletes it once it settled the rest (mainLoop/executors.ts `flushExecutors`).
      if (row.assigned === 0) await ctx.db.delete("executors", row._id);
      else await ctx.db.patch("executors", row._id, { ending: true, open: false });
      return { ...answer, stop: true };
    }
    return answer;
  },
});

/**
 * Takes (deletes and returns) what the loop handed the executor up to this moment's segment: the
 * loop writes into the segment after its own, so a report does not read what a pass that runs
 * meanwhile writes. A last report (`all`) reads every segment instead: a pass handing it a task at
 * that moment then conflicts with it (one of the two runs again, and sees the other), so no task
 * is handed to an executor that has ended. Takes at most `room` tasks (so the executor starts
 * each at once: one it never took stays here, and goes back to pending if the executor dies),
 * REPORT_TAKE_BATCH, or REPORT_ARGS_BYTES of arguments; the rest stay in their rows for the next
 * report (`more`). The cancels of every row read are taken: one of a task left in a row read
 * ends that task's attempt here (`unstarted`), and the executor never sees either.
 */
async function takeHandovers(
  ctx: MutationCtx,
  executorId: Id<"executors">,
  {
    all,
    room,
    argsRoom,
    seq,
    giveBackExcess,
    withheld,
    keyHolds,
  }: {
    all: boolean;
    room: number;
    argsRoom: number;
    seq: number | undefined;
    giveBackExcess: boolean;
    withheld: (row: Doc<"handovers">) => boolean;
    /** Whether the task's key holds it back now (paused, or its limit lowered since). */
    keyHolds: (handed: TaskHandover) => Promise<boolean>;
  },
) {
  const tasks: Array<Infer<typeof vHandedTask>> = [];
  const cancels = new Set<string>();
  const limit = Math.min(room, REPORT_TAKE_BATCH);
  let bytes = 0;
  const full = () => tasks.length >= limit || bytes >= Math.min(REPORT_ARGS_BYTES, argsRoom);
  const rows = await ctx.db
    .query("handovers")
    .withIndex("by_executor", (q) =>
      all
        ? q.eq("executorId", executorId)
        : q.eq("executorId", executorId).lte("segment", segmentOf(Date.now())),
    )
    .take(REPORT_ROWS_READ + 1);
  const taken = async (tasks: TaskHandover[]) => {
    const answer: Array<Infer<typeof vHandedTask>> = [];
    for (const handed of tasks) {
      const payload = handed.payloadId ? await ctx.db.get("payloads", handed.payloadId) : null;
      const { workId, attempt, previousAttempts, task } = handed;
      answer.push({
        workId,
        attempt,
        previousAttempts,
        task,
        fnArgs: payload ? payload.fnArgs : handed.fnArgs,
      });
    }
    return answer;
  };
  // Rows earlier reports took: the executor got their answers (it sends a later number now), so
  // they go. Rows this report's number took: its first call committed but the answer was lost,
  // so this retry answers with them again, and takes nothing new.
  const retried = rows.filter((row) => row.takenBy !== undefined && row.takenBy === seq);
  for (const row of rows) {
    if (row.takenBy !== undefined && row.takenBy !== seq) await ctx.db.delete("handovers", row._id);
  }
  if (retried.length > 0) {
    return {
      tasks: await taken(retried.flatMap((row) => row.tasks)),
      cancels: [...new Set(retried.flatMap((row) => row.cancels))],
      more: true,
      stop: false,
      unstarted: [],
    };
  }
  const open = rows.slice(0, REPORT_ROWS_READ).filter((row) => row.takenBy === undefined);
  let more = rows.length > REPORT_ROWS_READ;
  /** Each row read, and the tasks this report took from it: written back once the answer is
   * known (below). */
  const read: Array<{ row: Doc<"handovers">; took: TaskHandover[]; rest: TaskHandover[] }> = [];
  /** Tasks read that the executor is not to take: they go back to the pool (below). */
  const givenBack: TaskHandover[] = [];
  for (const row of open) {
    for (const workId of row.cancels) cancels.add(workId);
    if (withheld(row)) {
      // Handed over before a pause or a lowered maxParallelism: not to start now.
      givenBack.push(...row.tasks);
      read.push({ row, took: [], rest: [] });
      continue;
    }
    const took: TaskHandover[] = [];
    let consumed = 0;
    for (const handed of row.tasks) {
      if (tasks.length >= limit && giveBackExcess) {
        // More than the executor can start now (handed before its first report said how many
        // it runs, or at its time limit): it holds none it cannot start, so this one goes back.
        givenBack.push(handed);
        consumed++;
        continue;
      }
      if (full()) break;
      // Read only for a task it would take: at most `room` keys a report (each read once).
      if (await keyHolds(handed)) {
        // Handed over before its key was paused or its limit lowered (review 2026-11-27 L4):
        // not to start now; the loop starts it within the key's limit, at its place in line.
        givenBack.push(handed);
        consumed++;
        continue;
      }
      const [answer] = await taken([handed]);
      bytes += valueSizeBytes(answer.fnArgs);
      tasks.push(answer);
      took.push(handed);
      consumed++;
    }
    read.push({ row, took, rest: row.tasks.slice(consumed) });
  }
  const unstarted: ReportedOutcome[] = [];
  for (const { workId, attempt, fnArgs, runAt } of givenBack) {
    // Back to pending at its place in line, no attempt used and its start undone (inline args go
    // back to the job's row); a task canceled meanwhile ends its attempt canceled instead, and the
    // executor never sees the cancel.
    unstarted.push({
      workId,
      attempt,
      result: cancels.delete(workId)
        ? { kind: "failed", error: CANCELED_BEFORE_START, fnArgs }
        : { kind: "snoozed", delayMs: 0, fnArgs },
      givenBack: { runAt },
    });
  }
  const waitingIn = new Map<Id<"handovers">, TaskHandover[]>();
  for (const { row, rest } of read) {
    waitingIn.set(
      row._id,
      rest.filter((handed) => {
        if (!cancels.delete(handed.workId)) return true;
        // Inline args go back to the job's row (a retry needs them); a payload stays.
        const { workId, attempt, fnArgs, runAt } = handed;
        unstarted.push({
          workId,
          attempt,
          result: { kind: "failed", error: CANCELED_BEFORE_START, fnArgs },
          givenBack: { runAt },
        });
        return false;
      }),
    );
  }
  // Every row read is written back knowing the answer. What this report took of a row (tasks, and
  // the cancels its answer carries) stays marked with the report's number until the executor's
  // next report, so that a retry of this one is answered with all of it, cancels included (with
  // no number, nothing is kept). Tasks left in a row wait for the next report.
  for (const { row, took } of read) {
    const answered = row.cancels.filter((workId) => cancels.has(workId));
    const keep = seq !== undefined && (took.length > 0 || answered.length > 0);
    const waiting = waitingIn.get(row._id) ?? [];
    if (waiting.length > 0) more = true;
    if (waiting.length > 0 && keep) {
      await ctx.db.insert("handovers", {
        executorId: row.executorId,
        segment: row.segment,
        tasks: took,
        cancels: answered,
        takenBy: seq,
      });
    }
    if (waiting.length > 0) {
      // The row's cancels were taken (a task of its own canceled went back above).
      await ctx.db.patch("handovers", row._id, { tasks: waiting, cancels: [] });
    } else if (keep) {
      await ctx.db.patch("handovers", row._id, { tasks: took, cancels: answered, takenBy: seq });
    } else {
      await ctx.db.delete("handovers", row._id);
    }
  }
  return { tasks, cancels: [...cancels], more, stop: false, unstarted };
}

/** Records what an executor function said of its concurrency where it outlives the function's
 * executors (`executorFunctions`), when it is new or differs (a deploy changed it): a later
 * executor of the function is handed no more than that before its own first report. */
async function rememberConcurrency(ctx: MutationCtx, fnHandle: string, concurrency: number) {
  const said = await concurrencyRow(ctx, fnHandle);
  if (said === null) await ctx.db.insert("executorFunctions", { fnHandle, concurrency });
  else if (said.concurrency !== concurrency) {
    await ctx.db.patch("executorFunctions", said._id, { concurrency });
  }
}

/** Whether a handed task's key holds it back: the key is paused (`pause({ key })`), or its limit
 * (its own, else the pool's `keyParallelism`) is below the one the hand-over recorded. Each key's
 * settings are read once per report. */
function keyHoldsBack(
  ctx: MutationCtx,
  poolKeyParallelism: number,
): (handed: TaskHandover) => Promise<boolean> {
  const known = new Map<string, { paused: boolean; parallelism: number }>();
  return async ({ key, keyParallelism }) => {
    if (key === undefined) return false;
    let settings = known.get(key);
    if (settings === undefined) {
      const row = await ctx.db
        .query("keySettings")
        .withIndex("by_key", (q) => q.eq("key", key))
        .first();
      settings = {
        paused: row?.paused === true,
        parallelism: row?.parallelism ?? poolKeyParallelism,
      };
      known.set(key, settings);
    }
    return (
      settings.paused || (keyParallelism !== undefined && settings.parallelism < keyParallelism)
    );
  };
}

/** What the loop schedules in place of an executor whose function cannot be scheduled (a deploy
 * removed it): it fails at once, saying why, so that recovery takes the tasks back and counts the
 * failure as for an executor that failed before its first report (mainLoop/recovery.ts). */
export const unschedulable = internalAction({
  args: { executorId: v.string(), error: v.string() },
  returns: v.null(),
  handler: async (_ctx, { error }): Promise<null> => {
    throw new Error(`workpool: the executor could not be scheduled: ${error}`);
  },
});

/** The check the loop schedules when it starts an executor, for when its action is over for
 * certain (EXECUTOR_ROW_CHECK_AFTER_MS): a row still there with nothing assigned is deleted (its
 * last report failed as it died, or never came). One with tasks assigned is the loop's: recovery
 * settles them, and the loop deletes the row then, its action being over. */
export const dropIfOver = internalMutation({
  args: { executorId: v.id("executors") },
  returns: v.null(),
  handler: async (ctx, { executorId }) => {
    const row = await ctx.db.get("executors", executorId);
    if (row === null || row.assigned > 0) return null;
    if (row.scheduledId !== undefined) {
      const run = await ctx.db.system.get(row.scheduledId);
      if (run !== null && (run.state.kind === "pending" || run.state.kind === "inProgress")) {
        // Not over yet (only a late start can do that): looked at again as long again later.
        await ctx.scheduler.runAfter(
          EXECUTOR_ROW_CHECK_AFTER_MS,
          internal.runners.executor.dropIfOver,
          {
            executorId,
          },
        );
        return null;
      }
    }
    await deleteExecutorRow(ctx, executorId);
    return null;
  },
});
