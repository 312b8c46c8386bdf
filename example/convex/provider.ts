// A stand-in for an outside email provider (think Postmark or SES) that accepts a message at once
// and reports its fate later through a webhook, as real providers do. `accept` is its "API": it
// answers with a message id and schedules `callBack`, which POSTs the event to this app's
// /provider/events route (http.ts) signed with the shared secret, from outside any transaction,
// as the real provider would. Nothing here knows about the pool: the app's webhook does.
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import { internalAction, internalMutation } from "./_generated/server.js";

/** How long the fake provider takes to deliver (ms). */
export const PROVIDER_DELAY_MS = 2000;

/** The provider's API call: accepts the message for `to` and calls back later with "delivered"
 * (or "bounced" for an address on the `.invalid` domain). `reference` is the app's own id for the
 * message, echoed back in the webhook (as providers' metadata fields are). */
export const accept = internalMutation({
  args: { reference: v.string(), to: v.string() },
  returns: v.object({ messageId: v.string() }),
  handler: async (ctx, { reference, to }) => {
    const messageId = `msg-${reference}`;
    const event = to.endsWith(".invalid") ? "bounced" : "delivered";
    await ctx.scheduler.runAfter(PROVIDER_DELAY_MS, internal.provider.callBack, {
      reference,
      messageId,
      event,
    });
    return { messageId };
  },
});

/** The provider calling the app's webhook. */
export const callBack = internalAction({
  args: {
    reference: v.string(),
    messageId: v.string(),
    event: v.union(v.literal("delivered"), v.literal("bounced")),
  },
  returns: v.null(),
  handler: async (_ctx, event) => {
    // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
    const site = process.env.CONVEX_SITE_URL;
    // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
    const secret = process.env.PROVIDER_WEBHOOK_SECRET;
    if (!site || !secret) throw new Error("set CONVEX_SITE_URL and PROVIDER_WEBHOOK_SECRET");
    const response = await fetch(`${site}/provider/events`, {
      method: "POST",
      headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" },
      body: JSON.stringify(event),
    });
    // A provider retries a webhook that failed; this one just says so.
    if (!response.ok) throw new Error(`webhook answered ${response.status}`);
    return null;
  },
});
