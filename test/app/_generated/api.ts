/* eslint-disable */
/**
 * Generated `api` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type * as admin from "../admin.js";
import type * as brokenExecutors from "../brokenExecutors.js";
import type * as chaos from "../chaos.js";
import type * as groups from "../groups.js";
import type * as jobs from "../jobs.js";
import type * as pool from "../pool.js";
import type * as probe from "../probe.js";
import type * as schedules from "../schedules.js";
import type * as tasks from "../tasks.js";
import type * as waits from "../waits.js";

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  admin: typeof admin;
  brokenExecutors: typeof brokenExecutors;
  chaos: typeof chaos;
  groups: typeof groups;
  jobs: typeof jobs;
  pool: typeof pool;
  probe: typeof probe;
  schedules: typeof schedules;
  tasks: typeof tasks;
  waits: typeof waits;
}> = anyApi as any;

export const api: FilterApi<
  typeof fullApi,
  FunctionReference<any, "public">
> = anyApi as any;

export const internal: FilterApi<
  typeof fullApi,
  FunctionReference<any, "internal">
> = anyApi as any;

export const components = componentsGeneric() as unknown as {
  workpool: import("../../../src/component/_generated/component.js").ComponentApi<"workpool">;
};
