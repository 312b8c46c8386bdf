// The bench app's use of a pool, through the public client API only. The same code drives our
// component (installed as "ours", client from src/client) or @convex-dev/workpool (installed as
// "peer", its own client): `side` picks which.
import { mutationGeneric, type FunctionReference } from "convex/server";
import { v } from "convex/values";
import { Workpool as PeerWorkpool } from "@convex-dev/workpool";
import { Workpool as OurWorkpool, type OnCompleteArgs } from "../../src/client/index.js";
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

function pool(side: "ours" | "peer", maxParallelism: number) {
  return side === "ours"
    ? new OurWorkpool(components.ours, { maxParallelism })
    : new PeerWorkpool(components.peer, { maxParallelism });
}

/** Enqueues one job per key, one client call each (the common way apps enqueue). */
export const enqueue = mutationGeneric({
  args: {
    side: vSide,
    maxParallelism: v.number(),
    kind: v.union(v.literal("action"), v.literal("mutation")),
    keys: v.array(v.string()),
    ms: v.number(),
    failTimes: v.number(),
    retry: vRetry,
    runAfter: v.optional(v.number()),
  },
  handler: async (ctx, { side, maxParallelism, kind, keys, ms, failTimes, retry, runAfter }) => {
    const p = pool(side, maxParallelism);
    const ids: string[] = [];
    for (const key of keys) {
      probe.enqueuedAt.set(key, Date.now());
      const options = { onComplete, runAfter };
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
