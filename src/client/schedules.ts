/**
 * Recurring schedules, the client's side (API-EXTENSIONS §10): the options of `scheduleAction` /
 * `scheduleMutation` / `scheduleQuery` and their public types, and `createSchedule`, which checks a
 * request (name, timing, options, the run's args) before anything is sent, turns function references
 * into handles and calls the component's `schedules.schedule`. The `Workpool` methods
 * (src/client/workpool.ts) call it and the component's other schedule functions. It never touches
 * the component's tables and holds no state.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- one implementation serves every Context and
   ReturnValue of the typed entry points. */
import {
  createFunctionHandle,
  getFunctionName,
  type FunctionReference,
  type FunctionType,
  type FunctionVisibility,
} from "convex/server";
import type { Infer } from "convex/values";
import { validateEnqueueItem } from "../component/api/enqueue.js";
import {
  checkScheduleOptions,
  validateScheduleName,
  vScheduleInfo,
  type Overlap,
} from "../component/model/schedule.js";
import type { Priority, RetryBehavior } from "../component/model/validators.js";
import type { OnCompleteArgs } from "./onComplete.js";
import { excludeKindsOf, poolConfigOf, validatePoolConfig, type PoolConfig } from "./options.js";
import type { RunResult } from "../component/model/validators.js";
import type { ActionCtx, MutationCtx, WorkpoolComponent } from "./types.js";

/** The id of a schedule, as `scheduleAction` and the others return it. */
export type ScheduleId = string & { __isScheduleId: true };

/** What `getSchedule` returns, and each entry of a `listSchedules` page: `{ id, name, fnName, cron?,
 * timezone?, everyMs?, startAt?, endAt?, overlap, catchupWindowMs, jitterMs, paused, nextRunAt,
 * lastRun?: { workId, scheduledFor, state, outcome? }, counts: { enqueued, skipped, missed } }`. */
export type ScheduleInfo = Infer<typeof vScheduleInfo>;
export { vScheduleInfo };

/** When a schedule's times fall: a cron expression (in a time zone, default UTC), or an interval. */
export type ScheduleTiming =
  | {
      /** Five fields (minute hour day-of-month month day-of-week) or six (seconds first), or
       * `@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`. */
      cron: string;
      /** An IANA time zone name, e.g. "America/New_York"; default "UTC". */
      timezone?: string;
      everyMs?: never;
    }
  | {
      /** Every this many ms (whole number ≥ 1,000), from `startAt`, else from the call. */
      everyMs: number;
      cron?: never;
      timezone?: never;
    };

/** A schedule's options: its timing, its rules, and the enqueue options of every run. */
export type ScheduleOptions<Context = unknown, ReturnValue = unknown> = ScheduleTiming & {
  /** No time before this (ms since epoch, inclusive). */
  startAt?: number;
  /** No time after this (ms since epoch, inclusive); must be in the future. */
  endAt?: number;
  /** What a time does while an earlier run is unfinished: "skip" (default) enqueues nothing,
   * "bufferOne" enqueues a run that starts once that one ends, "allowAll" enqueues anyway,
   * "cancelOther" cancels that run and enqueues. */
  overlap?: Overlap;
  /** A time enqueued later than this after it (a deployment that was down) is missed, not run;
   * of several times passed within it only the latest runs. Default 60,000. */
  catchupWindowMs?: number;
  /** Each run is due a random 0 to `jitterMs` ms after its time. Default 0. */
  jitterMs?: number;
  /** Create (or replace) the schedule paused. Default false. */
  paused?: boolean;
  /** The runs' name (info, list, logs); default the schedule's name. */
  name?: string;
  /** The runs' key (see `EnqueueOptions.key`). */
  key?: string;
  /** The runs' priority. Default "normal". */
  priority?: Priority;
  /** Called once per run when it finishes. */
  onComplete?: FunctionReference<
    "mutation",
    FunctionVisibility,
    OnCompleteArgs<Context, ReturnValue>
  > | null;
  /** Final result kinds for which onComplete is not called. */
  onCompleteExcludeKinds?: readonly RunResult["kind"][];
  /** Passed to onComplete as is. */
  context?: Context;
};

/** A schedule request as a `Workpool` completes it: the retry behavior it picked (actions only),
 * its config and status TTL. */
export type StandaloneScheduleOptions = ScheduleOptions<any, any> &
  PoolConfig & { retryBehavior?: RetryBehavior; statusTtl?: number };

/**
 * Creates the schedule `name`, or replaces the schedule of that name; what the `Workpool`
 * schedule methods call. Checks everything before sending (the component checks again).
 * @returns the schedule's id (the same when replacing).
 */
export async function createSchedule(
  component: WorkpoolComponent,
  ctx: MutationCtx | ActionCtx,
  fnType: FunctionType,
  name: string,
  fn: FunctionReference<FunctionType, FunctionVisibility> | string,
  fnArgs: Record<string, unknown>,
  options: StandaloneScheduleOptions,
): Promise<ScheduleId> {
  const {
    cron,
    timezone,
    everyMs,
    startAt,
    endAt,
    overlap,
    catchupWindowMs,
    jitterMs,
    paused,
    name: runName,
    key,
    priority,
    onComplete,
    onCompleteExcludeKinds,
    context,
    retryBehavior,
    statusTtl,
    ...config
  } = options ?? ({} as StandaloneScheduleOptions);
  validateScheduleName(name);
  validatePoolConfig(config);
  const timing = { cron, timezone, everyMs, startAt, endAt, overlap, catchupWindowMs, jitterMs };
  checkScheduleOptions({ ...timing, paused }, Date.now());
  const excludeKinds = excludeKindsOf(onCompleteExcludeKinds);
  const job = {
    fnHandle: typeof fn === "string" ? fn : await createFunctionHandle(fn),
    fnArgs,
    fnType,
    // Mutations and queries are never retried (a mutation that throws has no effects).
    retryBehavior: fnType === "action" ? retryBehavior : undefined,
    onComplete: onComplete
      ? {
          fnHandle: await createFunctionHandle(onComplete),
          context,
          ...(excludeKinds ? { excludeKinds } : {}),
        }
      : undefined,
    statusTtlMs: statusTtl,
    key,
    priority,
  };
  validateEnqueueItem({ ...job, fnName: runName ?? name }, Date.now());
  const run = {
    ...job,
    fnName: typeof fn === "string" ? fn : getFunctionName(fn),
    runName,
  };
  const id = await ctx.runMutation(component.schedules.schedule, {
    name,
    run,
    ...timing,
    paused,
    config: poolConfigOf(config),
  });
  return id as ScheduleId;
}
