/**
 * Completion: recording an attempt's outcome (workers through `recordCompletion`, runners' and
 * executors' reports of many through `recordCompletions`), and the loop's
 * handling of it — retry after a jittered backoff, or finish the job and hand its onComplete to
 * delivery (deliver.ts). A task an executor gave back unstarted (`givenBack`) has its start undone
 * (the rate limit's start refunded, `started` uncounted) and goes back to its place in line. Only
 * the loop (`processCompletions`, `finishJob`) changes a job's state here; no user code runs here.
 */
import { v } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { needsDelivery, type DeliveryItem } from "../runners/deliver.js";
import { releaseTask } from "./executors.js";
import { settleWaiting } from "./awaiting.js";
import { countInGroup, finishInGroup } from "./groups.js";
import { keyEntry, updateKey } from "./keyState.js";
import { claimSegment } from "../api/kick.js";
import {
  assertNever,
  keptForRetry,
  runNumber,
  vAttemptResult,
  type AttemptResult,
  type FiledOutcome,
  type RunResult,
} from "../model/validators.js";
import {
  advanceCursor,
  splitsItsStage,
  startCursorOf,
  tableFrom,
  takeWithinBudget,
  type Pass,
} from "./pass.js";
import { budgetUnits } from "./passBudget.js";
import { refundStart } from "./rateLimit.js";
import { capErrorMessage } from "../model/errors.js";
import { withErrorData } from "../model/outcomes.js";
import { fitsInline, measureValue, valueSizeBytes } from "../model/valueMeasure.js";
import { decideCompletion } from "../model/retry.js";
import { dueSegment, segmentForRunAt } from "../model/segments.js";
import { releaseBufferedRun } from "./scheduleRelease.js";
import { countEvent, recordFinish, uncountStart } from "./stats.js";

/** Completions one pass processes: each costs a few reads and writes plus the onComplete handler's
 * own, so 50 keeps a pass well inside Convex's transaction limits. */
export const COMPLETION_BATCH = 50;

/** Outcomes one `pendingCompletion` row holds at most (a report of more files more rows): the
 * loop settles a row whole, so this is also the most a pass may settle past COMPLETION_BATCH. */
export const COMPLETION_ROW_OUTCOMES = 50;
/** Bytes of outcomes one row holds at most: each is capped (an error at 8 KiB, an inline value at
 * 8 KiB); 64 KiB keeps what recovery may read of one runner's rows (RUNNER_ROWS_READ of them)
 * near a megabyte. */
export const COMPLETION_ROW_BYTES = 64 * 1024;

/** What settling one outcome may cost at most, for sizing a batch to the pass's budget
 * (passBudget.ts): a deliverer (or its share of a row's), four documents read in four ranges (its
 * job, its key's state and settings, its executor), four writes (its job, a retry's row, its
 * key, its payload), and its job's row read and rewritten whole (about 40 KiB at most). */
const OUTCOME_COST = {
  functionsScheduled: 1,
  databaseQueries: 4,
  documentsRead: 4,
  documentsWritten: 4,
  bytesRead: 48 * 1024,
  bytesWritten: 48 * 1024,
} as const;

/** An attempt's outcome as a runner reports it. */
export type ReportedOutcome = {
  workId: Id<"work">;
  attempt: number;
  result: AttemptResult;
  /** A task its executor's report gave back untaken (see `vFiledOutcome`). */
  givenBack?: FiledOutcome["givenBack"];
  /** A completion or a timeout of a `manualCompletion` attempt (see `vFiledOutcome`). */
  from?: FiledOutcome["from"];
};

/** The outcome as it is filed: an error cut to its cap, a return value that does not fit inline
 * (too large, or too deep for the rows that embed it: valueMeasure.ts) moved to a payload. */
async function fileOutcome(
  ctx: MutationCtx,
  { workId, attempt, result, givenBack, from }: ReportedOutcome,
): Promise<FiledOutcome> {
  const source = from === undefined ? {} : { from };
  // Workers cut messages and check errorData already; a report from elsewhere (an older worker,
  // an executor of another version) is checked here.
  if (result.kind === "failed") {
    const { error, errorData, ...rest } = result;
    result = { ...rest, ...withErrorData(capErrorMessage(error), errorData) };
  }
  if (result.kind === "success" && !fitsInline("returnValue", measureValue(result.returnValue))) {
    const payloadId = await ctx.db.insert("payloads", { returnValue: result.returnValue });
    return {
      workId,
      attempt,
      result: { kind: "success", returnValue: null },
      returnValuePayloadId: payloadId,
      ...source,
    };
  }
  return { workId, attempt, result, ...(givenBack === undefined ? {} : { givenBack }), ...source };
}

