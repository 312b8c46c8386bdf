/**
 * Loop stage: recovery of jobs whose runner died. A job marked running whose scheduled worker has
 * failed, been canceled or vanished (per the `_scheduled_functions` system table), and whose result
 * is not waiting in `pendingCompletion`, never reports: recovery counts its attempt as failed and
 * lets the retry rules decide — for an action, only once the action its runner started (its own
 * execution, which the runner's death does not stop) cannot still run. A worker that succeeded but whose report never arrived (its
 * scheduled report mutation failed for good) ends the job as failed without a rerun: the action
 * ran, so running it again could do its work twice. Never touches a job whose worker is still
 * pending or running, nor a job waiting for its completion after its function returned (its
 * runner ended by design; its timeout ends the wait). Walks all running jobs with a cursor, a page per pass, so a dead runner is
 * found whatever the number of live ones in front of it, from a floor below which no job runs (so
 * a cycle does not walk the index entries of every job that ever ran).
 */
import { capErrorMessage } from "../model/errors.js";
import type { Doc } from "../_generated/dataModel.js";
import {
  leftHandovers,
  closeExecutor,
  takeBack,
  untakenIn,
  type LeftHandovers,
  type Untaken,
} from "./executors.js";
import { endAttempt, finishJob, placeInLine, settleAttempt, undoStart } from "./complete.js";
import { dropKept } from "./awaiting.js";
import { passReadSpent, type Pass } from "./pass.js";
import { budgetSpent } from "./passBudget.js";
import { runNumber } from "../model/validators.js";

/** How often a recovery cycle starts. A dead runner is found within this plus
 * RECOVERY_THRESHOLD_MS (plus a page per 100 running jobs); 30 s keeps the checks cheap. */
export const RECOVERY_INTERVAL_MS = 30_000;
/** Jobs started less than this long ago are not checked yet: their worker has barely begun. */
export const RECOVERY_THRESHOLD_MS = 5_000;
/** Running jobs checked per pass while a cycle is under way (a system read and an index read each). */
export const RECOVERY_BATCH = 100;
/** How long after its worker succeeded a job may wait for the worker's report before the report
 * is taken as lost. Scheduled mutations normally run within milliseconds; a minute covers a
 * backed-up scheduler, and only a report that failed for good ever reaches it. */
export const REPORT_LOST_AFTER_MS = 60_000;
/** How long Convex lets an action run: an action job's own `ctx.runAction` in an action runner
 * or a worker is its own execution, which the runner's death does not stop, so it may run this
 * long. */
export const ACTION_LIMIT_MS = 10 * 60_000;
/** Added to ACTION_LIMIT_MS before a dead runner's jobs are rerun: the scheduler's and the
 * servers' clocks, and the child action's start after the runner's end was recorded. */
export const CHILD_ACTION_MARGIN_MS = 60_000;
/** Take-backs from executors that failed (not ones that ended normally) that a task gets free,
 * no attempt used: an executor killed by a deploy or out of memory gives its untaken tasks back
 * whole. Past this, each further failed executor counts as an attempt (with the retry policy's
 * backoff), so a task whose executor fails every time (its function removed, or crashing at
 * start) ends in bounded time, with an error naming the executor (API-EXTENSIONS section 8). */
export const TAKE_BACKS_FREE = 3;

/** The scheduled name of the stand-in for an executor that could not be scheduled. */
const UNSCHEDULABLE_NAME = /runners\/executor(\.js)?:unschedulable$/;
/** The scheduled names of the runners that start a job's action as its own execution
 * (`ctx.runAction`): an action runner (runners/actionRunner.ts) and a lone action's worker
 * (runners/worker.ts `runAction`). Their death does not stop the actions they started. */
const ACTION_STARTER_NAME = /(actionRunner(\.js)?:run|worker(\.js)?:runAction)$/;

/** Kept below the oldest running job's start when it becomes the next cycle's floor: the loop's
 * clock may step back a little between passes on different servers. */
