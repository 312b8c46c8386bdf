/**
 * Over 400 lines on purpose: an executor's whole life (its limits, the checks of its definition,
 * and the run that takes, runs and reports tasks) reads in one place, with the state it keeps.
 *
 * Executors (API-EXTENSIONS section 8): the app action `pool.executor({ concurrency, tasks })`
 * makes, which runs many of the pool's tasks at once. Owns the executor's own life: it takes the
 * tasks the pool's loop handed it (through the component's `runners/executor:report`), checks
 * their args, runs up to `concurrency` handlers at once under their timeouts and abort signals,
 * reports outcomes in batches (each report brings the next hand-overs and cancels), checks in while
 * busy, and ends when nothing is left. It never admits a task (the loop does, as for every job),
 * never writes the component's tables except through `report`, and never retries (the loop
 * decides, from the outcome it reports).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- an executor's tasks map their own arg and
   return types; the action that runs them sees them as a map of any. */
import {
  internalActionGeneric,
  type GenericActionCtx,
  type GenericDataModel,
  type RegisteredAction,
} from "convex/server";
import { v, type ObjectType, type PropertyValidators } from "convex/values";
import { validate } from "convex-helpers/validators";
import { errorMessage, invalidArgument } from "../component/model/errors.js";
import { attemptFailure, attemptSuccess } from "../component/model/outcomes.js";
import { INLINE_VALUE_BYTES, valueSizeBytes } from "../component/model/payloads.js";
import type { WorkId, WorkpoolComponent } from "./types.js";

/** Tasks one executor runs at once unless told: enough to hide I/O waits, few enough for memory. */
export const DEFAULT_CONCURRENCY = 50;
/** The most an executor may run at once (API-EXTENSIONS section 8). */
export const MAX_CONCURRENCY = 1000;
/** A task's time limit unless its definition sets one, and the longest it may set. */
export const MAX_TASK_TIMEOUT_MS = 5 * 60_000;
/** The shortest time limit a task may set. */
export const MIN_TASK_TIMEOUT_MS = 1_000;
/** How long an executor runs: Convex ends an action at 10 minutes; the last minute is kept for
 * its final reports. It takes a task only while more than the task's timeout is left. */
export const EXECUTOR_BUDGET_MS = 9 * 60_000;
/** Outcomes wait at most this long to be reported with others: a freed pool slot is refilled
 * within about two of these (this report, and the next one, which brings the new hand-over). */
export const REPORT_INTERVAL_MS = 200;
/** A report that freed slots (it carried outcomes, or it was the first, which says how many
 * tasks the executor runs) is followed this long after by the one that takes their refill, unless
 * another report came first: the loop hands the freed slots over within a segment or two (100 ms
 * each). So a freed slot is refilled within about half a second, and an executor whose tasks all
 * finished waits that long for more before it ends (instead of ending and making the pool start
 * another). */
export const REFILL_AFTER_MS = 250;
/** While its tasks run and none finishes, an executor calls the pool at most this often (for
 * cancels and new hand-overs); reports of outcomes, and their refills, come on top. */
export const CHECK_IN_INTERVAL_MS = 2_000;
/** Unreported results an executor holds, by its own byte count, before it reports: far below the
 * 8 MiB the API allows, and below what one report's arguments may carry. */
export const UNREPORTED_BYTES_LIMIT = 512 * 1024;
/** Unreported outcomes an executor holds before it reports: half of what one report takes. */
export const UNREPORTED_OUTCOMES_LIMIT = 500;

/** What a task's handler gets besides its args. */
export type TaskInfo = {
  /** The job's id, as `enqueueTask` returned it. */
  id: WorkId;
  /** Attempts before this one (0 on the first), as `previousAttempts`. */
  attempt: number;
  /** Aborted when the job is canceled while it runs, and at the task's timeout. */
  signal: AbortSignal;
};

