// The test app's jobs: user code the pool runs, with behavior chosen by arguments.
import {
  actionGeneric,
  mutationGeneric,
  queryGeneric,
  internalMutationGeneric,
} from "convex/server";
import { v } from "convex/values";
import { NonRetryableError } from "../../src/client/index.js";
import { probe } from "./probe.js";

const vBehavior = {
  key: v.string(),
  /** How long the job runs (virtual ms). */
  ms: v.optional(v.number()),
  /** The first `failTimes` attempts throw. */
  failTimes: v.optional(v.number()),
  /** Throw NonRetryableError instead of a plain error. */
  nonRetryable: v.optional(v.boolean()),
  value: v.optional(v.any()),
  /** Return a string of this many bytes instead of `value`. */
  returnBytes: v.optional(v.number()),
  /** Ignored: makes the arguments as large as wanted. */
  pad: v.optional(v.string()),
};

function maybeFail(key: string, attempt: number, failTimes?: number, nonRetryable?: boolean) {
  if (attempt <= (failTimes ?? 0)) {
    const message = `job ${key} failed attempt ${attempt}`;
    throw nonRetryable ? new NonRetryableError(message) : new Error(message);
  }
}

export const action = actionGeneric({
  args: vBehavior,
  handler: async (_ctx, { key, ms, failTimes, nonRetryable, value, returnBytes }) => {
    const attempt = probe.enter(key);
    try {
      if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
      maybeFail(key, attempt, failTimes, nonRetryable);
      if (returnBytes !== undefined) return "r".repeat(returnBytes);
      return value ?? key;
    } finally {
      probe.exit(key);
    }
  },
});

export const mutation = mutationGeneric({
  args: vBehavior,
  handler: async (ctx, { key, failTimes, nonRetryable, value }) => {
    const attempt = probe.enter(key);
    try {
      await ctx.db.insert("effects", { key, value: value ?? null });
      maybeFail(key, attempt, failTimes, nonRetryable);
      return value ?? key;
    } finally {
      probe.exit(key);
    }
  },
});

export const query = queryGeneric({
  args: vBehavior,
  handler: async (_ctx, { key, failTimes, value }) => {
    const attempt = probe.enter(key);
    try {
      maybeFail(key, attempt, failTimes);
      return value ?? key;
    } finally {
      probe.exit(key);
    }
  },
});

/** onComplete: records what it received. */
export const onComplete = internalMutationGeneric({
  args: { workId: v.string(), context: v.optional(v.any()), result: v.any() },
  handler: async (ctx, args) => {
    await ctx.db.insert("completions", args);
  },
});

/** onComplete that always throws (after writing, to show its writes roll back). */
export const onCompleteThrows = internalMutationGeneric({
  args: { workId: v.string(), context: v.optional(v.any()), result: v.any() },
  handler: async (ctx, args) => {
    await ctx.db.insert("completions", args);
    throw new Error("onComplete handler failed");
  },
});