export const RECOVERY_FLOOR_MARGIN_MS = 1_000;

export function recoveryDue(pass: Pass): boolean {
  if (pass.state.running === 0) return false;
  return (
    pass.state.recoveryCursor !== undefined ||
    pass.now - pass.state.lastRecoveryAt >= RECOVERY_INTERVAL_MS
  );
}

/** The time the loop should wake for recovery, if any job runs. */
export function nextRecoveryAt(pass: Pass): number | undefined {
  if (pass.state.running === 0) return undefined;
  if (pass.state.recoveryCursor !== undefined) return pass.now;
  return pass.state.lastRecoveryAt + RECOVERY_INTERVAL_MS;
}

/** What recovery concludes about one running job. */
type Verdict =
  | { kind: "alive" }
  | { kind: "dead"; why: string }
  | { kind: "reportLost" }
  // A task whose executor is over and never took it: back to pending, no attempt used unless
  // the executor failed (`failed`: why, and which) and the task's free take-backs are spent.
  | { kind: "untaken"; handover: Untaken; failed?: { executor: string; why: string } };

/** A runner's pending completion rows that recovery read in this pass: the attempts they hold
 * (`${workId}:${attempt}`), and whether the runner had more rows than were read. */
type RunnerRows = { attempts: Set<string>; partial: boolean };

/** What one recovery pass read of runners' rows, by runner (executor id or action runner token),
 * each read once: their report rows, and a dead executor's hand-overs. Once the pass has read PASS_READ_BYTES, a job
 * whose runner's rows were not read yet is judged alive, and again in the next cycle. */
type RunnerReads = { filed: Map<string, RunnerRows>; left: Map<string, LeftHandovers> };

/** Completion rows of one runner recovery reads at most. A runner files a row or two per report
 * and the loop drains them every pass; more wait only while the loop is behind, and then the
 * attempt is judged alive and looked at again in the next cycle. */
export const RUNNER_ROWS_READ = 20;

/** Whether the outcome of the job's current attempt waits in `pendingCompletion`: as a row's
 * first (by workId), or in a row its runner filed with more (by runner, read once per pass). */
async function reportWaits(pass: Pass, work: Doc<"work">, reads: RunnerReads): Promise<boolean> {
  const run = runNumber(work);
  const own = await pass.ctx.db
    .query("pendingCompletion")
    .withIndex("by_workId", (q) => q.eq("workId", work._id).eq("attempt", run))
    .first();
  if (own !== null) return true;
  const runner =
    work.state.kind === "running" ? (work.state.executorId ?? work.state.runner) : undefined;
  if (runner === undefined) return false;
  let filed = reads.filed.get(runner);
  if (filed === undefined) {
    if (await passReadSpent(pass)) return true;
    const rows = await pass.ctx.db
      .query("pendingCompletion")
      .withIndex("by_runner", (q) => q.eq("runner", runner))
      .take(RUNNER_ROWS_READ);
    const attempts = new Set(
      rows.flatMap((row) => (row.more ?? []).map((o) => `${o.workId}:${o.attempt}`)),
    );
    filed = { attempts, partial: rows.length === RUNNER_ROWS_READ };
    reads.filed.set(runner, filed);
  }
  return filed.partial || filed.attempts.has(`${work._id}:${run}`);
}

