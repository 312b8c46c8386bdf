/**
 * Executors (API-EXTENSIONS section 8): the app action `pool.executor({ concurrency, tasks })`
 * makes, which runs many of the pool's tasks at once. Owns the executor's definition (its limits,
 * and the checks that fail a deploy with a bad one) and what a task is to the run: its time limit,
 * its args check, its handler. The run itself (taking hand-overs, running up to `concurrency` at
 * once, reporting in batches, checking in, ending) is the batch run's
 * (src/component/runners/batchRun.ts), shared with the component's action runner. It never admits
 * a task (the loop does, as for every job), never writes the component's tables except through
 * `report`, and never retries (the loop decides, from the outcome it reports).
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
import { BatchRun, EXECUTOR_BUDGET_MS, type Handed } from "../component/runners/batchRun.js";
import type { WorkId, WorkpoolComponent } from "./types.js";

/** Tasks one executor runs at once unless told: enough to hide I/O waits, few enough for memory. */
export const DEFAULT_CONCURRENCY = 50;
/** The most an executor may run at once (API-EXTENSIONS section 8). */
export const MAX_CONCURRENCY = 1000;
/** A task's time limit unless its definition sets one, and the longest it may set. */
export const MAX_TASK_TIMEOUT_MS = 5 * 60_000;
/** The shortest time limit a task may set. */
export const MIN_TASK_TIMEOUT_MS = 1_000;
// The run's timing and memory limits are the batch run's (one engine for executors and the
// component's action runner); re-exported here, where the executor's other limits are.
export {
  CHECK_IN_INTERVAL_MS,
  EXECUTOR_BUDGET_MS,
  REFILL_AFTER_MS,
  REPORT_INTERVAL_MS,
  UNREPORTED_BYTES_LIMIT,
  UNREPORTED_OUTCOMES_LIMIT,
} from "../component/runners/batchRun.js";

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

/** The args type an executor action carries for `enqueueTask`: its tasks' names and args, and
 * what each returns (by default, anything). */
export type ExecutorArgs<
  Tasks extends Record<string, Record<string, any>>,
  Returns = { [K in keyof Tasks]: any },
> = {
  executorId: string;
  /** Never sent: it carries the tasks' arg types to `enqueueTask`. */
  __tasks?: Tasks;
  /** Never sent: it carries the tasks' return types to `enqueueTask`'s onComplete. */
  __returns?: Returns;
};

/** The args of each task of an executor defined with validators `A`. */
export type TaskArgs<A extends Record<string, PropertyValidators>> = {
  [K in keyof A]: ObjectType<A[K]>;
};

/** What each task's handler returns (resolved), from the tasks' definitions `T`. */
export type TaskReturns<T> = {
  [K in keyof T]: T[K] extends { handler: (...args: any[]) => Promise<infer R> } ? R : unknown;
};

/** The internal action `pool.executor` returns, for the app to export. (Signatures spell out the
 * `RegisteredAction` it is: Convex's api types read an export's args from that alias alone.) */
export type ExecutorAction<
  A extends Record<string, PropertyValidators>,
  Returns = { [K in keyof A]: any },
> = RegisteredAction<"internal", ExecutorArgs<TaskArgs<A>, Returns>, Promise<null>>;

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

/**
 * Makes the executor action (see the file comment): `pool.executor` calls this with the pool's
 * component. `T` is the tasks' definitions as written, for their handlers' return types (`A`
 * alone gives the handlers their args' types).
 */
export function defineExecutor<A extends Record<string, PropertyValidators>, T>(
  component: WorkpoolComponent,
  definition: ExecutorDefinition<A> & { tasks: T },
): RegisteredAction<"internal", ExecutorArgs<TaskArgs<A>, TaskReturns<T>>, Promise<null>> {
  const concurrency = checkDefinition(definition);
  const tasks = definition.tasks as Record<string, TaskDefinition<any>>;
  return internalActionGeneric({
    args: { executorId: v.string() },
    returns: v.null(),
    handler: async (ctx, { executorId }) => {
      await new BatchRun({
        concurrency,
        noun: "task",
        budgetMs: EXECUTOR_BUDGET_MS,
        report: async (request) =>
          await ctx.runMutation(component.runners.executor.report, { executorId, ...request }),
        timeoutOf: (handed) => tasks[handed.task]?.timeoutMs ?? MAX_TASK_TIMEOUT_MS,
        refuse: (handed) => refusal(tasks, handed),
        execute: async (handed, signal) =>
          await tasks[handed.task].handler(ctx, handed.fnArgs, {
            id: handed.workId as WorkId,
            attempt: handed.previousAttempts,
            signal,
          }),
      }).run();
      return null;
    },
  }) as unknown as RegisteredAction<
    "internal",
    ExecutorArgs<TaskArgs<A>, TaskReturns<T>>,
    Promise<null>
  >;
}

/** Why a handed task cannot run: its executor has no such task, or its args do not match. */
function refusal(tasks: Record<string, TaskDefinition<any>>, handed: Handed): string | undefined {
  const definition = tasks[handed.task];
  if (definition === undefined) {
    const known = Object.keys(tasks).join(", ");
    return `workpool: the executor has no task named "${handed.task}" (it has: ${known})`;
  }
  try {
    validate(v.object(definition.args), handed.fnArgs, { throw: true });
  } catch (error) {
    return errorMessage(`workpool: task "${handed.task}" args: ${errorMessage(error)}`);
  }
  return undefined;
}
