/**
 * A batch run: the one way an action runs many of the pool's jobs at once. Both kinds of batch
 * runner use it: the app's executors (src/client/executor.ts, tasks run inline, handed over
 * through `runners/executor:report` as slots free) and the component's action runner
 * (runners/actionRunner.ts, each job its own `ctx.runAction`, a closed batch handed over with the
 * action). Owns the run's life: it takes what the loop handed it, runs up to
 * `concurrency` jobs at once under their time limits and abort signals, reports outcomes in
 * batches (each report brings the next hand-overs and cancels), checks in while busy, and ends when
 * nothing is left. Never admits a job (the loop does), never writes the component's tables except
 * through `report`, never retries (the loop decides, from the outcome it reports). Runs in an
 * action: no database here.
 */
import { attemptFailure, attemptSuccess } from "../model/outcomes.js";
import { INLINE_VALUE_BYTES } from "../model/payloads.js";
import { fitsInline, measureValue, valueSizeBytes } from "../model/valueMeasure.js";

/** How long a run lasts: Convex ends an action at 10 minutes; the last minute is kept for its
 * final reports. It takes a job only while more than the job's time limit is left. */
export const EXECUTOR_BUDGET_MS = 9 * 60_000;
/** Outcomes wait at most this long to be reported with others: a freed pool slot is refilled
 * within about two of these (this report, and the next one, which brings the new hand-over). */
export const REPORT_INTERVAL_MS = 200;
/** A report that freed slots (it carried outcomes, or it was the first, which says how many
 * jobs the run takes at once) is followed this long after by the one that takes their refill,
 * unless another report came first: the loop hands the freed slots over within a segment or two
 * (100 ms each). So a freed slot is refilled within about half a second, and a run whose jobs all
 * finished waits that long for more before it ends (instead of ending and making the pool start
 * another). */
export const REFILL_AFTER_MS = 250;
/** While its jobs run and none finishes, a run calls the pool at most this often (for cancels and
 * new hand-overs); reports of outcomes, and their refills, come on top. */
export const CHECK_IN_INTERVAL_MS = 2_000;
/** The bound on how long after a cancel a running job's `signal` aborts (API-EXTENSIONS section
 * 8): a run calls the pool at least every CHECK_IN_INTERVAL_MS while jobs run, and the cancel
 * reaches it in the first call after the pass that hands it over, which writes into the next
 * segment (two segments, 0.2 s): 2.2 s at worst, and 0.3 s to spare for the call itself. (Report
 * calls that fail push it back by their backoff.) */
export const CANCEL_ABORT_BOUND_MS = 2_500;
/** Small (inline) results a run gathers, by its own byte count, before it reports them together:
 * far below the 8 MiB it may hold, and below what one report's arguments may carry. */
export const UNREPORTED_BYTES_LIMIT = 512 * 1024;
/** Results a run holds unreported at most, by its own byte count: gathered, or in a report not
 * yet answered (API-EXTENSIONS section 8). A large result (each is reported alone, at once) that
 * would pass it waits, its job not finished, until earlier reports are answered: a run of 20
 * jobs returning 900 KB each at the same moment holds 9 of them, not 18 MB. */
export const HELD_RESULT_BYTES_LIMIT = 8 * 1024 * 1024;
/** Bytes of args a run holds at most, by its own byte count, over the jobs it runs or holds
 * waiting: a report takes jobs only while the run is under it (at least one while it has any
 * room), so a run holds at most this plus one job's args (1 MB). With the 8 MiB of results it
 * may hold, a run stays far below the 64 MiB an action gets, whatever its concurrency (review
 * 2026-11-26 L3: 1,000 jobs of 1 MB each could be held before). */
export const HELD_ARGS_BYTES_LIMIT = 16 * 1024 * 1024;
/** The size a job's args count for in HELD_ARGS_BYTES_LIMIT, cached per job. */
const argsSizes = new WeakMap<Handed, number>();
function argsBytes(handed: Handed): number {
  let bytes = argsSizes.get(handed);
  if (bytes === undefined) {
    bytes = valueSizeBytes(handed.fnArgs);
    argsSizes.set(handed, bytes);
  }
  return bytes;
}
/** Unreported outcomes a run holds before it reports: half of what one report takes. */
export const UNREPORTED_OUTCOMES_LIMIT = 500;

