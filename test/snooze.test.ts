/**
 * Snooze (section 6 of the API extensions): a job's function throws `SnoozeError(delayMs)` to give
 * its slot back and run again `delayMs` later without spending an attempt. Job keys are
 * "<pool key>:<n>" where keys matter, so the probe counts each pool key's runs from inside the jobs.
 */
import { describe, expect, it } from "vitest";
import { nextSegment } from "../src/component/model/segments.js";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  enqueue,
  inComponent,
  info,
  keyStatus,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

/** The outcome onComplete received for each job key. */
async function outcomes(t: ReturnType<typeof setup>): Promise<Record<string, string>> {
  const all = await completions(t);
  return Object.fromEntries(all.map((c) => [c.result.returnValue ?? c.workId, c.result.kind]));
}

describe("snooze", () => {
  it("runs the job again after delayMs without spending an attempt", async () => {
    const t = setup();
    // No retries at all: only a snooze can run it again.
    const [id] = await enqueue(t, "action", [{ key: "s", snoozeTimes: 3, snoozeMs: 2000 }]);
    await runUntil(t, () => probe.attempts.get("s") === 1);
    await runFor(t, 100);
    expect(await info(t, id)).toMatchObject({ state: "pending", previousAttempts: 0 });
    await runUntil(t, async () => (await completions(t)).length === 1, 20_000);
    expect(probe.attempts.get("s")).toBe(4);
    const starts = probe.starts.get("s")!;
    for (let i = 1; i < starts.length; i++) {
      expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(2000);
    }
    expect(await outcomes(t)).toEqual({ s: "success" });
    expect(await info(t, id)).toMatchObject({ state: "finished", previousAttempts: 1 });
  });

  it("counts only real failures against maxAttempts", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "s", snoozeTimes: 5, snoozeMs: 100, failTimes: 1 }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 20_000);
    // Five snoozes, one failure, one success: two attempts.
    expect(probe.attempts.get("s")).toBe(7);
    expect(await outcomes(t)).toEqual({ s: "success" });
  });

  it("gives its pool slot back while it waits", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1 };
    await enqueue(t, "action", [{ key: "sleepy", snoozeTimes: 1, snoozeMs: 60_000 }], {
      poolOptions,
    });
    await runUntil(t, () => probe.attempts.get("sleepy") === 1);
    await enqueue(t, "action", [{ key: "other", ms: 100 }], { poolOptions });
    await runFor(t, 2000);
    expect(await outcomes(t)).toEqual({ other: "success" });
  });

  it("a keyed job keeps its key's slot while it waits, and its key's order", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "k:0", snoozeTimes: 2, snoozeMs: 1000 }, { key: "k:1" }], {
      options: { key: "k" },
    });
    await runUntil(t, () => probe.attempts.get("k:0") === 1);
    await runFor(t, 500);
    expect(probe.attempts.get("k:1")).toBeUndefined();
    expect(await keyStatus(t, "k")).toMatchObject({ pending: 2, running: 0 });
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000);
    expect(probe.groupStarts.get("k")).toEqual(["k:0", "k:0", "k:0", "k:1"]);
    expect(probe.groupMax.get("k")).toBe(1);
  });

  it("works for mutations (their writes rolled back) and queries", async () => {
    const t = setup();
    await enqueue(t, "mutation", [{ key: "m", snoozeTimes: 2, snoozeMs: 500 }]);
    await enqueue(t, "query", [{ key: "q", snoozeTimes: 2, snoozeMs: 500 }]);
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000);
    expect(await outcomes(t)).toEqual({ m: "success", q: "success" });
    expect(probe.attempts.get("m")).toBe(3);
    expect(probe.attempts.get("q")).toBe(3);
    const effects = await t.run(async (ctx: any) => await ctx.db.query("effects").collect());
    expect(effects.filter((e: any) => e.key === "m")).toHaveLength(1);
  });

  it("a job canceled while snoozed reports canceled once and frees its key", async () => {
    const t = setup();
    const [sleepy] = await enqueue(
      t,
      "action",
      [{ key: "k:0", snoozeTimes: 1, snoozeMs: 60_000 }, { key: "k:1" }],
      { options: { key: "k" } },
    );
    await runUntil(t, () => probe.attempts.get("k:0") === 1);
    await runFor(t, 200);
    await callPool(t, "cancel", [sleepy]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    const all = await completions(t);
    expect(all.filter((c) => c.workId === sleepy).map((c) => c.result.kind)).toEqual(["canceled"]);
    expect(probe.attempts.get("k:0")).toBe(1);
    expect(await keyStatus(t, "k")).toMatchObject({ pending: 0, running: 0, canceled: 1 });
  });

  it("ignores a late duplicate of a snoozed run's report while the next run runs", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [
      { key: "s", snoozeTimes: 1, snoozeMs: 100, ms: 2000 },
    ]);
    await runUntil(t, () => probe.attempts.get("s") === 2);
    // The first run's report arrives again (as when a direct report's answer was lost and the
    // worker scheduled it a second time). Run numbers tell it from the second run's report.
    await inComponent(t, async (ctx) => {
      await ctx.db.insert("pendingCompletion", {
        workId: id,
        attempt: 1,
        result: { kind: "snoozed", delayMs: 0 },
        segment: nextSegment(Date.now()),
      });
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000);
    await runFor(t, 1000);
    expect(probe.attempts.get("s")).toBe(2);
    expect(await outcomes(t)).toEqual({ s: "success" });
  });

  for (const [what, snoozeMs, rule] of [
    ["negative", -5, /finite number ≥ 0/],
    ["over 30 days", 31 * 24 * 60 * 60 * 1000, /at most 2592000000 ms/],
  ] as const) {
    it(`a ${what} delay fails the run with an error naming delayMs`, async () => {
      const t = setup();
      await enqueue(t, "action", [{ key: "bad", snoozeTimes: 1, snoozeMs }]);
      await runUntil(t, async () => (await completions(t)).length === 1, 5000);
      const [done] = await completions(t);
      expect(done.result).toMatchObject({ kind: "failed" });
      expect(done.result.error).toMatch(/invalid SnoozeError delayMs/);
      expect(done.result.error).toMatch(rule);
    });
  }
});
