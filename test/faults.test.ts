/**
 * Fault injection beyond the model: the clock jumping forward, and a mass cancel. Time is virtual
 * (see helpers.ts); each test gets a fresh backend.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { completions, enqueue, jobStates, runFor, runUntil, setup } from "./helpers.js";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("clock jumps", () => {
  it("a jump of hours forward neither loses nor duplicates work", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const ids = await enqueue(
      t,
      "action",
      [
        { key: "backoff", failTimes: 1 },
        { key: "long", ms: 2000 },
      ],
      { options: { retry: { maxAttempts: 3, initialBackoffMs: 5000, base: 2 } } },
    );
    await runUntil(t, () => probe.attempts.get("backoff") === 1 && probe.running === 1);
    vi.setSystemTime(Date.now() + 3 * 60 * 60 * 1000);
    await runFor(t, 120_000, 100);
    const all = await completions(t);
    expect(all.map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(all.every((c) => c.result.kind === "success")).toBe(true);
    expect(probe.attempts.get("backoff")).toBe(2);
    expect(probe.attempts.get("long")).toBe(1);
  });
});

describe("cancelAll at scale", () => {
  it("cancels 10,000 pending jobs in bounded transactions, each reported canceled once", async () => {
    const t = setup();
    vi.spyOn(console, "info").mockImplementation(() => {});
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const argsList = Array.from({ length: 1000 }, (_, i) => ({ key: `c${batch}-${i}` }));
      ids.push(
        ...(await enqueue(t, "action", argsList, {
          batch: true,
          options: { runAfter: 3_600_000 },
        })),
      );
    }
    await t.mutation(anyApi.pool.cancelAll, {});
    await runFor(t, 60_000, 100);
    const all = await completions(t);
    expect(all).toHaveLength(10_000);
    expect(new Set(all.map((c) => c.workId)).size).toBe(10_000);
    expect(all.every((c) => c.result.kind === "canceled")).toBe(true);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 10_000 });
    await runFor(t, 3_700_000, 60_000);
    expect(probe.attempts.size).toBe(0);
  }, 600_000);
});