/** Records an attempt's outcome for the loop (in the caller's transaction), waking it if asleep.
 * `claimed`: the segment a report of many already claimed. */
export async function recordCompletion(
  ctx: MutationCtx,
  outcome: ReportedOutcome,
  claimed?: number,
): Promise<void> {
  const segment = claimed ?? (await claimSegment(ctx));
  await ctx.db.insert("pendingCompletion", { ...(await fileOutcome(ctx, outcome)), segment });
}

/**
 * Records the outcomes of one runner's report, claiming a segment once: a row per outcome, or,
 * given the `runner` its jobs' running state names (an executor's id), up to
 * COMPLETION_ROW_OUTCOMES per row, so that a report of many costs the loop a few rows to read
 * and delete instead of one per outcome.
 */
export async function recordCompletions(
  ctx: MutationCtx,
  outcomes: ReportedOutcome[],
  runner?: string,
): Promise<void> {
  if (outcomes.length === 0) return;
  const segment = await claimSegment(ctx);
  if (runner === undefined) {
    for (const outcome of outcomes) await recordCompletion(ctx, outcome, segment);
    return;
  }
  let row: FiledOutcome[] = [];
  let bytes = 0;
  const insertRow = async () => {
    const [first, ...more] = row;
    await ctx.db.insert("pendingCompletion", {
      ...first,
      segment,
      ...(more.length > 0 ? { more, runner } : {}),
    });
    row = [];
    bytes = 0;
  };
  for (const outcome of outcomes) {
    const filed = await fileOutcome(ctx, outcome);
    const size = valueSizeBytes(filed);
    const full = row.length >= COMPLETION_ROW_OUTCOMES || bytes + size > COMPLETION_ROW_BYTES;
    if (row.length > 0 && full) await insertRow();
    row.push(filed);
    bytes += size;
  }
  await insertRow();
}

/** Called by the action worker with the outcome of its attempt. */
export const complete = internalMutation({
  args: { workId: v.id("work"), attempt: v.number(), result: vAttemptResult },
  returns: v.null(),
  handler: async (ctx, args) => {
    await recordCompletion(ctx, args);
    return null;
  },
});

/** The outcomes a `pendingCompletion` row holds: its own, then its `more`. */
function outcomesOf(row: Doc<"pendingCompletion">): FiledOutcome[] {
  const { workId, attempt, result, returnValuePayloadId, givenBack, from } = row;
  return [{ workId, attempt, result, returnValuePayloadId, givenBack, from }, ...(row.more ?? [])];
}

/** Loop stage: processes due completions, up to COMPLETION_BATCH outcomes (a row is taken whole).
 * Returns true when it stopped at its batch (more may wait). */
export async function processCompletions(pass: Pass): Promise<boolean> {
  const { ctx } = pass;
  // A narrow pass whose failed stage was this one settles one outcome (watchdog.ts).
  if (pass.narrow && splitsItsStage(pass.narrow)) {
    return await processFirstOutcome(pass, pass.narrow.setAside);
  }
  // The batch is sized to the pass's budget, asked once per batch (a first row of a report may
  // still hold more outcomes than that: COMPLETION_ROW_OUTCOMES, which the budget's reserve holds).
  const fit = Math.min(COMPLETION_BATCH, await budgetUnits(pass, "completions", OUTCOME_COST));
  if (fit <= 0) return true;
  const { rows, full } = await takeWithinBudget(
    ctx.db
      .query("pendingCompletion")
      .withIndex("by_segment", (q) =>
        q.gte("segment", tableFrom(pass, "completion")).lte("segment", pass.segment),
      ),
    fit,
    undefined,
    (row) => 1 + (row.more?.length ?? 0),
  );
  advanceCursor(pass, "completion", full ? rows[rows.length - 1].segment : pass.segment);
  for (const row of rows) {
    await ctx.db.delete("pendingCompletion", row._id);
    for (const outcome of outcomesOf(row)) await processOutcome(pass, outcome);
  }
  return full;
}

