/**
 * Keys and pause, the callers' side: `keyStatus` (a key's progress), `setKeyParallelism`,
 * `setKeyShare`, `setKeyRateLimit`, and `pause` / `resume` of the pool or of one key. Settings are stored apart from what the loop counts
 * (keySettings, config.paused), so they outlive deploys and whatever options clients pass. A change
 * that may let a key's queue move lists the key in `keyReady` and wakes the loop; the loop checks
 * the key before it starts anything. Never starts or finishes work, and never writes the loop's
 * counts.
 */
import { v } from "convex/values";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseReader, type MutationCtx } from "./_generated/server.js";
import { applyConfig, readConfig, type Config } from "./config.js";
import { claimSegment } from "./api/kick.js";
import { keyLedgerTotals } from "./api/keyLedger.js";
import {
  validateKey,
  validateKeyParallelism,
  validateKeyRateLimit,
  validateKeyShare,
} from "./model/validate.js";
import { vKeyShare, vKeyStatus, vRateLimit, type KeyStatus } from "./model/validators.js";

/** What `keyStatus` returns (the validator lives with the job model's). */
export { vKeyStatus };

/** A key's progress, from two single-row reads and its ledger's rows (at most one per shard): its
 * cost does not grow with its backlog. */
export const keyStatus = query({
  args: { key: v.string() },
  returns: vKeyStatus,
  handler: async (ctx, { key }) => {
    validateKey(key);
    const state = await ctx.db
      .query("keyState")
      .withIndex("by_key", (q) => q.eq("key", key))
      .first();
    return await keyStatusOf(ctx.db, key, state, () => readConfig(ctx.db));
  },
});

/** `keyStatus` of a key whose `keyState` row (or null) was read: its ledger's rows and its
 * settings' row more; the pool's config only when the key lacks a setting of its own. */
export async function keyStatusOf(
  db: DatabaseReader,
  key: string,
  state: Doc<"keyState"> | null,
  poolConfig: () => Promise<Config>,
): Promise<KeyStatus> {
  const [ledger, settings] = await Promise.all([
    keyLedgerTotals(db, key),
    db
      .query("keySettings")
      .withIndex("by_key", (q) => q.eq("key", key))
      .first(),
  ]);
  const finished = {
    succeeded: state?.succeeded ?? 0,
    failed: state?.failed ?? 0,
    canceled: state?.canceled ?? 0,
  };
  const running = state?.running ?? 0;
  const everFinished = finished.succeeded + finished.failed + finished.canceled;
  return {
    pending: (ledger?.enqueued ?? 0) - everFinished - running,
    running,
    succeeded: finished.succeeded - (ledger?.sweptSucceeded ?? 0),
    failed: finished.failed - (ledger?.sweptFailed ?? 0),
    canceled: finished.canceled - (ledger?.sweptCanceled ?? 0),
    paused: settings?.paused ?? false,
    parallelism: settings?.parallelism ?? (await poolConfig()).keyParallelism,
    weight: settings?.weight ?? 1,
    reserve: settings?.reserve ?? 0,
    rateLimit:
      settings?.rateLimit === false
        ? null
        : (settings?.rateLimit ?? (await poolConfig()).keyRateLimit ?? null),
  };
}

/** Sets one key's limit (`null`: back to the pool's keyParallelism). Lowering it lets running
 * jobs finish (and their retries run) and starts none of the key's jobs until it has room. */
export const setKeyParallelism = mutation({
  args: { key: v.string(), parallelism: v.union(v.number(), v.null()) },
  returns: v.null(),
  handler: async (ctx, { key, parallelism }) => {
    validateKey(key);
    if (parallelism !== null) validateKeyParallelism(parallelism, "parallelism");
    await changeKeySettings(ctx, key, { parallelism: parallelism ?? undefined });
    return null;
  },
});

/** Sets one key's weight and reserve (API-EXTENSIONS section 13): a field left out keeps its
 * value, `null` restores both defaults (weight 1, reserve 0). */
