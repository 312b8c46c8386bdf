/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type * as api_dedupe from "../api/dedupe.js";
import type * as api_enqueue from "../api/enqueue.js";
import type * as api_groups from "../api/groups.js";
import type * as api_jobStatus from "../api/jobStatus.js";
import type * as api_keyLedger from "../api/keyLedger.js";
import type * as api_kick from "../api/kick.js";
import type * as api_manualCompletion from "../api/manualCompletion.js";
import type * as api_rerun from "../api/rerun.js";
import type * as api_scheduleRuns from "../api/scheduleRuns.js";
import type * as complete from "../complete.js";
import type * as config from "../config.js";
import type * as deliver from "../deliver.js";
import type * as groups from "../groups.js";
import type * as inspect from "../inspect.js";
import type * as keys from "../keys.js";
import type * as lib from "../lib.js";
import type * as loop from "../loop.js";
import type * as mainLoop_awaiting from "../mainLoop/awaiting.js";
import type * as mainLoop_cancel from "../mainLoop/cancel.js";
import type * as mainLoop_complete from "../mainLoop/complete.js";
import type * as mainLoop_executors from "../mainLoop/executors.js";
import type * as mainLoop_groups from "../mainLoop/groups.js";
import type * as mainLoop_keyState from "../mainLoop/keyState.js";
import type * as mainLoop_main from "../mainLoop/main.js";
import type * as mainLoop_pass from "../mainLoop/pass.js";
import type * as mainLoop_passBudget from "../mainLoop/passBudget.js";
import type * as mainLoop_rateLimit from "../mainLoop/rateLimit.js";
import type * as mainLoop_recovery from "../mainLoop/recovery.js";
import type * as mainLoop_refile from "../mainLoop/refile.js";
import type * as mainLoop_scheduleRelease from "../mainLoop/scheduleRelease.js";
import type * as mainLoop_start from "../mainLoop/start.js";
import type * as mainLoop_stats from "../mainLoop/stats.js";
import type * as mainLoop_sweep from "../mainLoop/sweep.js";
import type * as mainLoop_watchdog from "../mainLoop/watchdog.js";
import type * as model_dedupeHash from "../model/dedupeHash.js";
import type * as model_errors from "../model/errors.js";
import type * as model_logging from "../model/logging.js";
import type * as model_outcomes from "../model/outcomes.js";
import type * as model_payloads from "../model/payloads.js";
import type * as model_retry from "../model/retry.js";
import type * as model_schedule from "../model/schedule.js";
import type * as model_scheduleTimes from "../model/scheduleTimes.js";
import type * as model_segments from "../model/segments.js";
import type * as model_startOrder from "../model/startOrder.js";
import type * as model_validate from "../model/validate.js";
import type * as model_validators from "../model/validators.js";
import type * as model_valueMeasure from "../model/valueMeasure.js";
import type * as runners_actionRunner from "../runners/actionRunner.js";
import type * as runners_batchRun from "../runners/batchRun.js";
import type * as runners_deliver from "../runners/deliver.js";
import type * as runners_executor from "../runners/executor.js";
import type * as runners_groupCallback from "../runners/groupCallback.js";
import type * as runners_worker from "../runners/worker.js";
import type * as schedules from "../schedules.js";
import type * as sweep from "../sweep.js";
import type * as watchdog from "../watchdog.js";
import type * as worker from "../worker.js";

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  "api/dedupe": typeof api_dedupe;
  "api/enqueue": typeof api_enqueue;
  "api/groups": typeof api_groups;
  "api/jobStatus": typeof api_jobStatus;
  "api/keyLedger": typeof api_keyLedger;
  "api/kick": typeof api_kick;
  "api/manualCompletion": typeof api_manualCompletion;
  "api/rerun": typeof api_rerun;
  "api/scheduleRuns": typeof api_scheduleRuns;
  complete: typeof complete;
  config: typeof config;
  deliver: typeof deliver;
  groups: typeof groups;
  inspect: typeof inspect;
  keys: typeof keys;
  lib: typeof lib;
  loop: typeof loop;
  "mainLoop/awaiting": typeof mainLoop_awaiting;
  "mainLoop/cancel": typeof mainLoop_cancel;
  "mainLoop/complete": typeof mainLoop_complete;
  "mainLoop/executors": typeof mainLoop_executors;
  "mainLoop/groups": typeof mainLoop_groups;
  "mainLoop/keyState": typeof mainLoop_keyState;
  "mainLoop/main": typeof mainLoop_main;
  "mainLoop/pass": typeof mainLoop_pass;
  "mainLoop/passBudget": typeof mainLoop_passBudget;
  "mainLoop/rateLimit": typeof mainLoop_rateLimit;
  "mainLoop/recovery": typeof mainLoop_recovery;
  "mainLoop/refile": typeof mainLoop_refile;
  "mainLoop/scheduleRelease": typeof mainLoop_scheduleRelease;
  "mainLoop/start": typeof mainLoop_start;
  "mainLoop/stats": typeof mainLoop_stats;
  "mainLoop/sweep": typeof mainLoop_sweep;
  "mainLoop/watchdog": typeof mainLoop_watchdog;
  "model/dedupeHash": typeof model_dedupeHash;
  "model/errors": typeof model_errors;
  "model/logging": typeof model_logging;
  "model/outcomes": typeof model_outcomes;
  "model/payloads": typeof model_payloads;
  "model/retry": typeof model_retry;
  "model/schedule": typeof model_schedule;
  "model/scheduleTimes": typeof model_scheduleTimes;
  "model/segments": typeof model_segments;
  "model/startOrder": typeof model_startOrder;
  "model/validate": typeof model_validate;
  "model/validators": typeof model_validators;
  "model/valueMeasure": typeof model_valueMeasure;
  "runners/actionRunner": typeof runners_actionRunner;
  "runners/batchRun": typeof runners_batchRun;
  "runners/deliver": typeof runners_deliver;
  "runners/executor": typeof runners_executor;
  "runners/groupCallback": typeof runners_groupCallback;
  "runners/worker": typeof runners_worker;
  schedules: typeof schedules;
  sweep: typeof sweep;
  watchdog: typeof watchdog;
  worker: typeof worker;
}> = anyApi as any;

/**
 * A utility for referencing Convex functions in your app's public API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = api.myModule.myFunction;
 * ```
 */
export const api: FilterApi<
  typeof fullApi,
  FunctionReference<any, "public">
> = anyApi as any;

/**
 * A utility for referencing Convex functions in your app's internal API.
 *
 * Usage:
 * ```js
 * const myFunctionReference = internal.myModule.myFunction;
 * ```
 */
export const internal: FilterApi<
  typeof fullApi,
  FunctionReference<any, "internal">
> = anyApi as any;

export const components = componentsGeneric() as unknown as {};