/** A failed report call is tried again after this, doubled per failure in a row, at most
 * REPORT_RETRY_MAX_MS: transient errors pass within a few tries, and a run that cannot reach the
 * pool for long keeps its outcomes and jobs meanwhile. */
export const REPORT_RETRY_MS = 100;
export const REPORT_RETRY_MAX_MS = 5_000;
/** Failed calls in a row after which outcomes are sent one at a time. */
export const REPORT_ISOLATE_AFTER = 2;
/** Failed calls carrying one outcome alone after which that outcome is taken as one the pool
 * cannot record (a result it cannot store): it becomes a failure of its job. */
export const REPORT_TRIES_ALONE = 3;
/** Failed report calls in a row at its time limit after which a run gives up (its action fails,
 * and recovery settles what it held). */
export const TIME_UP_REPORT_TRIES = 5;

/** The outcome that replaces one the pool could not record: its job's attempt fails, saying why. */
function unrecordable(outcome: Outcome, error: unknown): Outcome {
  const why = error instanceof Error ? error.message : String(error);
  return {
    workId: outcome.workId,
    attempt: outcome.attempt,
    result: {
      kind: "failed",
      error: `workpool: the outcome could not be recorded (${why.slice(0, 1_000)})`,
      ...("fnArgs" in outcome.result ? { fnArgs: outcome.result.fnArgs } : {}),
    },
  };
}

/** Reports a run sends at most at its time limit, each giving back what it reads (up to 20 rows):
 * more than the pool hands a run in its last minutes; any left are taken back by recovery. */
export const TIME_UP_REPORTS = 5;

/** The error that ends the attempt of a job canceled before it started (the pool ends the job
 * canceled). */
export const CANCELED_BEFORE_START = "workpool: the job was canceled before it started";

/** A job the loop handed over, as `report` returns it. */
export type Handed = {
  workId: string;
  attempt: number;
  previousAttempts: number;
  task: string;
  fnArgs: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- any job's args
};

/** One outcome for the pool, as the component's `report` takes it. */
export type Outcome = {
  workId: string;
  attempt: number;
  result:
    | { kind: "success"; returnValue: unknown }
    | { kind: "failed"; error: string; nonRetryable?: boolean; fnArgs?: unknown }
    | { kind: "snoozed"; delayMs: number; fnArgs?: unknown };
};

/** What one call of `report` sends (the runner adds its id). */
export type ReportRequest = {
  concurrency?: number;
  /** Jobs the run can start now (a run that takes jobs says so): the report takes no more, so
   * every job it takes starts at once, and one it never took stays with the pool. */
  room?: number;
  /** Bytes of args the run may still take: the report stops taking once past it (always taking
   * at least one job if it takes any). */
  argsRoom?: number;
  outcomes: Outcome[];
  ending?: boolean;
  /** The report's sequence number (a retry of an unanswered call sends it again). */
  seq?: number;
};
/** What `report` answers. */
export type ReportAnswer = { tasks: Handed[]; cancels: string[]; more: boolean; stop: boolean };

/** What a batch runner tells the run about its jobs. */
export type BatchRunner = {
  /** Jobs run at once. */
  concurrency: number;
  /** A closed batch: these jobs, handed over with the action itself. The run takes nothing more
   * (no first report, no refills, no check-ins) and ends once their outcomes are reported. */
  batch?: Handed[];
  /** What a job is called in messages: "task" or "action". */
  noun: string;
  /** Calls the component's `report`. */
  report(request: ReportRequest): Promise<ReportAnswer>;
  /** How long the run lasts (an executor: EXECUTOR_BUDGET_MS). Without one (the action runner)
   * no clock ends the run: it ends when its jobs have settled and been reported. */
  budgetMs?: number;
  /** A job's time limit; it is taken only while more than that is left of the run. Without one
   * (the action runner) no timer decides a job's outcome: it ends when its action settles. */
  timeoutOf?(handed: Handed): number;
  /** Why the job cannot run at all (unknown task, bad args): it fails, not to be retried. */
  refuse(handed: Handed): string | undefined;
  /** Runs the job; `signal` aborts on cancel and at the time limit. */
  execute(handed: Handed, signal: AbortSignal): Promise<unknown>;
};

