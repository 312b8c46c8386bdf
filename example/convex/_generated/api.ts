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
import type * as attempts from "../attempts.js";
import type * as deliveries from "../deliveries.js";
import type * as digests from "../digests.js";
import type * as emails from "../emails.js";
import type * as http from "../http.js";
import type * as imports from "../imports.js";
import type * as jobs from "../jobs.js";
import type * as llm from "../llm.js";
import type * as operators from "../operators.js";
import type * as pools from "../pools.js";
import type * as provider from "../provider.js";
import type * as scrape from "../scrape.js";
import type * as sim from "../sim.js";
import type * as workpoolAdmin from "../workpoolAdmin.js";

import type {
  ApiFromModules,
  FilterApi,
  FunctionReference,
} from "convex/server";
import { anyApi, componentsGeneric } from "convex/server";

const fullApi: ApiFromModules<{
  admin: typeof admin;
  attempts: typeof attempts;
  deliveries: typeof deliveries;
  digests: typeof digests;
  emails: typeof emails;
  http: typeof http;
  imports: typeof imports;
  jobs: typeof jobs;
  llm: typeof llm;
  operators: typeof operators;
  pools: typeof pools;
  provider: typeof provider;
  scrape: typeof scrape;
  sim: typeof sim;
  workpoolAdmin: typeof workpoolAdmin;
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

export const components = componentsGeneric() as unknown as {
  emailPool: import("convex-workpool/_generated/component.js").ComponentApi<"emailPool">;
  scrapePool: import("convex-workpool/_generated/component.js").ComponentApi<"scrapePool">;
  llmPool: import("convex-workpool/_generated/component.js").ComponentApi<"llmPool">;
};