/**
 * The backstop's narrow pass (watchdog.ts `restartPass`): settles only the first due outcome (the
 * rest of its row stays for the next pass), or, given `setAside` (the passes failed twice on this
 * same first outcome), finishes its job as failed with that reason instead, writing none of the
 * outcome's values. Returns true when more outcomes are due.
 */
async function processFirstOutcome(pass: Pass, setAside: string | undefined): Promise<boolean> {
  const { ctx } = pass;
  const firstDue = async () =>
    await ctx.db
      .query("pendingCompletion")
      .withIndex("by_segment", (q) =>
        q.gte("segment", tableFrom(pass, "completion")).lte("segment", pass.segment),
      )
      .first();
  const row = await firstDue();
  if (row === null) return false;
  const [first, ...rest] = outcomesOf(row);
  if (rest.length === 0) await ctx.db.delete("pendingCompletion", row._id);
  else {
    const [next, ...more] = rest;
    await ctx.db.patch("pendingCompletion", row._id, {
      ...next,
      returnValuePayloadId: next.returnValuePayloadId,
      givenBack: next.givenBack,
      from: next.from,
      more: more.length > 0 ? more : undefined,
      runner: more.length > 0 ? row.runner : undefined,
    });
  }
  if (setAside === undefined) await processOutcome(pass, first);
  else await setAsideOutcome(pass, first, setAside);
  return rest.length > 0 || (await firstDue()) !== null;
}

/** Finishes the job of an outcome the loop's passes failed on twice: failed, with the reason, not
 * retried (a retry would meet the same). A stale outcome is dropped as ever. */
async function setAsideOutcome(pass: Pass, outcome: FiledOutcome, reason: string): Promise<void> {
  const { ctx } = pass;
  if (outcome.returnValuePayloadId) await ctx.db.delete("payloads", outcome.returnValuePayloadId);
  const work = await ctx.db.get("work", outcome.workId);
  if (work === null || work.state.kind !== "running" || outcome.attempt !== runNumber(work)) {
    pass.state.stats.staleCompletions++;
    return;
  }
  const error = capErrorMessage(
    `workpool: set aside: the loop failed twice on this job's outcome (${outcome.result.kind}): ${reason}`,
  );
  pass.log.error("setAside", { workId: work._id, fnName: work.fnName, error });
  await endAttempt(pass, work);
  await finishJob(pass, { ...work, attempts: work.attempts + 1 }, { kind: "failed", error });
}

/** Settles one reported outcome, unless it is stale. */
async function processOutcome(pass: Pass, outcome: FiledOutcome): Promise<void> {
  const { ctx } = pass;
  const work = await ctx.db.get("work", outcome.workId);
  if (work === null || work.state.kind !== "running" || outcome.attempt !== runNumber(work)) {
    // A duplicate or late report (e.g. for an attempt recovery already gave up on): ignore it.
    pass.state.stats.staleCompletions++;
    pass.log.warn("staleCompletion", {
      workId: outcome.workId,
      attempt: outcome.attempt,
      state: work?.state.kind ?? "missing",
    });
    if (outcome.returnValuePayloadId) await ctx.db.delete("payloads", outcome.returnValuePayloadId);
    return;
  }
  // A job that waits for its completion ends its attempt when both sides have come (awaiting.ts).
  if (work.manualCompletion !== undefined) return await settleWaiting(pass, work, outcome);
  await endAttempt(pass, work);
  if (outcome.givenBack === undefined) {
    await settleAttempt(pass, work, outcome.result, outcome.returnValuePayloadId);
    return;
  }
  await undoStart(pass, work);
  await settleAttempt(pass, work, outcome.result, undefined, placeInLine(work, outcome.givenBack));
}

/** When a task handed over but never started was due: `runAt` as its hand-over recorded it, or
 * (a row from before that was kept) the time it was handed over. */
export function placeInLine(work: Doc<"work">, givenBack: { runAt?: number }): number | undefined {
  return givenBack.runAt ?? (work.state.kind === "running" ? work.state.startedAt : undefined);
}