/** One task an executor defines. */
export type TaskDefinition<A extends PropertyValidators> = {
  /** The task's args, as a Convex function's: checked when the task runs. */
  args: A;
  /** How long one run may take, from 1 s to 5 min (default 5 min). */
  timeoutMs?: number;
  handler: (
    ctx: GenericActionCtx<GenericDataModel>,
    args: ObjectType<A>,
    info: TaskInfo,
  ) => Promise<unknown>;
};

/** What `pool.executor` takes. */
export type ExecutorDefinition<A extends Record<string, PropertyValidators>> = {
  /** Tasks one executor action runs at once: a whole number from 1 to 1,000 (default 50). */
  concurrency?: number;
  tasks: { [K in keyof A]: TaskDefinition<A[K]> };
};

/** The args type an executor action carries for `enqueueTask`: its tasks' names and args. */
export type ExecutorArgs<Tasks extends Record<string, Record<string, any>>> = {
  executorId: string;
  /** Never sent: it carries the tasks' arg types to `enqueueTask`. */
  __tasks?: Tasks;
};

/** The args of each task of an executor defined with validators `A`. */
export type TaskArgs<A extends Record<string, PropertyValidators>> = {
  [K in keyof A]: ObjectType<A[K]>;
};

/** The internal action `pool.executor` returns, for the app to export. (Signatures spell out the
 * `RegisteredAction` it is: Convex's api types read an export's args from that alias alone.) */
export type ExecutorAction<A extends Record<string, PropertyValidators>> = RegisteredAction<
  "internal",
  ExecutorArgs<TaskArgs<A>>,
  Promise<null>
>;

/** Checks an executor's definition when the app's module loads (a deploy with a bad one fails). */
function checkDefinition(definition: ExecutorDefinition<any>): number {
  const concurrency = definition.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    invalidArgument(
      "concurrency",
      `must be a whole number from 1 to ${MAX_CONCURRENCY}`,
      concurrency,
    );
  }
  if (typeof definition.tasks !== "object" || definition.tasks === null) {
    invalidArgument("tasks", "must be an object of task definitions", definition.tasks);
  }
  for (const [name, task] of Object.entries(definition.tasks)) {
    if (typeof task?.handler !== "function") {
      invalidArgument(`tasks.${name}.handler`, "must be a function", task?.handler);
    }
    const timeout = task.timeoutMs ?? MAX_TASK_TIMEOUT_MS;
    if (
      !Number.isFinite(timeout) ||
      timeout < MIN_TASK_TIMEOUT_MS ||
      timeout > MAX_TASK_TIMEOUT_MS
    ) {
      invalidArgument(`tasks.${name}.timeoutMs`, "must be from 1,000 to 300,000 ms", timeout);
    }
  }
  return concurrency;
}

/** One outcome for the pool, as the component's `report` takes it. */
type Outcome = {
  workId: string;
  attempt: number;
  result:
    | { kind: "success"; returnValue: any }
    | { kind: "failed"; error: string; nonRetryable?: boolean; fnArgs?: any }
    | { kind: "snoozed"; delayMs: number; fnArgs?: any };
};

/** The args an outcome hands back to the pool: inline ones (the job's row dropped them at its
 * start and a retry needs them); large ones stay in their payload row, so they are not sent. */
function handBack(handed: Handed): unknown {
  return valueSizeBytes(handed.fnArgs) <= INLINE_VALUE_BYTES ? handed.fnArgs : undefined;
}

type Handed = {
  workId: string;
  attempt: number;
  previousAttempts: number;
  task: string;
  fnArgs: any;
};

/**
 * Makes the executor action (see the file comment): `pool.executor` calls this with the pool's
 * component.
 */
export function defineExecutor<A extends Record<string, PropertyValidators>>(
  component: WorkpoolComponent,
  definition: ExecutorDefinition<A>,
): RegisteredAction<"internal", ExecutorArgs<TaskArgs<A>>, Promise<null>> {
  const concurrency = checkDefinition(definition);
  const tasks = definition.tasks as Record<string, TaskDefinition<any>>;
  return internalActionGeneric({
    args: { executorId: v.string() },
    returns: v.null(),
    handler: async (ctx, { executorId }) => {
      await new ExecutorRun(ctx, component, executorId, concurrency, tasks).run();
      return null;
    },
  }) as unknown as RegisteredAction<"internal", ExecutorArgs<TaskArgs<A>>, Promise<null>>;
}

