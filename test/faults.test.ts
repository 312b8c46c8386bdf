/**
 * Fault injection beyond the model: the clock jumping forward, a mass cancel, and the action worker's
 * completion mutation failing. Time is virtual
 * (see helpers.ts); each test gets a fresh backend.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { RECOVERY_INTERVAL_MS, REPORT_LOST_AFTER_MS } from "../src/component/mainLoop/recovery.js";
import { REPORT_ATTEMPTS } from "../src/component/runners/worker.js";
import { probe } from "./app/probe.js";
import {
  completions,
  enqueue,
  failCompletionInserts,
  failReports,
  inComponent,
  jobStates,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";
import { count, scaled } from "./scale.js";

describe("clock jumps", () => {
  it("a jump of hours forward neither loses nor duplicates work", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    // One at a time, so each gets a worker: a shared action runner keeps to its own deadline in
    // real time, which a jump of hours (impossible within one real action's 10 minutes) would end.
    const options = { options: { retry: { maxAttempts: 3, initialBackoffMs: 5000, base: 2 } } };
    const ids = await enqueue(t, "action", [{ key: "backoff", failTimes: 1 }], options);
    await runUntil(t, () => probe.attempts.get("backoff") === 1);
    ids.push(...(await enqueue(t, "action", [{ key: "long", ms: 2000 }], options)));
    await runUntil(t, () => probe.running === 1);
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
  // Several of cancelAll's pages (500 jobs each by default) either way; 10,000 under test:slow.
  const jobs = scaled(1_500, 10_000);
  it(`cancels ${count(jobs)} pending jobs in bounded transactions, each reported canceled once`, async () => {
    const t = setup();
    const ids: string[] = [];
    for (let batch = 0; batch * 1000 < jobs; batch++) {
      const size = Math.min(1000, jobs - batch * 1000);
      const argsList = Array.from({ length: size }, (_, i) => ({ key: `c${batch}-${i}` }));
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
    expect(all).toHaveLength(jobs);
    expect(new Set(all.map((c) => c.workId))).toEqual(new Set(ids));
    expect(all.every((c) => c.result.kind === "canceled")).toBe(true);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: jobs });
    await runFor(t, 3_700_000, 60_000);
    expect(probe.attempts.size).toBe(0);
  }, 600_000);
});

describe("the report of an action's attempt failing", () => {
  /** Makes the first `times` report writes (inserts) for `workId` fail. */
  function failFirstInserts(workId: () => string, times: number) {
    let left = times;
    return failReports({ inserts: (row) => row.workId === workId() && left-- > 0 });
  }

  async function expectReportedOnce(t: T, id: string, value: unknown, key: string) {
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [id, { kind: "success", returnValue: value }],
    ]);
    // The action ran once: the report was retried, never the job.
    expect(probe.attempts.get(key)).toBe(1);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
    const left = await inComponent(t, async (ctx) => ({
      pendingCompletion: await ctx.db.query("pendingCompletion").collect(),
      pendingStart: await ctx.db.query("pendingStart").collect(),
    }));
    expect(left).toEqual({ pendingCompletion: [], pendingStart: [] });
  }

  it("the direct call failing: the scheduled report records the real result", async () => {
    const t = setup();
    vi.spyOn(console, "info").mockImplementation(() => {});
    const job = { id: "" };
    const injected = failFirstInserts(() => job.id, 1);
    [job.id] = await enqueue(t, "action", [{ key: "flaky-report", ms: 100, value: "real" }], {
      options: { retry: true },
    });
    await runFor(t, 5000, 20);
    expect(injected.count).toBe(1);
    await expectReportedOnce(t, job.id, "real", "flaky-report");
  });

  it(`the scheduler refusing ${REPORT_ATTEMPTS - 1}× too: retried scheduling records it`, async () => {
    const t = setup();
    vi.spyOn(console, "info").mockImplementation(() => {});
    const job = { id: "" };
    let insertsLeft = 1;
    let schedulesLeft = REPORT_ATTEMPTS - 1;
    const injected = failReports({
      inserts: (row) => row.workId === job.id && insertsLeft-- > 0,
      schedules: (row) => row.workId === job.id && schedulesLeft-- > 0,
    });
    [job.id] = await enqueue(t, "action", [{ key: "refused", value: "real" }], {
      options: { retry: true },
    });
    await runFor(t, 5000, 20);
    expect(injected).toEqual({ count: 1, schedules: REPORT_ATTEMPTS - 1 });
    await expectReportedOnce(t, job.id, "real", "refused");
  });

  it("the scheduled report failing for good: failed once with a clear error, never rerun", async () => {
    const t = setup();
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "info").mockImplementation(() => {});
    const job = { id: "" };
    // Every insert of attempt 1's report fails; scheduling it works (a real deployment would retry
    // a transient failure of the scheduled mutation; here it fails for good, as only a bug would).
    failReports({ inserts: (row) => row.workId === job.id });
    [job.id] = await enqueue(t, "action", [{ key: "lost-report", value: "real" }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    await runFor(t, REPORT_LOST_AFTER_MS + 2 * RECOVERY_INTERVAL_MS, 500);
    expect(probe.attempts.get("lost-report")).toBe(1);
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [job.id, { kind: "failed", error: expect.stringContaining("never reached the pool") }],
    ]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
  });

  it("every report write failing, direct and scheduled: the runner dies and recovery retries", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "info").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const job = { id: "" };
    const injected = failCompletionInserts((row) => row.workId === job.id && row.attempt === 1);
    [job.id] = await enqueue(t, "action", [{ key: "dead-runner", value: "real" }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    // Recovery rules once the worker's action cannot still run (its end + 10 + 1 min).
    await runFor(t, 13 * 60_000, 1_000);
    expect(injected.count).toBe(1);
    // The worker could not make its result durable, so its attempt is unknown: a failed attempt.
    expect(probe.attempts.get("dead-runner")).toBe(2);
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [job.id, { kind: "success", returnValue: "real" }],
    ]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
  });
});