/** The args an outcome hands back to the pool: inline ones (the job's row dropped them at its
 * start and a retry needs them); ones that do not fit inline (too large or too deep, as enqueue
 * judged them: valueMeasure.ts) stay in their payload row, so they are not sent. */
function handBack(handed: Handed): unknown {
  return fitsInline("args", measureValue(handed.fnArgs)) ? handed.fnArgs : undefined;
}

/** What a report call came to: `failed` when it did not reach the pool (nothing was lost). */
type Called = { more: boolean; stop: boolean; failed: boolean };

/** One job in flight. */
type Running = { handed: Handed; abort: AbortController; canceled: boolean };

/** One batch runner action's life (see the file comment). */
export class BatchRun {
  private readonly startedAt = Date.now();
  private readonly waiting: Handed[] = [];
  private readonly running = new Map<string, Running>();
  private outcomes: Outcome[] = [];
  /** Bytes of the small results in `outcomes`. */
  private unreportedBytes = 0;
  /** Bytes of every result not yet reported: in `outcomes`, or in a report not yet answered. */
  private heldBytes = 0;
  /** The most `heldBytes` reached (for the spec of the limit). */
  peakHeldBytes = 0;
  /** Called when a report is answered (a result waiting for room may go on). */
  private reported: Array<() => void> = [];
  private lastCall = 0;
  /** When the refill of the slots the last report freed is due (see REFILL_AFTER_MS). */
  private refillAt: number | undefined;
  private firstReport = true;
  private wake: (() => void) | undefined;
  /** The report call under way, if any (calls go one at a time). */
  private calling: Promise<void> = Promise.resolve();
  /** The number of the next report (the pool keeps what a report took for a retry of it). */
  private seq = 1;
  /** Report calls failed in a row, and single-outcome ones among them. */
  private failedCalls = 0;
  private failedAlone = 0;
  /** When the next call may go, after a failed one. */
  private retryAt: number | undefined;
  /** Set at the run's time limit: it takes nothing more. */
  private timeUp = false;
  /** A report that failed while a job finished: the run ends with it (the pool recovers). */
  private failure: unknown;

  constructor(private readonly runner: BatchRunner) {}

  /** Time left of the run's budget (Infinity without one). */
  private timeLeft(): number {
    const { budgetMs } = this.runner;
    return budgetMs === undefined ? Infinity : this.startedAt + budgetMs - Date.now();
  }

  /** Calls the pool: hands over the outcomes so far, takes new jobs and cancels. A call that
   * fails ends nothing: its outcomes are kept and sent again after a backoff, with the same
   * sequence number, so that the pool answers a retry of a call that did commit with the jobs
   * that call took (runners/executor.ts). Outcomes that keep failing are sent one at a time, and
   * one that fails alone REPORT_TRIES_ALONE times becomes a failure of its own job, saying why
   * (a result the pool cannot store fails only its own job). */
  private async report(ending = false): Promise<Called> {
    // One call at a time: a sequence number stands for one call and its retries.
    const previous = this.calling;
    let done = () => {};
    this.calling = new Promise<void>((resolve) => (done = resolve));
    try {
      await previous;
      return await this.call(ending);
    } finally {
      done();
    }
  }

