// The bench app's use of a pool, through the public client API only. The same code drives our
// component (installed as "ours", client from src/client) or @convex-dev/workpool (installed as
// "peer", its own client): `side` picks which. Only ours has keys (the `key` enqueue option),
// priorities (`priority`) and a rate limit (the pool's `rateLimit` option).
import { mutationGeneric, type FunctionReference } from "convex/server";
import { v } from "convex/values";
import { Workpool as PeerWorkpool } from "@convex-dev/workpool";
import {
  Workpool as OurWorkpool,
  vLogLevel,
  vRateLimit,
  type LogLevel,
  type OnCompleteArgs,
  type RateLimit,
} from "../../src/client/index.js";
import { api, components, internal } from "./_generated/api.js";
import { probe } from "./probe.js";

/** jobs.onComplete as both clients type an onComplete: its validator takes `context` as optional
 * (no job here has one), which the clients' types spell as a required `context: any`. */
const onComplete = internal.jobs.onComplete as FunctionReference<
  "mutation",
  "internal",
  OnCompleteArgs
>;

const vSide = v.union(v.literal("ours"), v.literal("peer"));
const vRetry = v.optional(
  v.object({ maxAttempts: v.number(), initialBackoffMs: v.number(), base: v.number() }),
);

const vPriority = v.union(v.literal("high"), v.literal("normal"), v.literal("low"));

/** Our pool's options beyond maxParallelism (the peer has none of them). */
type OurOptions = { keyParallelism?: number; rateLimit?: RateLimit; logLevel?: LogLevel };

function pool(side: "ours" | "peer", maxParallelism: number, options: OurOptions = {}) {
  if (side === "ours") return new OurWorkpool(components.ours, { maxParallelism, ...options });
  for (const [name, value] of Object.entries(options))
    if (value !== undefined) throw new Error(`the peer has no ${name}`);
  return new PeerWorkpool(components.peer, { maxParallelism });
}

/** Enqueues one job per key, one client call each (the common way apps enqueue). `keys` name the
 * jobs (the harness's own); `poolKeys`, when given, are the pool's `key` option of each job;
 * `priority`, when given, is every job's `priority` option. */
export const enqueue = mutationGeneric({
  args: {
    side: vSide,
    maxParallelism: v.number(),
    keyParallelism: v.optional(v.number()),
    rateLimit: v.optional(vRateLimit),
    logLevel: v.optional(vLogLevel),
    kind: v.union(v.literal("action"), v.literal("mutation")),
    keys: v.array(v.string()),
    poolKeys: v.optional(v.array(v.string())),
    priority: v.optional(vPriority),
    ms: v.number(),
    failTimes: v.number(),
    retry: vRetry,
    runAfter: v.optional(v.number()),
  },
  handler: async (ctx, args) => {
    const { side, kind, keys, poolKeys, priority, ms, failTimes, retry, runAfter } = args;
    if ((poolKeys || priority) && side !== "ours")
      throw new Error("the peer has no keys or priority");
    const { keyParallelism, rateLimit, logLevel } = args;
    const p = pool(side, args.maxParallelism, { keyParallelism, rateLimit, logLevel });
    const ids: string[] = [];
    for (const [i, key] of keys.entries()) {
      probe.enqueuedAt.set(key, Date.now());
      const poolKey = poolKeys?.[i];
      if (poolKey !== undefined) probe.poolKeyOf.set(key, poolKey);
      if (priority !== undefined) probe.priorityOf.set(key, priority);
      const options = {
        onComplete,
        runAfter,
        ...(poolKey === undefined ? {} : { key: poolKey }),
        ...(priority === undefined ? {} : { priority }),
      };
      if (kind === "action") {
        ids.push(
          await p.enqueueAction(
            ctx,
            api.jobs.work,
            { key, ms, failTimes },
            { ...options, retry: retry ?? false },
          ),
        );
      } else {
        ids.push(await p.enqueueMutation(ctx, api.jobs.quick, { key }, options));
      }
    }
    return ids;
  },
});

export const cancelAll = mutationGeneric({
  args: { side: vSide, maxParallelism: v.number() },
  handler: async (ctx, { side, maxParallelism }) => {
    await pool(side, maxParallelism).cancelAll(ctx);
  },
});