/**
 * Undoes the start of a task that never started (its executor gave it back untaken, recovery took
 * it back from an executor that ended, or it was canceled before it started): the rate limit's
 * start is refunded, so its next hand-over is not charged again (chaos program 643), and it is no
 * longer counted `started` (review 2026-11-27 L1). Call with the job still in its running state.
 */
export async function undoStart(pass: Pass, work: Doc<"work">): Promise<void> {
  if (work.state.kind !== "running") return;
  refundStart(pass, work.state.startedAt);
  await uncountStart(pass, work.state.startedAt);
  // Paired with the pass's "started" line for the job (the model test's oracle drops that one).
  pass.log.debug("startUndone", { workId: work._id, startedAt: work.state.startedAt });
}

/** Counts a running job's attempt as ended (reported, or found dead): its pool slot is free. */
export async function endAttempt(pass: Pass, work: Doc<"work">): Promise<void> {
  pass.state.running--;
  if (work.state.kind === "running" && work.state.executorId !== undefined) {
    await releaseTask(pass, work.state.executorId);
  }
  if (work.key !== undefined) updateKey(await keyEntry(pass, work.key), { running: -1 });
  if (work.group !== undefined) await countInGroup(pass, work.group, "running", -1);
}

/**
 * Decides and applies the fate of a running job whose attempt ended (reported, or found dead by
 * recovery): a retry goes back to `pendingStart` at the end of its backoff; anything else finishes.
 */
export async function settleAttempt(
  pass: Pass,
  work: Doc<"work">,
  outcome: AttemptResult,
  returnValuePayloadId?: Id<"payloads">,
  /** For a task given back untaken: when it was due, so that it keeps its place in line. */
  dueAt?: number,
): Promise<void> {
  const attempt = work.attempts + 1;
  // A task canceled while it ran ends canceled, whatever its handler returned (section 8).
  const decision = decideCompletion(
    outcome,
    { ...work, attempt, cancelWins: work.task !== undefined },
    Math.random(),
  );
  switch (decision.kind) {
    case "retry": {
      const runAt = pass.now + decision.delayMs;
      await pass.ctx.db.patch("work", work._id, {
        attempts: attempt,
        state: { kind: "pending" },
        listAt: runAt,
      });
      await requeue(pass, work, runAt);
      countEvent(pass, "retried");
      pass.log.info("retry", {
        workId: work._id,
        fnName: work.fnName,
        attempt,
        delayMs: decision.delayMs,
        error: outcome.kind === "failed" ? outcome.error : undefined,
      });
      return;
    }
    case "snooze": {
      const givenBack = dueAt !== undefined && decision.delayMs === 0;
      const runAt = givenBack ? Math.min(dueAt, pass.now) : pass.now + decision.delayMs;
      const snoozes = (work.snoozes ?? 0) + 1;
      const fnArgs = outcome.kind === "snoozed" ? outcome.fnArgs : undefined;
      await pass.ctx.db.patch("work", work._id, {
        snoozes,
        state: { kind: "pending" },
        listAt: runAt,
        ...(work.payloadId === undefined ? { fnArgs } : {}),
      });
      await requeue(pass, work, runAt, givenBack);
      pass.log.info(givenBack ? "givenBack" : "snoozed", {
        workId: work._id,
        fnName: work.fnName,
        delayMs: decision.delayMs,
      });
      return;
    }
    case "finish": {
      // A snooze's report is not an attempt; a canceled snooze finishes without counting one.
      const attempts = outcome.kind === "snoozed" ? work.attempts : attempt;
      // The args the start dropped come back with the report, for `retry` to use.
      const handedBack = outcome.kind === "success" ? undefined : outcome.fnArgs;
      const fnArgs = work.fnArgs ?? (work.payloadId === undefined ? handedBack : undefined);
      await finishJob(pass, { ...work, attempts, fnArgs }, decision.result, returnValuePayloadId);
      return;
    }
    default:
      assertNever(decision, "completion decision");
  }
}

/** Puts a job whose run ended back in `pendingStart`, due at `runAt`. A keyed job keeps its key
 * slot through the wait (strict per-key order). A task given back untaken (`inLine`) goes where
 * its level's start stage reads first (its cursor's segment, where every row has a later due
 * time or is due later within it), so it keeps its place ahead of the tasks due after it rather
 * than going behind every task due: this pass writes below the segments callers append to, and
 * only the loop reads there. */
