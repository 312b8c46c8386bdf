// The bench app's schedules (API-EXTENSIONS §10), on our pool only (the peer has none): each time
// enqueues jobs.quick, a mutation that does nothing but record that it ran.
import { mutationGeneric, queryGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool } from "../../src/client/index.js";
import { api, components } from "./_generated/api.js";

/** Schedules `names.length` schedules, one per name, every `everyMs` from `startAt` (or from
 * now). */
export const schedule = mutationGeneric({
  args: { names: v.array(v.string()), everyMs: v.number(), startAt: v.optional(v.number()) },
  handler: async (ctx, { names, everyMs, startAt }) => {
    const pool = new Workpool(components.ours, { maxParallelism: 10 });
    for (const name of names) {
      await pool.scheduleMutation(ctx, name, api.jobs.quick, { key: name }, { everyMs, startAt });
    }
    return null;
  },
});

/** A page of up to 1,000 schedules, by name. */
export const list = queryGeneric({
  args: { cursor: v.union(v.string(), v.null()) },
  handler: async (ctx, { cursor }) =>
    await new Workpool(components.ours, {}).listSchedules(ctx, {
      paginationOpts: { numItems: 1000, cursor },
    }),
});
