// Emails whose job ends when the provider says the message was delivered (API-EXTENSIONS section
// 11, docs/waiting-for-webhooks.md): `send` writes the app's row and enqueues the hand-off with
// `manualCompletion`, storing the job's id on the row; `handOff` (the job) calls the provider and
// returns at once, and the job keeps its emailPool slot while the provider works; the provider's
// webhook (http.ts, /provider/events) runs `recordEvent`, which updates the row and completes the
// job in one transaction: both commit, or neither does. No callback within DELIVERY_TIMEOUT_MS
// fails the attempt, and emailPool retries it (a new hand-off).
import { v } from "convex/values";
import type { WorkId } from "convex-workpool";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation, internalQuery } from "./_generated/server.js";
import { emailPool } from "./pools.js";

/** How long a hand-off waits for the provider's webhook before it fails and is retried: ten
 * minutes, far beyond the provider's usual seconds, so that only a lost webhook times out. */
export const DELIVERY_TIMEOUT_MS = 10 * 60 * 1000;

/** Sends an email through the provider; returns the app's row id. */
export const send = internalMutation({
  args: { to: v.string() },
  returns: v.id("deliveries"),
  handler: async (ctx, { to }) => {
    const id = await ctx.db.insert("deliveries", { to, status: "sending" });
    const workId = await emailPool.enqueueAction(
      ctx,
      internal.deliveries.handOff,
      { deliveryId: id, to },
      { manualCompletion: { timeoutMs: DELIVERY_TIMEOUT_MS } },
    );
    // The job's id beside the app's own row, in the same transaction: the webhook finds it here.
    await ctx.db.patch("deliveries", id, { workId });
    return id;
  },
});

/** The job: hands the message to the provider and returns; the webhook ends the attempt. */
export const handOff = internalAction({
  args: { deliveryId: v.id("deliveries"), to: v.string() },
  returns: v.null(),
  handler: async (ctx, { deliveryId, to }) => {
    const { messageId } = await ctx.runMutation(internal.provider.accept, {
      reference: deliveryId,
      to,
    });
    await ctx.runMutation(internal.deliveries.accepted, { deliveryId, messageId });
    return null;
  },
});

/** Records the provider's id for the message. */
export const accepted = internalMutation({
  args: { deliveryId: v.id("deliveries"), messageId: v.string() },
  returns: v.null(),
  handler: async (ctx, { deliveryId, messageId }) => {
    await ctx.db.patch("deliveries", deliveryId, { messageId });
    return null;
  },
});

/** The webhook's transaction: the app's row and the job's completion commit together. Returns
 * whether the pool took the completion (false for a webhook delivered twice, or too late). */
export const recordEvent = internalMutation({
  args: { reference: v.string(), event: v.union(v.literal("delivered"), v.literal("bounced")) },
  returns: v.boolean(),
  handler: async (ctx, { reference, event }) => {
    const id = ctx.db.normalizeId("deliveries", reference);
    const row = id === null ? null : await ctx.db.get("deliveries", id);
    if (row === null || row.workId === undefined) return false;
    await ctx.db.patch("deliveries", row._id, { status: event });
    return await emailPool.complete(
      ctx,
      row.workId as WorkId,
      event === "delivered"
        ? { kind: "success", returnValue: { delivered: true } }
        : // A bounce will bounce again: not worth a retry.
          { kind: "failed", error: `bounced: ${row.to}`, nonRetryable: true },
    );
  },
});

/** What the pool knows of a delivery's job (`awaiting` while it waits for the webhook). */
export const jobInfo = internalQuery({
  args: { workId: v.string() },
  handler: async (ctx, { workId }) => await emailPool.info(ctx, workId as WorkId),
});
