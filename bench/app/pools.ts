// The bench app's use of a pool, through the public client API only. The same code drives our
// component (installed as "ours", client from src/client) or @convex-dev/workpool (installed as
// "peer", its own client): `side` picks which. Only ours has keys (the `key` enqueue option),
// priorities (`priority`), a rate limit (the pool's `rateLimit` option), fair share (the pool's
// `fairness` option) and executors (`tasks`: the jobs are tasks of tasks.run).
import {
  mutationGeneric,
  type FunctionReference,
  type GenericDataModel,
  type GenericMutationCtx,
} from "convex/server";
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
import { vFairness, type Fairness } from "../../src/component/model/validators.js";
import { api, components, internal } from "./_generated/api.js";
import { probe } from "./probe.js";

/** jobs.onComplete as both clients type an onComplete: its validator takes `context` as optional
 * (no job here has one), which the clients' types spell as a required `context: any`. */
const onComplete = internal.jobs.onComplete as FunctionReference<
  "mutation",
  "internal",
  OnCompleteArgs
>;

/** The bench's executor, as the app's generated `internal` types it (with its tasks). */
const executor = internal.tasks.run;

const vSide = v.union(v.literal("ours"), v.literal("peer"));
const vRetry = v.optional(
  v.object({ maxAttempts: v.number(), initialBackoffMs: v.number(), base: v.number() }),
);

type Retry = { maxAttempts: number; initialBackoffMs: number; base: number };

const vPriority = v.union(v.literal("high"), v.literal("normal"), v.literal("low"));

/** Our pool's options beyond maxParallelism (the peer has none of them). */
type OurOptions = {
  keyParallelism?: number;
  rateLimit?: RateLimit;
  logLevel?: LogLevel;
  fairness?: Fairness;
};

function pool(side: "ours" | "peer", maxParallelism: number, options: OurOptions = {}) {
  if (side === "ours") return new OurWorkpool(components.ours, { maxParallelism, ...options });
  for (const [name, value] of Object.entries(options))
    if (value !== undefined) throw new Error(`the peer has no ${name}`);
  return new PeerWorkpool(components.peer, { maxParallelism });
}

/** Enqueues one job per key, one client call each (the common way apps enqueue), or all in one
 * batch call (`batch`: enqueueActionBatch, or enqueueTaskBatch with `tasks`). `keys` name the
 * jobs (the harness's own); `poolKeys`, when given, are the pool's `key` option of each job;
 * `tenants`, when given, each job's tenant, a label the probe records on either pool;
 * `priority`, when given, is every job's `priority` option; `tasks` makes the jobs `io` tasks of
 * the executor tasks.run instead of jobs.work actions (ours only). */
export const enqueue = mutationGeneric({
  args: {
    side: vSide,
    maxParallelism: v.number(),
    keyParallelism: v.optional(v.number()),
    rateLimit: v.optional(vRateLimit),
    logLevel: v.optional(vLogLevel),
    fairness: v.optional(vFairness),
    kind: v.union(v.literal("action"), v.literal("mutation")),
    keys: v.array(v.string()),
    poolKeys: v.optional(v.array(v.string())),
    priority: v.optional(vPriority),
    tenants: v.optional(v.array(v.string())),
    ms: v.number(),
    failTimes: v.number(),
    retry: vRetry,
    runAfter: v.optional(v.number()),
    batch: v.optional(v.boolean()),
    tasks: v.optional(v.boolean()),
  },
  handler: async (ctx, args) => {
    const { side, kind, keys, poolKeys, priority, ms, failTimes, retry, runAfter } = args;
    if ((poolKeys || priority || args.tasks) && side !== "ours")
      throw new Error("the peer has no keys, priority or executors");
    const { keyParallelism, rateLimit, logLevel, fairness, tenants } = args;
    const p = pool(side, args.maxParallelism, { keyParallelism, rateLimit, logLevel, fairness });
    if (args.batch || args.tasks) {
      if (kind !== "action" || poolKeys || priority || tenants || failTimes > 0)
        throw new Error("batches and tasks are enqueued here as plain actions only");
      return await enqueueActionsOrTasks(ctx, p, keys, {
        ms,
        batch: args.batch ?? false,
        tasks: args.tasks ?? false,
        options: { onComplete, runAfter, retry: retry ?? false },
      });
    }
    const ids: string[] = [];
    for (const [i, key] of keys.entries()) {
      probe.enqueuedAt.set(key, Date.now());
      const poolKey = poolKeys?.[i];
      if (poolKey !== undefined) probe.poolKeyOf.set(key, poolKey);
      if (priority !== undefined) probe.priorityOf.set(key, priority);
      if (tenants !== undefined) probe.tenantOf.set(key, tenants[i]);
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

/** Enqueues a jobs.work action, or an `io` task of tasks.run, per key: in one batch call, or one
 * call each. */
async function enqueueActionsOrTasks(
  ctx: GenericMutationCtx<GenericDataModel>,
  p: ReturnType<typeof pool>,
  keys: string[],
  how: {
    ms: number;
    batch: boolean;
    tasks: boolean;
    options: { onComplete: typeof onComplete; runAfter?: number; retry: Retry | false };
  },
): Promise<string[]> {
  const { ms, batch, tasks, options } = how;
  for (const key of keys) probe.enqueuedAt.set(key, Date.now());
  if (tasks) {
    if (!(p instanceof OurWorkpool)) throw new Error("the peer has no executors");
    const argsList = keys.map((key) => ({ key, ms }));
    if (batch) return await p.enqueueTaskBatch(ctx, executor, "io", argsList, options);
    const ids: string[] = [];
    for (const args of argsList) ids.push(await p.enqueueTask(ctx, executor, "io", args, options));
    return ids;
  }
  const argsList = keys.map((key) => ({ key, ms, failTimes: 0 }));
  if (batch) return await p.enqueueActionBatch(ctx, api.jobs.work, argsList, options);
  const ids: string[] = [];
  for (const args of argsList) ids.push(await p.enqueueAction(ctx, api.jobs.work, args, options));
  return ids;
}

/** Sets each key's share (`pool.setKeyShare`), one client call each (ours only: the peer has
 * none). */
export const setShares = mutationGeneric({
  args: {
    maxParallelism: v.number(),
    shares: v.array(v.object({ key: v.string(), weight: v.number() })),
  },
  handler: async (ctx, { maxParallelism, shares }) => {
    const p = pool("ours", maxParallelism);
    if (!(p instanceof OurWorkpool)) throw new Error("the peer has no key shares");
    for (const { key, weight } of shares) await p.setKeyShare(ctx, key, { weight });
  },
});

export const cancelAll = mutationGeneric({
  args: { side: vSide, maxParallelism: v.number() },
  handler: async (ctx, { side, maxParallelism }) => {
    await pool(side, maxParallelism).cancelAll(ctx);
  },
});
