/**
 * Fault injection beyond the model: the clock jumping forward, a mass cancel, and the action worker's
 * completion mutation failing. Time is virtual
 * (see helpers.ts); each test gets a fresh backend.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { REPORT_ATTEMPTS } from "../src/component/worker.js";
import { probe } from "./app/probe.js";
import {
  completions,
  enqueue,
  failCompletionInserts,
  inComponent,
  jobStates,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

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

describe("the completion mutation of an action failing", () => {
  /** Makes the first `times` completion writes for `workId` fail (see `failCompletionInserts`). */
  function failCompletionInsertsFor(workId: () => string, times: number) {
    let left = times;
    return failCompletionInserts((row) => row.workId === workId() && left-- > 0);
  }

  for (const times of [1, 2]) {
    it(`failing ${times}× (transient): the job is reported once, with its real result`, async () => {
      const t = setup();
      vi.spyOn(console, "info").mockImplementation(() => {});
      const job = { id: "" };
      const injected = failCompletionInsertsFor(() => job.id, times);
      [job.id] = await enqueue(t, "action", [{ key: "flaky-report", ms: 100, value: "real" }]);
      const target = job.id;
      const [other] = await enqueue(t, "action", [{ key: "bystander", ms: 100 }]);
      await runFor(t, 5000, 20);
      expect(injected.count).toBe(times);
      const all = await completions(t);
      expect(all.filter((c) => c.workId === target).map((c) => c.result)).toEqual([
        { kind: "success", returnValue: "real" },
      ]);
      expect(all.filter((c) => c.workId === other)).toHaveLength(1);
      // The action ran once: the report was retried, not the job.
      expect(probe.attempts.get("flaky-report")).toBe(1);
      expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 2 });
      const left = await inComponent(t, async (ctx) => ({
        pendingCompletion: await ctx.db.query("pendingCompletion").collect(),
        pendingStart: await ctx.db.query("pendingStart").collect(),
      }));
      expect(left).toEqual({ pendingCompletion: [], pendingStart: [] });
    });
  }

  it(`failing on all ${REPORT_ATTEMPTS} tries of one attempt: that attempt counts as failed and is retried`, async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const job = { id: "" };
    const injected = failCompletionInsertsFor(() => job.id, REPORT_ATTEMPTS);
    [job.id] = await enqueue(t, "action", [{ key: "lost-report", value: "real" }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    await runFor(t, 10_000, 50);
    expect(injected.count).toBe(REPORT_ATTEMPTS);
    // The worker's last resort reported the attempt as failed; the retry's report went through.
    expect(probe.attempts.get("lost-report")).toBe(2);
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [job.id, { kind: "success", returnValue: "real" }],
    ]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
  });

  it("failing on every try, the last resort too: the worker dies unreported and recovery retries the attempt", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "info").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const job = { id: "" };
    // Every report of attempt 1 (REPORT_ATTEMPTS tries, then the "could not record" report) fails:
    // the worker's scheduled function ends as failed without reporting, as a lost runner would.
    const injected = failCompletionInsertsFor(() => job.id, REPORT_ATTEMPTS + 1);
    [job.id] = await enqueue(t, "action", [{ key: "dead-runner", value: "real" }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    await runFor(t, 120_000, 200);
    expect(injected.count).toBe(REPORT_ATTEMPTS + 1);
    expect(probe.attempts.get("dead-runner")).toBe(2);
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [job.id, { kind: "success", returnValue: "real" }],
    ]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
  });
});
