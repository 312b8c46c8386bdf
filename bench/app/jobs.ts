// The bench app's jobs: user code either pool runs. Same code for both pools.
import { actionGeneric, internalMutationGeneric, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { probe } from "./probe.js";

/** An action that works `ms` virtual milliseconds; its first `failTimes` attempts throw. */
export const work = actionGeneric({
  args: { key: v.string(), ms: v.number(), failTimes: v.number() },
  handler: async (_ctx, { key, ms, failTimes }) => {
    const { attempt, record } = probe.enter(key);
    try {
      if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
      if (attempt <= failTimes) throw new Error(`job ${key}: attempt ${attempt} fails`);
      return null;
    } finally {
      probe.exit(record);
    }
  },
});

/** A mutation that does nothing but record that it ran. */
export const quick = mutationGeneric({
  args: { key: v.string() },
  handler: async (_ctx, { key }) => {
    const { record } = probe.enter(key);
    probe.exit(record);
    return null;
  },
});

/** onComplete: one row per call. */
export const onComplete = internalMutationGeneric({
  args: { workId: v.string(), context: v.optional(v.any()), result: v.any() },
  handler: async (ctx, { workId, result }) => {
    probe.onCompleteCalls++;
    await ctx.db.insert("completions", { workId, kind: result.kind, at: Date.now() });
  },
});