/** One task in flight. */
type Running = {
  handed: Handed;
  abort: AbortController;
  canceled: boolean;
  settled: Promise<void>;
};

/** One executor action's life (see the file comment). */
class ExecutorRun {
  private readonly startedAt = Date.now();
  private readonly waiting: Handed[] = [];
  private readonly running = new Map<string, Running>();
  private outcomes: Outcome[] = [];
  private unreportedBytes = 0;
  private lastCall = 0;
  /** When the refill of the slots the last report freed is due (see REFILL_AFTER_MS). */
  private refillAt: number | undefined;
  private firstReport = true;
  private wake: (() => void) | undefined;
  /** A report that failed while a task finished: the run ends with it (the pool recovers). */
  private failure: unknown;

  constructor(
    private readonly ctx: GenericActionCtx<GenericDataModel>,
    private readonly component: WorkpoolComponent,
    private readonly executorId: string,
    private readonly concurrency: number,
    private readonly tasks: Record<string, TaskDefinition<any>>,
  ) {}

  private timeLeft(): number {
    return this.startedAt + EXECUTOR_BUDGET_MS - Date.now();
  }

  /** Calls the pool: hands over the outcomes so far, takes new tasks and cancels. */
  private async report(ending = false): Promise<{ more: boolean; stop: boolean }> {
    const outcomes = this.outcomes;
    this.outcomes = [];
    this.unreportedBytes = 0;
    this.lastCall = Date.now();
    // A report that frees slots (or says how many there are) is followed by one for their refill.
    this.refillAt =
      outcomes.length > 0 || this.firstReport ? this.lastCall + REFILL_AFTER_MS : undefined;
    const answer = await this.ctx.runMutation(this.component.runners.executor.report, {
      executorId: this.executorId,
      ...(this.firstReport ? { concurrency: this.concurrency } : {}),
      outcomes,
      ...(ending ? { ending: true } : {}),
    });
    this.firstReport = false;
    this.waiting.push(...answer.tasks);
    for (const workId of answer.cancels) {
      const task = this.running.get(workId);
      if (task && !task.canceled) {
        task.canceled = true;
        task.abort.abort(new Error("workpool: the job was canceled"));
      }
    }
    return { more: answer.more, stop: answer.stop };
  }

  /** Records an outcome; a large one is reported at once, alone (the component stores it aside). */
  private async finish(outcome: Outcome): Promise<void> {
    const bytes = valueSizeBytes(outcome.result);
    if (bytes > INLINE_VALUE_BYTES) {
      const held = this.outcomes;
      this.outcomes = [outcome];
      await this.report();
      this.outcomes.push(...held);
      return;
    }
    this.outcomes.push(outcome);
    this.unreportedBytes += bytes;
    const full = this.outcomes.length >= UNREPORTED_OUTCOMES_LIMIT;
    if (full || this.unreportedBytes >= UNREPORTED_BYTES_LIMIT) await this.report();
  }

  /** Starts a handed task (or hands it back when too little time is left for it). */
  private start(handed: Handed): void {
    const definition = this.tasks[handed.task];
    const abort = new AbortController();
    const entry: Running = { handed, abort, canceled: false, settled: Promise.resolve() };
    this.running.set(handed.workId, entry);
    entry.settled = this.runTask(entry, definition)
      .catch((error: unknown) => {
        this.failure ??= error;
      })
      .finally(() => {
        this.running.delete(handed.workId);
        this.wake?.();
      });
  }