  private async call(ending: boolean): Promise<Called> {
    // After failed calls, one outcome at a time: one that cannot be recorded is found alone.
    const isolate = this.failedCalls >= REPORT_ISOLATE_AFTER && this.outcomes.length > 1;
    const outcomes = isolate ? this.outcomes.slice(0, 1) : this.outcomes;
    const bytes = outcomes.reduce((sum, outcome) => sum + valueSizeBytes(outcome.result), 0);
    this.outcomes = isolate ? this.outcomes.slice(1) : [];
    this.recount();
    this.lastCall = Date.now();
    // A report that frees slots (or says how many there are) is followed by one for their refill.
    this.refillAt =
      outcomes.length > 0 || this.firstReport ? this.lastCall + REFILL_AFTER_MS : undefined;
    const { concurrency, batch } = this.runner;
    let answer: ReportAnswer;
    try {
      answer = await this.runner.report({
        ...(this.firstReport ? { concurrency } : {}),
        ...(batch === undefined
          ? { room: this.room(), argsRoom: this.argsRoom(), seq: this.seq }
          : {}),
        outcomes,
        ...(ending ? { ending: true } : {}),
      });
    } catch (error) {
      // A closed batch's report hands a failed call to the scheduler itself: past that, the run
      // fails, and recovery settles its jobs.
      if (batch !== undefined) throw error;
      // Kept for the next call (their bytes stay held): first, in their order; one sent alone
      // goes last, so that the others are not held up behind it.
      if (outcomes.length === 1 && ++this.failedAlone >= REPORT_TRIES_ALONE) {
        this.failedAlone = 0;
        outcomes[0] = unrecordable(outcomes[0], error);
      }
      this.outcomes = isolate ? [...this.outcomes, ...outcomes] : [...outcomes, ...this.outcomes];
      this.recount();
      this.failedCalls++;
      this.retryAt =
        Date.now() + Math.min(REPORT_RETRY_MAX_MS, REPORT_RETRY_MS * 2 ** this.failedCalls);
      return { more: false, stop: false, failed: true };
    }
    this.release(bytes);
    this.seq++;
    this.failedCalls = 0;
    this.failedAlone = 0;
    this.retryAt = undefined;
    this.firstReport = false;
    this.waiting.push(...answer.tasks);
    for (const workId of answer.cancels) {
      const job = this.running.get(workId);
      if (job && !job.canceled) {
        job.canceled = true;
        job.abort.abort(new Error("workpool: the job was canceled"));
        continue;
      }
      // Held here, not started yet (handed over in this same answer): it never starts, and its
      // attempt ends now; the pool ends the job canceled. (One still in a hand-over row the
      // report read was ended there, by the report; a cancel of a job that already ended is moot.)
      const waiting = this.waiting.findIndex((handed) => handed.workId === workId);
      if (waiting >= 0) this.endUnstarted(this.waiting.splice(waiting, 1)[0]);
    }
    return { more: answer.more, stop: answer.stop, failed: false };
  }

  /** Bytes of args the run may still take: HELD_ARGS_BYTES_LIMIT less the args of the jobs it
   * holds (running or waiting). */
  private argsRoom(): number {
    let held = 0;
    for (const handed of this.waiting) held += argsBytes(handed);
    for (const job of this.running.values()) held += argsBytes(job.handed);
    return Math.max(0, HELD_ARGS_BYTES_LIMIT - held);
  }

  /** Jobs the run can start now: free slots, less what it holds waiting; none once its time is
   * up (its last report then takes nothing, and the pool takes back what waits for it). */
  private room(): number {
    if (this.timeUp) return 0;
    return Math.max(0, this.runner.concurrency - this.running.size - this.waiting.length);
  }

  /** Ends the attempt of a canceled job that never started; the pool ends the job canceled. */
  private endUnstarted(handed: Handed): void {
    this.outcomes.push({
      workId: handed.workId,
      attempt: handed.attempt,
      result: {
        kind: "failed",
        error: CANCELED_BEFORE_START,
        fnArgs: handBack(handed),
      },
    });
  }

  /** Counts `bytes` of results as held until a report answers for them (waiting, first, while
   * they would take the run past HELD_RESULT_BYTES_LIMIT and earlier ones are still held). */
  private async hold(bytes: number): Promise<void> {
    while (this.heldBytes > 0 && this.heldBytes + bytes > HELD_RESULT_BYTES_LIMIT) {
      await new Promise<void>((resolve) => this.reported.push(resolve));
    }
    this.heldBytes += bytes;
    this.peakHeldBytes = Math.max(this.peakHeldBytes, this.heldBytes);
  }

