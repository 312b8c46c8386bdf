/* eslint-disable */
/**
 * Generated `api` utility (hand-written in codegen shape, as `npx convex dev` would generate it).
 * @module
 */

import type * as calibrate from "../calibrate.js";
import type * as jobs from "../jobs.js";
import type * as pools from "../pools.js";
import type * as probe from "../probe.js";
import type * as schedules from "../schedules.js";
import type * as tasks from "../tasks.js";

import type { ApiFromModules, FilterApi, FunctionReference } from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  calibrate: typeof calibrate;
  jobs: typeof jobs;
  pools: typeof pools;
  probe: typeof probe;
  schedules: typeof schedules;
  tasks: typeof tasks;
}> = anyApi as any;

export const api: FilterApi<typeof fullApi, FunctionReference<any, "public">> = anyApi as any;

export const internal: FilterApi<typeof fullApi, FunctionReference<any, "internal">> = anyApi as any;

export const components = componentsGeneric() as unknown as {
  ours: import("../../../src/component/_generated/component.js").ComponentApi<"ours">;
  peer: import("@convex-dev/workpool/_generated/component.js").ComponentApi<"peer">;
};