  private async runTask(
    entry: Running,
    definition: TaskDefinition<any> | undefined,
  ): Promise<void> {
    const { handed, abort } = entry;
    const outcome = (result: Outcome["result"]) =>
      this.finish({ workId: handed.workId, attempt: handed.attempt, result });
    if (definition === undefined) {
      const known = Object.keys(this.tasks).join(", ");
      return await outcome({
        kind: "failed",
        error: `workpool: the executor has no task named "${handed.task}" (it has: ${known})`,
        nonRetryable: true,
        fnArgs: handBack(handed),
      });
    }
    try {
      validate(v.object(definition.args), handed.fnArgs, { throw: true });
    } catch (error) {
      return await outcome({
        kind: "failed",
        error: errorMessage(`workpool: task "${handed.task}" args: ${errorMessage(error)}`),
        nonRetryable: true,
        fnArgs: handBack(handed),
      });
    }
    const timeoutMs = definition.timeoutMs ?? MAX_TASK_TIMEOUT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    const info = {
      id: handed.workId as WorkId,
      attempt: handed.previousAttempts,
      signal: abort.signal,
    };
    const settled = (async () => {
      try {
        return { value: await definition.handler(this.ctx, handed.fnArgs, info) };
      } catch (error) {
        return { error };
      }
    })();
    const first = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    if (first === "timeout" && !entry.canceled) {
      abort.abort(new Error(`workpool: the task timed out after ${timeoutMs} ms`));
      // The attempt fails now; the handler's slot is freed here (it may never settle).
      return await outcome({
        kind: "failed",
        error: `workpool: the task timed out after ${timeoutMs} ms`,
        fnArgs: handBack(handed),
      });
    }
    // A canceled task keeps its slots until its handler settles; the pool then ends it canceled.
    const done = first === "timeout" ? await settled : first;
    return await outcome(
      "error" in done ? attemptFailure(done.error, handBack(handed)) : attemptSuccess(done.value),
    );
  }

  /** Waits until a task settles, or `ms` passes. */
  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, ms));
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  async run(): Promise<void> {
    let { more, stop } = await this.report();
    while (!stop) {
      if (this.failure !== undefined) throw this.failure;
      // Start what was handed over, while there is room and time.
      while (this.waiting.length > 0 && this.running.size < this.concurrency) {
        const handed = this.waiting.shift()!;
        const timeoutMs = this.tasks[handed.task]?.timeoutMs ?? MAX_TASK_TIMEOUT_MS;
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
        // The action's time is up: every task still running fails this attempt, saying so.
        for (const [workId, task] of this.running) {
          task.abort.abort(new Error("workpool: the executor reached its time limit"));
          this.outcomes.push({
            workId,
            attempt: task.handed.attempt,
            result: {
              kind: "failed",
              error: "workpool: the executor reached its time limit before the task ended",
              fnArgs: handBack(task.handed),
            },
          });
        }
        this.running.clear();
        await this.report(true);
        return;
      }
      const now = Date.now();
      const refillDue = this.refillAt !== undefined && now >= this.refillAt;
      if (this.running.size === 0 && this.waiting.length === 0 && this.outcomes.length === 0) {
        // Nothing left: once the refill of its last freed slots is due, the last report says so,
        // and ends the executor unless it brings more.
        if (this.refillAt === undefined || refillDue) {
          ({ more, stop } = await this.report(true));
          continue;
        }
        await this.pause(this.refillAt - now);
        continue;
      }
      const sinceCall = now - this.lastCall;
      const hasRoom = this.running.size < this.concurrency;
      const due =
        more ||
        (this.outcomes.length > 0 && sinceCall >= REPORT_INTERVAL_MS) ||
        (refillDue && hasRoom) ||
        sinceCall >= CHECK_IN_INTERVAL_MS;
      if (due) {
        ({ more, stop } = await this.report());
        continue;
      }
      const untilRefill = this.refillAt !== undefined && hasRoom ? this.refillAt - now : Infinity;
      const wait =
        this.outcomes.length > 0
          ? Math.min(REPORT_INTERVAL_MS - sinceCall, CHECK_IN_INTERVAL_MS - sinceCall)
          : Math.min(untilRefill, CHECK_IN_INTERVAL_MS - sinceCall);
      await this.pause(Math.min(wait, this.timeLeft()));
    }
  }
}