  /** Counts the bytes of the small results in `outcomes` again. */
  private recount(): void {
    this.unreportedBytes = 0;
    for (const outcome of this.outcomes) {
      const bytes = valueSizeBytes(outcome.result);
      if (bytes <= INLINE_VALUE_BYTES) this.unreportedBytes += bytes;
    }
  }

  /** A report answered for `bytes` of results: results waiting for room go on. */
  private release(bytes: number): void {
    this.heldBytes = Math.max(0, this.heldBytes - bytes);
    const waiting = this.reported;
    this.reported = [];
    for (const resume of waiting) resume();
  }

  /** Records an outcome; a large one is reported at once, alone (the component stores it aside). */
  private async finish(outcome: Outcome): Promise<void> {
    const bytes = valueSizeBytes(outcome.result);
    await this.hold(bytes);
    if (bytes > INLINE_VALUE_BYTES) {
      const held = this.outcomes;
      const heldBytes = this.unreportedBytes;
      this.outcomes = [outcome];
      this.unreportedBytes = bytes;
      try {
        await this.report();
      } finally {
        this.outcomes.push(...held);
        this.unreportedBytes += heldBytes;
      }
      return;
    }
    this.outcomes.push(outcome);
    this.unreportedBytes += bytes;
    const full = this.outcomes.length >= UNREPORTED_OUTCOMES_LIMIT;
    if (full || this.unreportedBytes >= UNREPORTED_BYTES_LIMIT) await this.report();
  }

