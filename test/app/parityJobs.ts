// Parity fixture, part 1: a peer app's jobs and onComplete handlers, written only against the exports
// of @convex-dev/workpool 0.4.16 but importing this package. test/parityTypes.test.ts compiles this
// file and parity.ts a second time with the import pointed at the peer; test/parity.test.ts runs them.
import {
  componentsGeneric,
  internalActionGeneric,
  internalMutationGeneric,
  internalQueryGeneric,
} from "convex/server";
import { v } from "convex/values";
import {
  DEFAULT_RETRY_BEHAVIOR,
  NonRetryableError,
  Workpool,
  isNonRetryableError,
  vOnComplete,
  vOnCompleteArgs,
  vOnCompleteValidator,
  vRunResult,
  vWorkIdValidator,
  type LogLevel,
  type OnCompleteArgs,
  type RetryBehavior,
  type RunResult,
  type WorkpoolComponent,
  type WorkpoolOptions,
  type WorkpoolRetryOptions,
} from "../../src/client/index.js";

/** As an app's `_generated/api` gives it. */
export const components = componentsGeneric() as unknown as { workpool: WorkpoolComponent };

const fastRetry: RetryBehavior = { ...DEFAULT_RETRY_BEHAVIOR, initialBackoffMs: 10 };
const retryOptions: WorkpoolRetryOptions = {
  defaultRetryBehavior: fastRetry,
  retryActionsByDefault: false,
};
const logLevel: LogLevel = "WARN";
const options: WorkpoolOptions = { maxParallelism: 4, logLevel, ...retryOptions };

/** The app's pool, with every option the peer has. */
export const pool = new Workpool(components.workpool, options);

/** Doubles `n`; a negative `n` fails without retries. */
export const double = internalActionGeneric({
  args: { n: v.number() },
  handler: async (_ctx, { n }): Promise<number> => {
    if (n < 0) {
      const error = new NonRetryableError(`negative: ${n}`);
      if (!isNonRetryableError(error)) throw new Error("isNonRetryableError disagrees");
      throw error;
    }
    return n * 2;
  },
});

/** Writes an effect and returns a label. */
export const label = internalMutationGeneric({
  args: { n: v.number() },
  handler: async (ctx, { n }): Promise<string> => {
    await ctx.db.insert("effects", { key: `label${n}`, value: n });
    return `n=${n}`;
  },
});

/** Reads nothing; returns an object. */
export const lookup = internalQueryGeneric({
  args: { n: v.number() },
  handler: async (_ctx, { n }): Promise<{ n: number; half: number }> => ({ n, half: n / 2 }),
});

/** onComplete through `defineOnComplete`, with a typed context and return value. */
export const doubled = pool.defineOnComplete({
  context: v.object({ label: v.string() }),
  returnValue: v.number(),
  handler: async (ctx, { workId, context, result }) => {
    const typed: RunResult<number> = result;
    const returned: number | null = typed.kind === "success" ? typed.returnValue : null;
    await ctx.db.insert("completions", {
      workId,
      context: { via: "defineOnComplete", ...context, returned },
      result,
    });
  },
});

/** A hand-written onComplete: `vOnCompleteArgs(context, returnValue)`. */
export const labeled = internalMutationGeneric({
  args: vOnCompleteArgs(v.string(), v.string()),
  handler: async (ctx, args) => {
    const typed: OnCompleteArgs<string, string> = args;
    await ctx.db.insert("completions", {
      workId: typed.workId,
      context: { via: "vOnCompleteArgs", context: typed.context },
      result: typed.result,
    });
  },
});

/** A hand-written onComplete taking any context: `vOnComplete`. */
export const anything = internalMutationGeneric({
  args: vOnComplete,
  handler: async (ctx, { workId, context, result }) => {
    await ctx.db.insert("completions", {
      workId,
      context: { via: "vOnComplete", context },
      result,
    });
  },
});

/** A hand-written onComplete with the older validator name. */
export const legacy = internalMutationGeneric({
  args: vOnCompleteValidator(v.number()),
  handler: async (ctx, { workId, context, result }) => {
    await ctx.db.insert("completions", {
      workId,
      context: { via: "vOnCompleteValidator", context },
      result,
    });
  },
});

/** A hand-written onComplete spelling out its validator with `vRunResult`. */
export const spelledOut = internalMutationGeneric({
  args: { workId: vWorkIdValidator, context: v.any(), result: vRunResult(v.number()) },
  handler: async (ctx, { workId, context, result }) => {
    await ctx.db.insert("completions", {
      workId,
      context: { via: "vRunResult", context },
      result,
    });
  },
});
