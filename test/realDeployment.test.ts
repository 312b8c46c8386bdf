/**
 * Findings of a review under real Convex semantics that convex-test hides (see docs/RELIABILITY.md,
 * "What convex-test does not show"): each spec drives the schedule that exposed one. Time is
 * virtual (helpers.ts).
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { RECOVERY_INTERVAL_MS } from "../src/component/mainLoop/recovery.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import {
  completions,
  delaySchedules,
  enqueue,
  failCompletionInserts,
  inComponent,
  info,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

function quiet() {
  for (const level of ["info", "warn", "error"] as const) {
    vi.spyOn(console, level).mockImplementation(() => {});
  }
}

describe("config through cancel", () => {
  it("raising maxParallelism through cancel wakes a paused pool at once", async () => {
    const t = setup();
    quiet();
    const [done] = await enqueue(t, "mutation", [{ key: "done" }]);
    await runFor(t, 500);
    const [waiting] = await enqueue(t, "mutation", [{ key: "waiting" }], {
      poolOptions: { maxParallelism: 0 },
    });
    await runFor(t, 5000, 100);
    expect(await info(t, waiting)).toMatchObject({ state: "pending" });
    // Canceling a finished job writes no cancel request; the config change alone must wake the loop.
    await t.mutation(anyApi.pool.cancel, { id: done, poolOptions: { maxParallelism: 5 } });
    await runFor(t, 2 * SEGMENT_MS);
    expect(await info(t, waiting)).toMatchObject({ state: "finished" });
  });
});

describe("cancelAll", () => {
  it("cancels a job that goes from running back to pending (a retry) between two of its pages", async () => {
    const t = setup();
    quiet();
    const retry = { retry: { maxAttempts: 3, initialBackoffMs: 1000, base: 2 } };
    // Created first, so any page order that puts running jobs after pending ones meets it late.
    const [retrying] = await enqueue(t, "action", [{ key: "retrying", ms: 300, failTimes: 1 }], {
      options: retry,
    });
    const [delayed] = await enqueue(t, "action", [{ key: "delayed2" }], {
      options: { runAfter: 60_000 },
    });
    await runUntil(t, async () => (await info(t, retrying)).state === "running");
    // The forced schedule: cancelAll's next page runs 5 s later, after the attempt failed and the
    // loop moved the job back to pending for its retry.
    const forced = delaySchedules("cancelAllContinue", 5000);
    await t.mutation(anyApi.pool.cancelAll, { limit: 1 });
    await runFor(t, 70_000, 100);
    expect(forced.count).toBeGreaterThan(0);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c.result.kind]));
    expect(Object.fromEntries(byId)).toEqual({ [retrying]: "canceled", [delayed]: "canceled" });
    expect(probe.attempts.get("retrying")).toBe(1);
  });

  it("pages in creation order: running, backing-off and delayed jobs are each canceled once", async () => {
    const t = setup();
    quiet();
    const retry = { retry: { maxAttempts: 5, initialBackoffMs: 5000, base: 2 } };
    const [running] = await enqueue(t, "action", [{ key: "running", ms: 3000 }]);
    const [backingOff] = await enqueue(t, "action", [{ key: "backoff", failTimes: 3 }], {
      options: retry,
    });
    const [delayed] = await enqueue(t, "action", [{ key: "delayed" }], {
      options: { runAfter: 60_000 },
    });
    await runFor(t, 1000);
    expect((await info(t, backingOff)).state).toBe("pending");
    expect((await info(t, running)).state).toBe("running");
    await t.mutation(anyApi.pool.cancelAll, { limit: 1 });
    await runFor(t, 70_000, 100);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c.result.kind]));
    expect(Object.fromEntries(byId)).toEqual({
      [running]: "success", // running work finishes with its own outcome
      [backingOff]: "canceled",
      [delayed]: "canceled",
    });
    expect(probe.attempts.get("backoff")).toBe(1);
    expect(probe.attempts.get("delayed")).toBeUndefined();
  });
});

describe("recovery", () => {
  it("finds a dead runner behind more than a page of live ones", async () => {
    const t = setup();
    quiet();
    const live = Array.from({ length: 120 }, (_, i) => ({ key: `live${i}`, ms: 200_000 }));
    await enqueue(t, "action", live, { batch: true, poolOptions: { maxParallelism: 121 } });
    await runFor(t, 1000, 100);
    const dead = { id: "" };
    failCompletionInserts((row) => row.workId === dead.id);
    // A mutation: its worker's death is final at once (an action's waits for its action's limit).
    [dead.id] = await enqueue(t, "mutation", [{ key: "dead" }], {
      poolOptions: { maxParallelism: 121 },
    });
    await runFor(t, 2 * RECOVERY_INTERVAL_MS + 10_000, 500);
    // The live ones still run; the dead one (started last, so behind them) was found.
    expect(probe.running).toBe(120);
    // Later cycles start at the oldest live job's start (less a margin), not at the index's front.
    const oldestLive = Math.min(...[...probe.starts.values()].map((starts) => starts[0]));
    const loop = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    expect(loop.recoveryFloor).toBeGreaterThan(0);
    expect(loop.recoveryFloor).toBeLessThanOrEqual(oldestLive);
    expect(await completions(t)).toEqual([
      expect.objectContaining({
        workId: dead.id,
        result: { kind: "failed", error: expect.stringContaining("runner died") },
      }),
    ]);
  }, 120_000);
});

describe("read cursors", () => {
  it("moves each pending table's cursor forward and sweeps from the last cutoff", async () => {
    const t = setup();
    quiet();
    await enqueue(t, "mutation", [{ key: "a" }, { key: "b" }], {
      batch: true,
      poolOptions: { statusTtl: 0 },
    });
    await runFor(t, 1000);
    const first = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    await enqueue(t, "action", [{ key: "c", ms: 100 }], { poolOptions: { statusTtl: 0 } });
    await runFor(t, 15_000, 100);
    const later = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    expect(later.cursors.start).toBeGreaterThan(first.cursors.start);
    expect(later.cursors.completion).toBeGreaterThan(first.cursors.completion);
    expect(later.expiryCursor).toBeGreaterThanOrEqual(first.expiryCursor ?? 0);
    expect(await completions(t)).toHaveLength(3);
    const work = await inComponent(t, async (ctx) => await ctx.db.query("work").collect());
    expect(work).toEqual([]);
  });
});
