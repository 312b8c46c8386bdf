/**
 * The action runner: the component's own batch runner for action jobs. Where a worker
 * (runners/worker.ts) is one scheduled action per attempt plus one report mutation, an action
 * runner takes many due action jobs from the loop (as an executor takes tasks: `handovers` rows,
 * read by `runners/executor:report`), runs each as its own `ctx.runAction` of the app's function,
 * and reports their outcomes in batches. The run is the batch run's (runners/batchRun.ts); this
 * module says only what an action job is to it. Never reads or writes a table itself, never
 * decides a retry, never admits a job (the loop does, mainLoop/executors.ts).
 */
import type { FunctionHandle } from "convex/server";
import { v } from "convex/values";
import { api } from "../_generated/api.js";
import { internalAction } from "../_generated/server.js";
import { BatchRun } from "./batchRun.js";
import { scheduleReport } from "./worker.js";

/** The `fnHandle` the `executors` rows of action runners carry (no function has it: the loop
 * schedules `run` below for them, and their jobs name their own functions). */
export const ACTION_RUNNER = "workpool:actionRunner";
/** Action jobs one runner runs at once: each is its own action (Convex runs it in a slot of its
 * own), so this bounds only the runner's memory of args and results; the pool's maxParallelism
 * bounds the rest. */
export const ACTION_RUNNER_CONCURRENCY = 50;
/** How long one action job may run in a runner. A runner lasts 9 minutes (Convex ends an action
 * at 10) and is handed jobs only in its first ACTION_RUNNER_HANDOVER_WINDOW_MS, so every job it
 * takes has this long. */
export const ACTION_TIME_LIMIT_MS = 8 * 60_000;
/** A runner is handed jobs for this long after it started; later ones go to a new runner. Short,
 * so that every job it takes still has ACTION_TIME_LIMIT_MS of the runner's 9 minutes. */
export const ACTION_RUNNER_HANDOVER_WINDOW_MS = 30_000;

export const run = internalAction({
  args: { executorId: v.string() },
  returns: v.null(),
  handler: async (ctx, { executorId }) => {
    await new BatchRun({
      concurrency: ACTION_RUNNER_CONCURRENCY,
      noun: "action",
      report: async (request) => {
        try {
          return await ctx.runMutation(api.runners.executor.report, { executorId, ...request });
        } catch (error) {
          // As a worker does: the outcomes of actions that ran go to the scheduler, which runs a
          // mutation exactly once, so a failed report never makes them run again. (Had the report
          // committed after all, the second one is stale and ignored.) Nothing new is taken.
          if (request.outcomes.length === 0) throw error;
          await scheduleReport(() =>
            ctx.scheduler.runAfter(0, api.runners.executor.report, {
              executorId,
              outcomes: request.outcomes,
              outcomesOnly: true,
            }),
          );
          return { tasks: [], cancels: [], more: false, stop: false };
        }
      },
      timeoutOf: () => ACTION_TIME_LIMIT_MS,
      refuse: () => undefined,
      // The app's action cannot be stopped from here: a canceled one runs to its end, and the
      // loop records what it returned (as for a worker's).
      execute: async (handed) =>
        await ctx.runAction(handed.task as FunctionHandle<"action">, handed.fnArgs ?? {}),
    }).run();
    return null;
  },
});
