// The example's daily digest: a schedule per user at 09:00 in the user's time zone.
import { describe, expect, it, vi } from "vitest";
import { api } from "./_generated/api.js";
import { runFor, setup, useExampleApp } from "./test.setup.js";

useExampleApp();

const sim = { ms: 100, failRate: 0, seed: 7 };

describe("digests", () => {
  it("schedules a user's digest at 09:00 in their zone, and sends it then", async () => {
    const t = setup();
    // 2026-01-01T00:00Z is 19:00 of Dec 31 in New York (EST, UTC-5).
    vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
    await t.mutation(api.digests.subscribe, {
      to: "ada@example.com",
      timezone: "America/New_York",
      ...sim,
    });
    const digest = await t.query(api.digests.digest, { to: "ada@example.com" });
    expect(digest).toMatchObject({
      cron: "0 9 * * *",
      timezone: "America/New_York",
      nextRunAt: Date.parse("2026-01-01T14:00:00Z"),
      counts: { enqueued: 0, skipped: 0, missed: 0 },
    });
    await runFor(Date.parse("2026-01-01T14:00:05Z") - Date.now());
    const sent = (await t.query(api.digests.digest, { to: "ada@example.com" }))!;
    expect(sent.counts.enqueued).toBe(1);
    expect(sent.lastRun?.scheduledFor).toBe(Date.parse("2026-01-01T14:00:00Z"));
    expect(sent.nextRunAt).toBe(Date.parse("2026-01-02T14:00:00Z"));
  });

  it("unsubscribes", async () => {
    const t = setup();
    await t.mutation(api.digests.subscribe, {
      to: "bo@example.com",
      timezone: "Europe/Berlin",
      ...sim,
    });
    expect(await t.mutation(api.digests.unsubscribe, { to: "bo@example.com" })).toBe(true);
    expect(await t.query(api.digests.digest, { to: "bo@example.com" })).toBeNull();
    expect(await t.mutation(api.digests.unsubscribe, { to: "bo@example.com" })).toBe(false);
  });
});