async function judge(pass: Pass, work: Doc<"work">, reads: RunnerReads): Promise<Verdict> {
  const { ctx } = pass;
  if (work.state.kind !== "running") return { kind: "alive" };
  // Waiting for its completion: its runner legitimately ended; its timeout ends the wait.
  if (work.state.wait?.kind === "awaiting") return { kind: "alive" };
  if (work.state.startedAt > pass.now - RECOVERY_THRESHOLD_MS) return { kind: "alive" };
  const job = await ctx.db.system.get(work.state.scheduledId);
  if (job !== null && (job.state.kind === "pending" || job.state.kind === "inProgress")) {
    return { kind: "alive" };
  }
  // The result is waiting for the loop (perhaps in a later segment): the runner did its job.
  if (await reportWaits(pass, work, reads)) return { kind: "alive" };
  if (work.task !== undefined && work.state.executorId !== undefined) {
    const executorId = work.state.executorId;
    let left = reads.left.get(executorId);
    if (left === undefined) {
      if (await passReadSpent(pass)) return { kind: "alive" };
      left = await leftHandovers(pass, executorId);
      reads.left.set(executorId, left);
    }
    const handover = untakenIn(left, work._id);
    // Among more rows than were read: judged again in the next cycle, as rows are taken back.
    if (handover === "unknown") return { kind: "alive" };
    if (job === null || job.state.kind !== "success") {
      const why =
        job === null
          ? "its action vanished"
          : job.state.kind === "failed"
            ? `its action failed: ${job.state.error}`
            : "its action was canceled";
      if (handover !== null) {
        const executor =
          job === null
            ? "of unknown name"
            : UNSCHEDULABLE_NAME.test(job.name)
              ? `${work.fnHandle} (it could not be scheduled: ${String(job.args[0]?.error)})`
              : job.name;
        return { kind: "untaken", handover, failed: { executor, why } };
      }
      return { kind: "dead", why: capErrorMessage(why) };
    }
    if (handover !== null) return { kind: "untaken", handover };
  }
  if (
    (job === null || job.state.kind !== "success") &&
    (job === null || ACTION_STARTER_NAME.test(job.name)) &&
    work.fnType === "action" &&
    pass.now < childActionsOverAt(work, job)
  ) {
    // An action runner or a lone worker that died while the actions it started may still run
    // (each is its own execution): the attempt is not ended, nor its slot freed, until they
    // cannot (review 2026-11-27 M1: a lone worker's retry ran beside its first run).
    return { kind: "alive" };
  }
  if (job === null) return { kind: "dead", why: "its scheduled function vanished" };
  switch (job.state.kind) {
    case "failed":
      return { kind: "dead", why: capErrorMessage(`it failed: ${job.state.error}`) };
    case "canceled":
      return { kind: "dead", why: "it was canceled" };
    case "success": {
      const finishedAt = job.completedTime ?? job.scheduledTime;
      return pass.now - finishedAt >= REPORT_LOST_AFTER_MS
        ? { kind: "reportLost" }
        : { kind: "alive" };
    }
    default:
      return { kind: "alive" }; // pending and inProgress were handled above
  }
}

/** When the actions a dead action runner (or lone worker) started are over for certain: each
 * started before the runner ended (its completion time; its start when the scheduler keeps none), and Convex ends an
 * action ACTION_LIMIT_MS after its start. */
function childActionsOverAt(
  work: Doc<"work">,
  job: { completedTime?: number; scheduledTime: number } | null,
): number {
  const startedAt = work.state.kind === "running" ? work.state.startedAt : 0;
  const runnerEnd = Math.max(startedAt, job?.completedTime ?? 0);
  return runnerEnd + ACTION_LIMIT_MS + CHILD_ACTION_MARGIN_MS;
}

/** A task's executor is over once one of its tasks is found dead or untaken: it is handed no more. */
async function closeIfTask(pass: Pass, work: Doc<"work">): Promise<void> {
  if (work.state.kind === "running" && work.state.executorId !== undefined) {
    await closeExecutor(pass, work.state.executorId);
  }
}