async function requeue(
  pass: Pass,
  work: Doc<"work">,
  runAt: number,
  inLine = false,
): Promise<void> {
  const cursor = pass.state.cursors?.[startCursorOf(work.priority, work.key !== undefined)] ?? 0;
  // Pending again with its old due time as `listAt`: `stats` and `list` read pending jobs from
  // the floor up (stats.ts), so the floor goes down to it (it only ever needs to be a lower bound).
  if (inLine && pass.state.pendingFloor !== undefined && runAt < pass.state.pendingFloor) {
    pass.state.pendingFloor = runAt;
  }
  await pass.ctx.db.insert("pendingStart", {
    workId: work._id,
    runAt,
    segment: inLine
      ? Math.min(Math.max(cursor, dueSegment(runAt)), pass.segment)
      : segmentForRunAt(runAt, pass.now),
    priority: work.priority,
    ...(work.key !== undefined ? { key: work.key, keyed: true as const, holdsSlot: true } : {}),
    fromLoop: true,
  });
}

/**
 * Marks a job finished with `result` and hands its onComplete to delivery (deliver.ts), which calls
 * it exactly once in a transaction of its own. A large job (args, context or return value in
 * `payloads`) also gets its cleanup there; the sweeper leaves it alone until then.
 */
export function finishedDelivery(
  work: Doc<"work">,
  result: RunResult,
  resultPayloadId: Id<"payloads"> | undefined,
): DeliveryItem {
  const large = work.payloadId !== undefined || resultPayloadId !== undefined;
  const excluded = work.onComplete?.excludeKinds?.includes(result.kind) ?? false;
  return {
    workId: work._id,
    fnHandle: excluded ? undefined : work.onComplete?.fnHandle,
    context: excluded ? undefined : work.onComplete?.context,
    result,
    payloadId: work.payloadId,
    resultPayloadId,
    cleanup: large ? true : undefined,
  };
}

export async function finishJob(
  pass: Pass,
  work: Doc<"work">,
  result: RunResult,
  resultPayloadId?: Id<"payloads">,
): Promise<void> {
  const { ctx, now } = pass;
  const delivery = finishedDelivery(work, result, resultPayloadId);
  await ctx.db.patch("work", work._id, {
    attempts: work.attempts,
    state: {
      kind: "finished",
      result,
      finishedAt: now,
      startedAt: work.state.kind === "running" ? work.state.startedAt : undefined,
    },
    listAt: now,
    resultPayloadId,
    expiresAt: work.statusTtlMs === undefined ? undefined : now + work.statusTtlMs,
    // A large job's payloads are read by its delivery: the sweeper leaves it until then.
    deliveryPending: delivery.cleanup,
    // A finished job keeps only what status and info need: dropping what no later step reads keeps
    // the retained row (and this write) small. Delivery carries the callback. A job that failed or
    // was canceled keeps its args and options while retained, so that `retry` can run it again.
    ...(keptForRetry(result)
      ? { fnArgs: work.fnArgs }
      : { fnArgs: undefined, retryBehavior: undefined, onComplete: undefined }),
  });
  const kind = result.kind === "success" ? "succeeded" : result.kind;
  recordFinish(pass, kind);
  if (work.group !== undefined) await finishInGroup(pass, work.group, kind);
  if (work.key !== undefined) {
    // A job holds its key's slot from its first start (a pending job with attempts or snoozes
    // behind it is waiting out a retry's backoff or a snooze).
    const heldSlot = work.state.kind === "running" || work.attempts > 0 || (work.snoozes ?? 0) > 0;
    updateKey(await keyEntry(pass, work.key), { [kind]: 1, active: heldSlot ? -1 : 0 });
  }
  const finished = { workId: work._id, fnName: work.fnName, result: result.kind };
  // A job that failed for good is what an operator looks for: one WARN line, with its error.
  if (result.kind === "failed") pass.log.warn("finished", { ...finished, error: result.error });
  else pass.log.info("finished", finished);
  if (needsDelivery(delivery)) pass.deliveries.push(delivery);
  // A schedule's run buffered behind this one (overlap "bufferOne") may start now.
  await releaseBufferedRun(pass, work);
}