export const setKeyShare = mutation({
  args: { key: v.string(), share: v.union(vKeyShare, v.null()) },
  returns: v.null(),
  handler: async (ctx, { key, share }) => {
    validateKey(key);
    validateKeyShare(share);
    const change =
      share === null
        ? { weight: undefined, reserve: undefined }
        : {
            ...("weight" in share && share.weight !== undefined
              ? { weight: share.weight === 1 ? undefined : share.weight }
              : {}),
            ...("reserve" in share && share.reserve !== undefined
              ? { reserve: share.reserve === 0 ? undefined : share.reserve }
              : {}),
          };
    await changeKeySettings(ctx, key, change);
    return null;
  },
});

/** Sets one key's rate limit (section 13): its own `{ starts, periodMs }`, `false` to exempt it
 * from the pool's keyRateLimit, or `null` to follow that default again. */
export const setKeyRateLimit = mutation({
  args: { key: v.string(), rateLimit: v.union(vRateLimit, v.literal(false), v.null()) },
  returns: v.null(),
  handler: async (ctx, { key, rateLimit }) => {
    validateKey(key);
    validateKeyRateLimit(rateLimit);
    await changeKeySettings(ctx, key, { rateLimit: rateLimit ?? undefined });
    return null;
  },
});

/** Pauses the pool, or one key: no attempt starts (retries included) until `resume`. Running jobs
 * finish and report; enqueue, cancel and status keep working. Pausing twice is one pause. */
export const pause = mutation({
  args: { key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { key }) => {
    if (key === undefined) await applyConfig(ctx, { paused: true });
    else {
      validateKey(key);
      await changeKeySettings(ctx, key, { paused: true });
    }
    return null;
  },
});

/** Ends a pause of the pool, or of one key (one resume ends any number of pauses). */
export const resume = mutation({
  args: { key: v.optional(v.string()) },
  returns: v.null(),
  handler: async (ctx, { key }) => {
    if (key === undefined) {
      if (await applyConfig(ctx, { paused: false })) await claimSegment(ctx);
    } else {
      validateKey(key);
      await changeKeySettings(ctx, key, { paused: undefined });
    }
    return null;
  },
});

type KeySettings = Omit<Doc<"keySettings">, "_id" | "_creationTime" | "key">;
const SETTING_FIELDS = ["parallelism", "paused", "weight", "reserve", "rateLimit"] as const;

/**
 * Writes a key's settings (a field set to undefined returns to its default; a row left with no
 * settings is deleted) when they change, and lists the key as ready when its queue has a head,
 * waking the loop: a higher limit or a resume may let it start.
 */
async function changeKeySettings(
  ctx: MutationCtx,
  key: string,
  change: Partial<KeySettings>,
): Promise<void> {
  const row = await ctx.db
    .query("keySettings")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  const before: KeySettings = {};
  for (const field of SETTING_FIELDS) {
    if (row?.[field] !== undefined) Object.assign(before, { [field]: row[field] });
  }
  const after: KeySettings = { ...before, ...change };
  for (const field of SETTING_FIELDS) if (after[field] === undefined) delete after[field];
  if (SETTING_FIELDS.every((f) => JSON.stringify(after[f]) === JSON.stringify(before[f]))) return;
  const empty = SETTING_FIELDS.every((field) => after[field] === undefined);
  if (row && empty) await ctx.db.delete("keySettings", row._id);
  else if (row) await ctx.db.replace("keySettings", row._id, { key, ...after });
  else await ctx.db.insert("keySettings", { key, ...after });
  if (after.paused) return;
  const head = await ctx.db
    .query("keyQueue")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  if (head === null) return;
  const listed = await ctx.db
    .query("keyReady")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  // Listed at its head's level, as the loop lists a key (mainLoop/keyState.ts `markReady`).
  if (listed === null) {
    await ctx.db.insert("keyReady", { key, runAt: head.runAt, priority: head.priority });
  }
  await claimSegment(ctx);
}