  /** Starts a handed job. */
  private start(handed: Handed): void {
    const entry: Running = { handed, abort: new AbortController(), canceled: false };
    this.running.set(handed.workId, entry);
    void this.runJob(entry)
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.running.delete(handed.workId);
        this.wake?.();
      });
  }

  private async runJob(entry: Running): Promise<void> {
    const { handed, abort } = entry;
    const { noun } = this.runner;
    const outcome = (result: Outcome["result"]) =>
      this.finish({ workId: handed.workId, attempt: handed.attempt, result });
    const refused = this.runner.refuse(handed);
    if (refused !== undefined) {
      return await outcome({
        kind: "failed",
        error: refused,
        nonRetryable: true,
        fnArgs: handBack(handed),
      });
    }
    if (this.runner.timeoutOf === undefined) {
      // No timer: the job ends when its action settles (Convex ends an action at 10 minutes).
      let result: Outcome["result"];
      try {
        result = attemptSuccess(await this.runner.execute(handed, abort.signal));
      } catch (error) {
        result = attemptFailure(error, handBack(handed));
      }
      return await outcome(result);
    }
    const timeoutMs = this.runner.timeoutOf(handed);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const settled = (async () => {
      try {
        return { value: await this.runner.execute(handed, abort.signal) };
      } catch (error) {
        return { error };
      }
    })();
    const first = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    if (first === "timeout" && !entry.canceled) {
      const error = `workpool: the ${noun} timed out after ${timeoutMs} ms`;
      abort.abort(new Error(error));
      // The attempt fails now; the job's slot is freed here (it may never settle).
      return await outcome({ kind: "failed", error, fnArgs: handBack(handed) });
    }
    // A canceled job keeps its slots until it settles; the pool then ends it canceled.
    const done = first === "timeout" ? await settled : first;
    return await outcome(
      "error" in done ? attemptFailure(done.error, handBack(handed)) : attemptSuccess(done.value),
    );
  }

  /** Waits until a job settles, or `ms` passes (no timer for Infinity: only a job's end wakes it). */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = Number.isFinite(ms) ? setTimeout(resolve, Math.max(0, ms)) : undefined;
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async run(): Promise<void> {
    const { concurrency, noun, batch } = this.runner;
    // A closed batch calls the pool only to report.
    const takes = batch === undefined;
    let more = false;
    let stop = false;
    if (batch !== undefined) {
      this.waiting.push(...batch);
      this.firstReport = false;
      // Outcomes that come within a report interval of the start go together.
      this.lastCall = this.startedAt;
    } else {
      ({ more, stop } = await this.report());
    }
    while (!stop) {
      if (this.failure !== undefined) throw this.failure;
      // Start what was handed over, while there is room and time.
      while (this.waiting.length > 0 && this.running.size < concurrency) {
        const handed = this.waiting.shift()!;
        const timeoutMs = this.runner.timeoutOf?.(handed) ?? 0;
        if (this.timeLeft() <= timeoutMs) {
          // Too late to finish it here: back to the pool, no attempt used.
          await this.finish({
            workId: handed.workId,
            attempt: handed.attempt,
            result: { kind: "snoozed", delayMs: 0, fnArgs: handBack(handed) },
          });
          continue;
        }
        this.start(handed);
      }
      if (this.timeLeft() <= 0) {
        // The action's time is up: every job still running fails this attempt, saying so.
        const who = noun === "task" ? "executor" : "runner";
        for (const [workId, job] of this.running) {
          job.abort.abort(new Error(`workpool: the ${who} reached its time limit`));
          this.outcomes.push({
            workId,
            attempt: job.handed.attempt,
            result: {
              kind: "failed",
              error: `workpool: the ${who} reached its time limit before the ${noun} ended`,
              fnArgs: handBack(job.handed),
            },
          });
        }
        this.running.clear();
        // Its last reports take nothing (room 0): what the pool handed it meanwhile goes back,
        // no attempt used; never taken and dropped (review 2026-11-26 M1).
        this.timeUp = true;
        for (let i = 0, failed = 0; i < TIME_UP_REPORTS;) {
          const called = await this.report(true);
          if (called.failed) {
            // Its outcomes are kept: tried again, and past TIME_UP_REPORT_TRIES the run fails.
            if (++failed >= TIME_UP_REPORT_TRIES) {
              throw new Error(`workpool: the ${who}'s last reports failed ${failed} times`);
            }
            await this.pause(this.retryAt! - Date.now());
            continue;
          }
          if (!called.more) break;
          i++;
        }
        return;
      }
      const now = Date.now();
      if (this.retryAt !== undefined && now < this.retryAt) {
        // A report call failed: the next waits its backoff (a job that ends meanwhile wakes this
        // early, and its outcome waits with the others).
        await this.pause(Math.min(this.retryAt - now, this.timeLeft()));
        continue;
      }
      const refillDue = this.refillAt !== undefined && now >= this.refillAt;
      if (this.running.size === 0 && this.waiting.length === 0 && this.outcomes.length === 0) {
        // A closed batch is done: every outcome was reported.
        if (!takes) return;
        // Nothing left: once the refill of its last freed slots is due, the last report says so,
        // and ends the run unless it brings more.
        if (this.refillAt === undefined || refillDue) {
          ({ more, stop } = await this.report(true));
          continue;
        }
        await this.pause(this.refillAt - now);
        continue;
      }
      const sinceCall = now - this.lastCall;
      // Room for more: a free slot, and args room (a report takes at least one job while any is
      // left, so a run holding too many args does not call for more in vain).
      const hasRoom = this.running.size < concurrency && (!takes || this.argsRoom() > 0);
      // Outcomes wait for others up to REPORT_INTERVAL_MS, unless none can come (nothing runs).
      // More hand-overs wait than the last report took: it takes them as soon as it has room.
      const due =
        (more && hasRoom) ||
        (this.outcomes.length > 0 &&
          (sinceCall >= REPORT_INTERVAL_MS || this.running.size === 0)) ||
        (takes && refillDue && hasRoom) ||
        (takes && sinceCall >= CHECK_IN_INTERVAL_MS);
      if (due) {
        ({ more, stop } = await this.report());
        continue;
      }
      const untilRefill =
        takes && this.refillAt !== undefined && hasRoom ? this.refillAt - now : Infinity;
      const untilCheckIn = takes ? CHECK_IN_INTERVAL_MS - sinceCall : Infinity;
      const wait =
        this.outcomes.length > 0
          ? Math.min(REPORT_INTERVAL_MS - sinceCall, untilCheckIn)
          : Math.min(untilRefill, untilCheckIn);
      await this.pause(Math.min(wait, this.timeLeft()));
    }
  }
}
