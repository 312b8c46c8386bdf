// The webhook pattern end to end: an email job waits for the (fake) provider's webhook, which
// updates the app's row and completes the job in one transaction (deliveries.ts, provider.ts, the
// /provider/events route of http.ts). The provider's fetch is routed to this backend's HTTP routes.
import { afterEach, describe, expect, it, vi } from "vitest";
import { internal } from "./_generated/api.js";
import type { Id } from "./_generated/dataModel.js";
import { PROVIDER_DELAY_MS } from "./provider.js";
import { runFor, setup, useExampleApp, type T } from "./test.setup.js";

useExampleApp();

const SECRET = "test-webhook-secret";

/** A backend whose provider's webhook calls reach its own HTTP routes. */
function setupWithProvider() {
  const t = setup();
  vi.stubEnv("CONVEX_SITE_URL", "https://example.convex.site");
  vi.stubEnv("PROVIDER_WEBHOOK_SECRET", SECRET);
  vi.stubGlobal("fetch", async (url: string, init?: RequestInit) => {
    const { pathname } = new URL(url);
    return await t.fetch(pathname, init);
  });
  return t;
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});

async function row(t: T, id: Id<"deliveries">) {
  return await t.run(async (ctx) => await ctx.db.get("deliveries", id));
}

async function jobInfo(t: T, workId: string) {
  return await t.query(internal.deliveries.jobInfo, { workId });
}

describe("waiting for the provider's webhook", () => {
  it("keeps the job running after its action returned, and completes it from the webhook", async () => {
    const t = setupWithProvider();
    const id = await t.mutation(internal.deliveries.send, { to: "ada@example.com" });
    await runFor(1000);
    const sent = await row(t, id);
    expect(sent?.status).toBe("sending");
    expect(sent?.messageId).toBe(`msg-${id}`);
    const waiting = await jobInfo(t, sent!.workId!);
    expect(waiting?.state).toBe("running");
    expect(waiting?.awaiting).toBeDefined();
    await runFor(PROVIDER_DELAY_MS + 1000);
    expect((await row(t, id))?.status).toBe("delivered");
    expect((await jobInfo(t, sent!.workId!))?.state).toBe("finished");
    expect((await jobInfo(t, sent!.workId!))?.result).toEqual({
      kind: "success",
      returnValue: { delivered: true },
    });
  });

  it("fails a bounced email for good, and a webhook delivered twice changes nothing", async () => {
    const t = setupWithProvider();
    const id = await t.mutation(internal.deliveries.send, { to: "nobody@example.invalid" });
    await runFor(PROVIDER_DELAY_MS + 2000);
    const bounced = await row(t, id);
    expect(bounced?.status).toBe("bounced");
    const info = await jobInfo(t, bounced!.workId!);
    expect(info?.result).toEqual({ kind: "failed", error: "bounced: nobody@example.invalid" });
    const again = await t.fetch("/provider/events", {
      method: "POST",
      headers: { Authorization: `Bearer ${SECRET}` },
      body: JSON.stringify({ reference: id, event: "delivered" }),
    });
    expect(await again.json()).toEqual({ taken: false });
  });

  it("refuses an unsigned webhook", async () => {
    const t = setupWithProvider();
    const id = await t.mutation(internal.deliveries.send, { to: "ada@example.com" });
    await runFor(500);
    const forged = await t.fetch("/provider/events", {
      method: "POST",
      body: JSON.stringify({ reference: id, event: "delivered" }),
    });
    expect(forged.status).toBe(401);
    expect((await row(t, id))?.status).toBe("sending");
  });
});
