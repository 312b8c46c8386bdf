/**
 * The sweeper: deletes finished jobs once their status TTL has passed, with their payloads, in
 * bounded batches. Runs in its own transaction (scheduled by the loop) so that the loop never reads
 * payload rows. Each sweep covers the expiries between the previous sweep's cutoff and its own, so
 * neither it nor the loop walks the tombstones of rows swept before. Never touches an unfinished
 * job, nor a large one still waiting for its delivery (delivery deletes that one itself if it
 * expired meanwhile). Counts what it deleted in each key's ledger.
 */
import { v } from "convex/values";
import { internal } from "../_generated/api.js";
import type { Doc } from "../_generated/dataModel.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { forgetDedupeKeys } from "../api/dedupe.js";
import type { Pass } from "./pass.js";
import { budgetSpent, reachedShare } from "./passBudget.js";
import { keyLedgerRows, sumLedger } from "../api/keyLedger.js";
import { sweepGroups } from "./groups.js";

/** Finished jobs deleted per sweep transaction at most (a read and a write each, plus payloads). */
export const SWEEP_BATCH = 50;
/** A sweep stops once it used this fraction of any of Convex's limits (passBudget.ts measures:
 * bytes read, as payloads may be a megabyte each; documents written, as a large keyed job costs
 * five deletes and writes; index ranges) and goes on in a fresh transaction: a quarter, so that
 * the row it is on and the ledger and dedupe writes for the rows it swept fit in the rest. */
export const SWEEP_SHARE = 0.25;
/** The loop schedules a sweep at most this often; expired rows wait at most this long past TTL. */
export const SWEEP_INTERVAL_MS = 10_000;

export const sweep = internalMutation({
  args: {
    /** Expiries from this (inclusive; undefined: from the start)... */
    from: v.optional(v.number()),
    /** ...up to this (inclusive) are swept. */
    upTo: v.number(),
    /** Where in that range this sweep goes on (a page cursor); undefined: at its start. */
    cursor: v.optional(v.string()),
  },
  returns: v.null(),
  handler: async (ctx, { from, upTo, cursor }) => {
    const page = await ctx.db
      .query("work")
      .withIndex("by_expiresAt", (q) => q.gte("expiresAt", from ?? 0).lte("expiresAt", upTo))
      .paginate({ numItems: SWEEP_BATCH, cursor: cursor ?? null });
    // Done groups, once per sweep (its first page), a batch at a time (mainLoop/groups.ts).
    if (cursor === undefined) await sweepGroups(ctx, upTo);
    let stoppedEarly = false;
    const swept: Doc<"work">[] = [];
    for (const work of page.page) {
      // Only once a row was deleted, so that every sweep that stops early has made progress.
      if (swept.length > 0 && reachedShare(await ctx.meta.getTransactionMetrics(), SWEEP_SHARE)) {
        stoppedEarly = true;
        break;
      }
      // A large job waiting for its delivery is delivery's to delete (it checks the expiry).
      if (work.deliveryPending) continue;
      if (work.payloadId) await ctx.db.delete("payloads", work.payloadId);
      if (work.resultPayloadId) await ctx.db.delete("payloads", work.resultPayloadId);
      await ctx.db.delete("work", work._id);
      swept.push(work);
    }
    await countSwept(ctx, swept);
    await forgetDedupeKeys(ctx, swept);
    // Go on past this page, whatever it deleted: rows skipped for delivery must not end the chain
    // in front of expired rows behind them. Stopped on the budget, the same page is read again
    // (its deleted rows are gone, and it stops early only once it deleted one).
    const next = stoppedEarly ? cursor : page.isDone ? null : page.continueCursor;
    if (next !== null) {
      await ctx.scheduler.runAfter(0, internal.mainLoop.sweep.sweep, { from, upTo, cursor: next });
    }
    return null;
  },
});

type SweptCounts = { succeeded: number; failed: number; canceled: number };

/**
 * Counts deleted finished jobs in their keys' ledgers (`keyStatus` counts finished jobs while
 * retained). Called by whoever deletes a finished job: the sweeper, and delivery for a large job
 * that expired before it was delivered.
 */
export async function countSwept(ctx: MutationCtx, deleted: Doc<"work">[]): Promise<void> {
  const byKey = new Map<string, SweptCounts>();
  for (const work of deleted) {
    if (work.key === undefined || work.state.kind !== "finished") continue;
    const counts = byKey.get(work.key) ?? { succeeded: 0, failed: 0, canceled: 0 };
    counts[work.state.result.kind === "success" ? "succeeded" : work.state.result.kind]++;
    byKey.set(work.key, counts);
  }
  for (const [key, counts] of byKey) await countKeySwept(ctx, key, counts);
}

/** Adds to one key's swept counts; deletes the key's ledger and loop counts once every job the
 * key ever had was swept: the key is then as if never used (its settings, if any, stay). */
async function countKeySwept(ctx: MutationCtx, key: string, counts: SweptCounts): Promise<void> {
  const rows = await keyLedgerRows(ctx.db, key);
  if (rows.length === 0) return;
  const totals = sumLedger(rows);
  const swept = {
    sweptSucceeded: totals.sweptSucceeded + counts.succeeded,
    sweptFailed: totals.sweptFailed + counts.failed,
    sweptCanceled: totals.sweptCanceled + counts.canceled,
  };
  if (swept.sweptSucceeded + swept.sweptFailed + swept.sweptCanceled < totals.enqueued) {
    // The swept counts live on one row (the sweeper runs alone; enqueues write only `enqueued`).
    const [first] = rows;
    await ctx.db.patch("keyLedger", first._id, {
      sweptSucceeded: first.sweptSucceeded + counts.succeeded,
      sweptFailed: first.sweptFailed + counts.failed,
      sweptCanceled: first.sweptCanceled + counts.canceled,
    });
    return;
  }
  for (const row of rows) await ctx.db.delete("keyLedger", row._id);
  const state = await ctx.db
    .query("keyState")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  if (state) await ctx.db.delete("keyState", state._id);
}

/** The earliest expiry above the last sweep's cutoff, if any. */
export async function firstExpiry(pass: Pass): Promise<number | undefined> {
  const first = await pass.ctx.db
    .query("work")
    .withIndex("by_expiresAt", (q) => q.gt("expiresAt", pass.state.expiryCursor ?? -1))
    .first();
  return first?.expiresAt;
}

/** Loop stage: schedules a sweep when rows have expired and none was scheduled recently. */
export async function maybeScheduleSweep(pass: Pass, earliestExpiry: number | undefined) {
  if (earliestExpiry === undefined || earliestExpiry > pass.now) return;
  if (pass.now < pass.state.nextSweepAt) return;
  // No room for its schedule: the next pass (at once) schedules it.
  if (await budgetSpent(pass, "sweep", { functionsScheduled: 1 })) return;
  await pass.ctx.scheduler.runAfter(0, internal.mainLoop.sweep.sweep, {
    from: pass.state.expiryCursor,
    upTo: pass.now,
  });
  pass.state.expiryCursor = pass.now;
  pass.state.nextSweepAt = pass.now + SWEEP_INTERVAL_MS;
}
