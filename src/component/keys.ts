/**
 * Keys and pause, the callers' side: `keyStatus` (a key's progress), `setKeyParallelism`, and
 * `pause` / `resume` of the pool or of one key. Settings are stored apart from what the loop counts
 * (keySettings, config.paused), so they outlive deploys and whatever options clients pass. A change
 * that may let a key's queue move lists the key in `keyReady` and wakes the loop; the loop checks
 * the key before it starts anything. Never starts or finishes work, and never writes the loop's
 * counts.
 */
import { v } from "convex/values";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, query, type DatabaseReader, type MutationCtx } from "./_generated/server.js";
import { applyConfig, readConfig } from "./config.js";
import { claimSegment } from "./api/kick.js";
import { keyLedgerTotals } from "./api/keyLedger.js";
import { validateKey, validateKeyParallelism } from "./model/validate.js";
import { vKeyStatus, type KeyStatus } from "./model/validators.js";

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
    return await keyStatusOf(
      ctx.db,
      key,
      state,
      async () => (await readConfig(ctx.db)).keyParallelism,
    );
  },
});

/** `keyStatus` of a key whose `keyState` row (or null) was read: its ledger's rows and its
 * settings' row more; the pool's keyParallelism only when the key has no limit of its own. */
export async function keyStatusOf(
  db: DatabaseReader,
  key: string,
  state: Doc<"keyState"> | null,
  poolKeyParallelism: () => Promise<number>,
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
    parallelism: settings?.parallelism ?? (await poolKeyParallelism()),
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

type KeySettings = Pick<Doc<"keySettings">, "parallelism" | "paused">;

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
  const before: KeySettings = { parallelism: row?.parallelism, paused: row?.paused };
  const after: KeySettings = { ...before, ...change };
  if (after.parallelism === before.parallelism && after.paused === before.paused) return;
  const empty = after.parallelism === undefined && after.paused === undefined;
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
