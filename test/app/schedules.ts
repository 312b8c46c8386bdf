// The test app's use of schedules (API-EXTENSIONS §10): each function is one pool method, called
// from an app mutation or query as an app would.
import { anyApi, mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool } from "../../src/client/index.js";
import { components, onCompleteRef } from "./pool.js";

function pool(options: any) {
  return new Workpool(components.workpool, options ?? {});
}

/** Schedules `jobs.<kind>` with `args` under `name`; `onComplete` names an app mutation. */
export const schedule = mutationGeneric({
  args: {
    kind: v.union(v.literal("action"), v.literal("mutation"), v.literal("query")),
    name: v.string(),
    args: v.any(),
    options: v.any(),
    onComplete: v.optional(v.string()),
    poolOptions: v.optional(v.any()),
  },
  handler: async (ctx, { kind, name, args, options, onComplete, poolOptions }) => {
    const p = pool(poolOptions);
    const opts = { ...options, onComplete: onCompleteRef(onComplete) };
    if (kind === "action") return await p.scheduleAction(ctx, name, anyApi.jobs.action, args, opts);
    if (kind === "mutation") {
      return await p.scheduleMutation(ctx, name, anyApi.jobs.mutation, args, opts);
    }
    return await p.scheduleQuery(ctx, name, anyApi.jobs.query, args, opts);
  },
});

/** pauseSchedule, resumeSchedule, unschedule or runScheduleNow, by name. */
export const act = mutationGeneric({
  args: {
    method: v.union(
      v.literal("pauseSchedule"),
      v.literal("resumeSchedule"),
      v.literal("unschedule"),
      v.literal("runScheduleNow"),
    ),
    name: v.string(),
  },
  handler: async (ctx, { method, name }) => await pool({})[method](ctx, name),
});

export const get = queryGeneric({
  args: { name: v.string() },
  handler: async (ctx, { name }) => await pool({}).getSchedule(ctx, name),
});

export const list = queryGeneric({
  args: { numItems: v.number(), cursor: v.union(v.string(), v.null()) },
  handler: async (ctx, { numItems, cursor }) =>
    await pool({}).listSchedules(ctx, { paginationOpts: { numItems, cursor } }),
});
