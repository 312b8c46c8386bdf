// The test app's jobs: user code the pool runs, with behavior chosen by arguments.
import {
  actionGeneric,
  mutationGeneric,
  queryGeneric,
  internalMutationGeneric,
} from "convex/server";
import { ConvexError, v, type Value } from "convex/values";
import { NonRetryableError as PeerNonRetryableError } from "@convex-dev/workpool";
import { NonRetryableError, SnoozeError } from "../../src/client/index.js";
import { probe } from "./probe.js";

const vBehavior = {
  key: v.string(),
  /** How long the job runs (virtual ms). */
  ms: v.optional(v.number()),
  /** The first `failTimes` attempts throw. */
  failTimes: v.optional(v.number()),
  /** Throw NonRetryableError instead of a plain error. */
  nonRetryable: v.optional(v.boolean()),
  /** With `nonRetryable`: throw @convex-dev/workpool's NonRetryableError, or a ConvexError built
   * by hand in its wire form, instead of ours. */
  nonRetryableForm: v.optional(v.union(v.literal("peer"), v.literal("wire"))),
  /** Pad a failure's message to this many bytes (an HTTP body in an error, say). */
  errorBytes: v.optional(v.number()),
  /** A failure throws `new ConvexError(errorData)` instead of a plain error (not with
   * `nonRetryable`). */
  errorData: v.optional(v.any()),
  /** A failure throws a plain Error carrying the peer's non-retryable marker as its own property. */
  markedError: v.optional(v.boolean()),
  /** The first `snoozeTimes` runs throw SnoozeError(snoozeMs) (before any failure is counted). */
  snoozeTimes: v.optional(v.number()),
  snoozeMs: v.optional(v.number()),
  value: v.optional(v.any()),
  /** Return a string of this many bytes instead of `value`. */
  returnBytes: v.optional(v.number()),
  /** Return a value this many arrays deep instead of `value`: [[…[0]…]]. */
  returnDepth: v.optional(v.number()),
  /** Ignored: makes the arguments as large as wanted. */
  pad: v.optional(v.string()),
};

/** A value `depth` arrays deep: [[…[0]…]] (a parsed document, a tree). */
export function nestedArrays(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

type Behavior = {
  failTimes?: number;
  nonRetryable?: boolean;
  nonRetryableForm?: "peer" | "wire";
  errorBytes?: number;
  errorData?: unknown;
  markedError?: boolean;
  snoozeTimes?: number;
  snoozeMs?: number;
};

/** Run `run` (1-based) snoozes, fails or goes on, as the behavior says. */
function maybeFail(key: string, run: number, behavior: Behavior) {
  const { failTimes, nonRetryable, nonRetryableForm, errorBytes } = behavior;
  const { snoozeTimes = 0, snoozeMs = 0 } = behavior;
  if (run <= snoozeTimes) throw new SnoozeError(snoozeMs);
  const attempt = run - snoozeTimes;
  if (attempt <= (failTimes ?? 0)) {
    const said = `job ${key} failed attempt ${attempt}`;
    const message = said.padEnd(errorBytes ?? 0, ".");
    if (behavior.errorData !== undefined) throw new ConvexError(behavior.errorData as Value);
    if (behavior.markedError) {
      throw Object.assign(new Error(message), { __convexWorkpoolNonRetryable: true });
    }
    if (!nonRetryable) throw new Error(message);
    if (nonRetryableForm === "peer") throw new PeerNonRetryableError(message);
    if (nonRetryableForm === "wire") {
      throw new ConvexError({ __convexWorkpoolNonRetryable: true, message });
    }
    throw new NonRetryableError(message);
  }
}

export const action = actionGeneric({
  args: vBehavior,
  handler: async (_ctx, { key, ms, value, returnBytes, returnDepth, ...behavior }) => {
    const run = probe.enter(key);
    try {
      if (ms) await new Promise((resolve) => setTimeout(resolve, ms));
      maybeFail(key, run, behavior);
      if (returnBytes !== undefined) return "r".repeat(returnBytes);
      if (returnDepth !== undefined) return nestedArrays(returnDepth);
      return value ?? key;
    } finally {
      probe.exit(key);
    }
  },
});

export const mutation = mutationGeneric({
  args: vBehavior,
  handler: async (ctx, { key, value, ...behavior }) => {
    const run = probe.enter(key);
    try {
      await ctx.db.insert("effects", { key, value: value ?? null });
      maybeFail(key, run, behavior);
      return value ?? key;
    } finally {
      probe.exit(key);
    }
  },
});

export const query = queryGeneric({
  args: vBehavior,
  handler: async (
    _ctx,
    { key, value, returnDepth, failTimes, snoozeTimes, snoozeMs, errorData },
  ) => {
    const run = probe.enter(key);
    try {
      maybeFail(key, run, { failTimes, snoozeTimes, snoozeMs, errorData });
      if (returnDepth !== undefined) return nestedArrays(returnDepth);
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
