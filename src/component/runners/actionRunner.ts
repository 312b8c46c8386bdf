/**
 * The action runner: the component's own batch runner for action jobs. Where a worker
 * (runners/worker.ts) is one scheduled action per attempt plus one report mutation, an action
 * runner is scheduled by the loop with the batch of action jobs one pass started, runs each as its
 * own `ctx.runAction` of the app's function, and reports their outcomes in batches (`report`,
 * below). The run is the batch run's (runners/batchRun.ts), as an executor's is; its hand-over is
 * its own arguments, a closed batch: a runner never takes more (the next pass starts another at the
 * cost of one report), so no job waits for a busy runner and no hand-over row is written. Writes
 * only `pendingCompletion` (through `report`): a report's outcomes share rows, filed under the
 * runner's token (`runner`, which the loop also records on each job's running state, for
 * recovery), so the loop deletes a row per report, not per job. Never decides a retry, never
 * admits a job.
 */
import type { FunctionHandle } from "convex/server";
import { v } from "convex/values";
import { internal } from "../_generated/api.js";
import { internalAction, internalMutation } from "../_generated/server.js";
import { recordCompletions, type ReportedOutcome } from "../mainLoop/complete.js";
import { vAttemptResult } from "../model/validators.js";
import { BatchRun } from "./batchRun.js";
import { scheduleReport, vWorkerArgs } from "./worker.js";

/** Action jobs one runner takes: a pass starts at most START_BATCH (100), so two runners at most;
 * 50 keeps a runner's arguments (inline args are at most 8 KB each) far below Convex's limit. */
export const ACTION_RUNNER_BATCH = 50;

/** One job of a runner's batch, as the loop hands it over: what a worker gets for one attempt. */
export const vRunnerJob = v.object(vWorkerArgs);

export const run = internalAction({
  // `runner`: unset on runners scheduled before it was passed (their reports file a row per job).
  args: { jobs: v.array(vRunnerJob), runner: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { jobs, runner }) => {
    const byId = new Map(jobs.map((job) => [job.workId as string, job]));
    await new BatchRun({
      concurrency: jobs.length,
      noun: "action",
      batch: jobs.map((job) => ({
        workId: job.workId,
        attempt: job.attempt,
        previousAttempts: 0,
        task: job.fnHandle,
        fnArgs: job.fnArgs,
      })),
      report: async ({ outcomes }) => {
        const report = { outcomes, runner };
        try {
          await ctx.runMutation(internal.runners.actionRunner.complete, report);
        } catch {
          // As a worker does: the scheduler runs a mutation exactly once, so a failed direct
          // report never makes an action run again. (Had it committed after all, the second one
          // is stale and ignored.)
          await scheduleReport(() =>
            ctx.scheduler.runAfter(0, internal.runners.actionRunner.complete, report),
          );
        }
        return { tasks: [], cancels: [], more: false, stop: false };
      },
      // No budget and no per-job time limit: no timer decides a job's outcome. Each job ends when
      // its own action settles (Convex ends it at 10 minutes, as under a worker), and the runner
      // when all have been reported, so a job's slot is never freed while its action may run.
      refuse: () => undefined,
      // The app's action cannot be stopped from here: a canceled one runs to its end, and the
      // loop records what it returned (as for a worker's).
      execute: async (handed) => {
        const job = byId.get(handed.workId)!;
        const args = job.payloadId
          ? await ctx.runQuery(internal.runners.worker.loadArgs, { payloadId: job.payloadId })
          : job.fnArgs;
        return await ctx.runAction(job.fnHandle as FunctionHandle<"action">, args ?? {});
      },
    }).run();
    return null;
  },
});

/** A runner's report: the outcomes of the actions it ran, filed under its token when it has one
 * (several to a row, complete.ts `recordCompletions`), else a row each, as a worker's are. */
export const complete = internalMutation({
  args: {
    outcomes: v.array(
      v.object({ workId: v.string(), attempt: v.number(), result: vAttemptResult }),
    ),
    runner: v.optional(v.string()),
  },
  returns: v.null(),
  handler: async (ctx, { outcomes, runner }) => {
    const reported: ReportedOutcome[] = [];
    for (const { workId, attempt, result } of outcomes) {
      const id = ctx.db.normalizeId("work", workId);
      if (id !== null) reported.push({ workId: id, attempt, result });
    }
    await recordCompletions(ctx, reported, runner);
    return null;
  },
});