export async function recover(pass: Pass): Promise<void> {
  const { ctx, state } = pass;
  // The page read is a hundred rows in one range: asked before it (and per job after).
  if (await budgetSpent(pass, "recovery", { documentsRead: RECOVERY_BATCH })) return;
  const starting = state.recoveryCursor === undefined;
  // The floor stays the same for a whole cycle, so that its page cursor stays valid.
  const page = await ctx.db
    .query("work")
    .withIndex("by_state", (q) =>
      q.eq("state.kind", "running").gte("listAt", state.recoveryFloor ?? 0),
    )
    .paginate({ numItems: RECOVERY_BATCH, cursor: state.recoveryCursor ?? null });
  if (starting) {
    const oldest = page.page[0]?.state;
    const oldestStart = oldest?.kind === "running" ? oldest.startedAt : pass.now;
    state.nextRecoveryFloor = oldestStart - RECOVERY_FLOOR_MARGIN_MS;
  }
  const reads: RunnerReads = { filed: new Map(), left: new Map() };
  // False when the budget stopped the page: the same page is read again by the next pass (the
  // jobs settled here have left it; those judged alive are judged again).
  let pageDone = true;
  for (const work of page.page) {
    // Each job costs a system read and a few index reads, and a dead one a settlement (a
    // deliverer, a retry's row): asked per job, as a page of dead runners' jobs is all costly.
    if (await budgetSpent(pass, "recovery", { functionsScheduled: 1 })) {
      pageDone = false;
      break;
    }
    const verdict = await judge(pass, work, reads);
    switch (verdict.kind) {
      case "alive":
        break;
      case "dead":
        await closeIfTask(pass, work);
        await dropKept(pass, work);
        await endAttempt(pass, work);
        state.stats.recovered++;
        pass.log.warn("recovered", { workId: work._id, fnName: work.fnName, why: verdict.why });
        await settleAttempt(pass, work, {
          kind: "failed",
          error: capErrorMessage(
            `workpool: ${work.task !== undefined ? "executor" : "runner"} died (${verdict.why})`,
          ),
        });
        break;
      case "untaken": {
        await closeIfTask(pass, work);
        await takeBack(pass, verdict.handover);
        await endAttempt(pass, work);
        const fnArgs = verdict.handover.task.fnArgs;
        // Back at its place in line, its hand-over's rate-limit start and `started` undone.
        const dueAt = placeInLine(work, { runAt: verdict.handover.task.runAt });
        if (verdict.failed === undefined) {
          pass.log.warn("taskTakenBack", { workId: work._id, fnName: work.fnName });
          await undoStart(pass, work);
          await settleAttempt(
            pass,
            work,
            { kind: "snoozed", delayMs: 0, fnArgs },
            undefined,
            dueAt,
          );
          break;
        }
        const failedTakeBacks = (work.failedTakeBacks ?? 0) + 1;
        await pass.ctx.db.patch("work", work._id, { failedTakeBacks });
        pass.log.warn("taskTakenBack", {
          workId: work._id,
          fnName: work.fnName,
          failedTakeBacks,
          ...verdict.failed,
        });
        if (failedTakeBacks <= TAKE_BACKS_FREE) await undoStart(pass, work);
        await settleAttempt(
          pass,
          { ...work, failedTakeBacks },
          failedTakeBacks <= TAKE_BACKS_FREE
            ? { kind: "snoozed", delayMs: 0, fnArgs }
            : {
                kind: "failed",
                error: capErrorMessage(
                  `workpool: executor ${verdict.failed.executor} failed before it started the task, ${failedTakeBacks} times (the last: ${verdict.failed.why})`,
                ),
                fnArgs,
              },
          undefined,
          dueAt,
        );
        break;
      }
      case "reportLost": {
        await dropKept(pass, work);
        await endAttempt(pass, work);
        state.stats.recovered++;
        const error = `workpool: attempt ${work.attempts + 1} finished but its result never reached the pool; not rerun, since it ran`;
        pass.log.error("reportLost", { workId: work._id, fnName: work.fnName });
        await finishJob(pass, { ...work, attempts: work.attempts + 1 }, { kind: "failed", error });
        break;
      }
      default:
        verdict satisfies never;
    }
  }
  if (!pageDone) return;
  if (page.isDone) {
    state.recoveryCursor = undefined;
    state.lastRecoveryAt = pass.now;
    state.recoveryFloor = state.nextRecoveryFloor;
  } else {
    state.recoveryCursor = page.continueCursor;
  }
}
