/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type * as cancel from "../cancel.js";
import type * as complete from "../complete.js";
import type * as config from "../config.js";
import type * as dedupe from "../dedupe.js";
import type * as deliver from "../deliver.js";
import type * as enqueue from "../enqueue.js";
import type * as errors from "../errors.js";
import type * as inspect from "../inspect.js";
import type * as jobStatus from "../jobStatus.js";
import type * as keyState from "../keyState.js";
import type * as keys from "../keys.js";
import type * as kick from "../kick.js";
import type * as lib from "../lib.js";
import type * as logging from "../logging.js";
import type * as loop from "../loop.js";
import type * as model from "../model.js";
import type * as pass from "../pass.js";
import type * as payloads from "../payloads.js";
import type * as rateLimit from "../rateLimit.js";
import type * as recovery from "../recovery.js";
import type * as rerun from "../rerun.js";
import type * as retry from "../retry.js";
import type * as segments from "../segments.js";
import type * as start from "../start.js";
import type * as stats from "../stats.js";
import type * as sweep from "../sweep.js";
import type * as validate from "../validate.js";
import type * as watchdog from "../watchdog.js";
import type * as worker from "../worker.js";

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  cancel: typeof cancel;
  complete: typeof complete;
  config: typeof config;
  dedupe: typeof dedupe;
  deliver: typeof deliver;
  enqueue: typeof enqueue;
  errors: typeof errors;
  inspect: typeof inspect;
  jobStatus: typeof jobStatus;
  keyState: typeof keyState;
  keys: typeof keys;
  kick: typeof kick;
  lib: typeof lib;
  logging: typeof logging;
  loop: typeof loop;
  model: typeof model;
  pass: typeof pass;
  payloads: typeof payloads;
  rateLimit: typeof rateLimit;
  recovery: typeof recovery;
  rerun: typeof rerun;
  retry: typeof retry;
  segments: typeof segments;
  start: typeof start;
  stats: typeof stats;
  sweep: typeof sweep;
  validate: typeof validate;
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
