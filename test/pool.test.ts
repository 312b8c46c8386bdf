/**
 * Specifications of the pool's behavior, end to end through the client, on convex-test with a virtual
 * clock: `setup()` fakes timers, `runFor` advances time in 10 ms steps so that the loop, the workers
 * and sleeping actions run as time passes.
 */
import {
  isNonRetryableError as peerIsNonRetryable,
  NonRetryableError as PeerNonRetryableError,
} from "@convex-dev/workpool";
import { anyApi } from "convex/server";
import { ConvexError } from "convex/values";
import { isNonRetryableError, NonRetryableError } from "../src/client/index.js";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { segmentOf } from "../src/component/model/segments.js";
import { START_BATCH } from "../src/component/mainLoop/start.js";
import { ACTION_RUNNER_BATCH } from "../src/component/runners/actionRunner.js";
import { WATCHDOG_CHECK_MS, WATCHDOG_INTERVAL_MS } from "../src/component/mainLoop/watchdog.js";
import { setupDeployment } from "./deployment.js";
import {
  completions,
  delaySchedules,
  failSchedules,
  componentRows,
  enqueue,
  failCompletionInserts,
  inComponent,
  info,
  jobStates,
  PER_JOB_TABLES,
  runChecking,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

const keys = (n: number, prefix = "j") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

describe("parallelism", () => {
  const plural = { action: "actions", mutation: "mutations", query: "queries" } as const;
  for (const kind of ["action", "mutation", "query"] as const) {
    it(`never runs more than maxParallelism ${plural[kind]} at once`, async () => {
      const t = setup();
      const limit = 3;
      // Each loop pass logs (at DEBUG) how many jobs run after it started work: the highest must be
      // the limit, never more. Between steps the component's own count is checked too.
      const afterPass: number[] = [];
      vi.spyOn(console, "debug").mockImplementation((line: string) => {
        const parsed = JSON.parse(line);
        if (parsed.event === "pass") afterPass.push(parsed.running);
      });
      vi.spyOn(console, "info").mockImplementation(() => {});
      await enqueue(
        t,
        kind,
        keys(12).map((key) => ({ key, ms: 200 })),
        { poolOptions: { maxParallelism: limit, logLevel: "DEBUG" } },
      );
      await runChecking(t, 3000, async () => {
        const { running } = await jobStates(t);
        expect(running).toBeLessThanOrEqual(limit);
      });
      expect(probe.maxRunning).toBeLessThanOrEqual(limit);
      expect(Math.max(...afterPass)).toBe(limit);
      expect(await completions(t)).toHaveLength(12);
    });
  }
});

describe("onComplete", () => {
  it("is called exactly once per job with success, failed and canceled results", async () => {
    const t = setup();
    const ok = await enqueue(t, "action", [{ key: "ok", ms: 100 }]);
    const bad = await enqueue(t, "action", [{ key: "bad", failTimes: 9 }]);
    const later = await enqueue(t, "action", [{ key: "later" }], { options: { runAfter: 5000 } });
    await t.mutation(anyApi.pool.cancel, { id: later[0] });
    await runFor(t, 10_000, 50);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c]));
    expect((await completions(t)).length).toBe(3);
    expect(byId.get(ok[0])?.result).toEqual({ kind: "success", returnValue: "ok" });
    expect(byId.get(bad[0])?.result).toEqual({
      kind: "failed",
      error: expect.stringContaining("failed attempt 1"),
    });
    expect(byId.get(later[0])?.result).toEqual({ kind: "canceled" });
    expect(probe.attempts.get("later")).toBeUndefined();
  });

  it("reports canceled exactly once for a job canceled while backing off", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "flaky", failTimes: 9 }], {
      options: { retry: { maxAttempts: 5, initialBackoffMs: 2000, base: 2 } },
    });
    await runFor(t, 500);
    expect(probe.attempts.get("flaky")).toBe(1);
    expect(await t.query(anyApi.pool.status, { id })).toEqual({
      state: "pending",
      previousAttempts: 1,
    });
    await t.mutation(anyApi.pool.cancel, { id });
    await runFor(t, 10_000, 50);
    expect(probe.attempts.get("flaky")).toBe(1);
    expect(await completions(t)).toEqual([
      expect.objectContaining({ workId: id, result: { kind: "canceled" } }),
    ]);
  });

  it("lets a job canceled while running finish, without retrying it", async () => {
    const t = setup();
    const [good, flaky] = await enqueue(
      t,
      "action",
      [
        { key: "good", ms: 1000 },
        { key: "flaky", ms: 1000, failTimes: 9 },
      ],
      { options: { retry: true } },
    );
    await runFor(t, 300);
    expect(probe.running).toBe(2);
    await t.mutation(anyApi.pool.cancel, { id: good });
    await t.mutation(anyApi.pool.cancel, { id: flaky });
    await runFor(t, 5000);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c.result]));
    expect(byId.get(good)).toEqual({ kind: "success", returnValue: "good" });
    expect(byId.get(flaky)).toEqual({ kind: "canceled" });
    expect(probe.attempts.get("flaky")).toBe(1);
    expect((await completions(t)).length).toBe(2);
  });

  it("keeps going when an onComplete handler throws, and rolls back its writes", async () => {
    const t = setup();
    vi.spyOn(console, "error").mockImplementation(() => {});
    await enqueue(t, "mutation", [{ key: "a" }], { onComplete: "onCompleteThrows" });
    const [next] = await enqueue(t, "mutation", [{ key: "b" }]);
    await runFor(t, 1000);
    const all = await completions(t);
    expect(all.map((c) => c.workId)).toEqual([next]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 2 });
    expect(console.error).toHaveBeenCalledWith(expect.stringContaining("onCompleteFailed"));
  });

  it("passes a large context to onComplete without the loop reading it", async () => {
    const t = setup();
    const big = "x".repeat(600_000);
    const [id] = await enqueue(t, "action", [{ key: "big", value: "small" }], {
      options: { context: { big } },
    });
    const payloads = await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    expect(payloads).toHaveLength(1);
    await runFor(t, 1000);
    const [done] = await completions(t);
    expect(done.workId).toBe(id);
    expect(done.context.big.length).toBe(600_000);
  });
});

describe("retries", () => {
  it("does not retry unless enabled", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "once", failTimes: 1 }]);
    await runFor(t, 5000);
    expect(probe.attempts.get("once")).toBe(1);
    expect((await completions(t))[0].result.kind).toBe("failed");
  });

  it("makes at most maxAttempts attempts, waiting within the jitter bounds", async () => {
    const t = setup();
    const behavior = { maxAttempts: 4, initialBackoffMs: 1000, base: 2 };
    await enqueue(t, "action", [{ key: "r", failTimes: 99 }], { options: { retry: behavior } });
    await runUntil(t, async () => (await completions(t)).length === 1, 30_000);
    // Nothing more comes after the final failure.
    await runFor(t, 2000);
    const starts = probe.starts.get("r")!;
    expect(starts).toHaveLength(4);
    for (let n = 1; n < starts.length; n++) {
      const nominal = 1000 * 2 ** (n - 1);
      const waited = starts[n] - starts[n - 1];
      // Jitter is ±50%; the loop adds up to one segment (100 ms) plus worker scheduling.
      expect(waited).toBeGreaterThanOrEqual(nominal * 0.5);
      expect(waited).toBeLessThanOrEqual(nominal * 1.5 + 250);
    }
    expect((await completions(t))[0].result).toEqual({
      kind: "failed",
      error: expect.stringContaining("attempt 4"),
    });
  });

  it("succeeds after transient failures with retryActionsByDefault", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "t", failTimes: 2 }], {
      poolOptions: { retryActionsByDefault: true },
    });
    await runFor(t, 10_000, 50);
    expect(probe.attempts.get("t")).toBe(3);
    expect((await completions(t))[0].result).toEqual({ kind: "success", returnValue: "t" });
  });

  it("stops at once on NonRetryableError", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "nr", failTimes: 9, nonRetryable: true }], {
      options: { retry: true },
    });
    await runFor(t, 10_000, 50);
    expect(probe.attempts.get("nr")).toBe(1);
    expect((await completions(t))[0].result).toEqual({
      kind: "failed",
      error: "job nr failed attempt 1",
      errorData: { __convexWorkpoolNonRetryable: true, message: "job nr failed attempt 1" },
    });
  });
});

describe("NonRetryableError's wire form (shared with @convex-dev/workpool)", () => {
  for (const form of ["peer", "wire"] as const) {
    const thrown =
      form === "peer"
        ? "@convex-dev/workpool's NonRetryableError"
        : "a hand-built ConvexError in the wire form";
    it(`is not retried when the job throws ${thrown}`, async () => {
      const t = setup();
      const key = `nr-${form}`;
      await enqueue(
        t,
        "action",
        [{ key, failTimes: 9, nonRetryable: true, nonRetryableForm: form }],
        {
          options: { retry: true },
        },
      );
      await runFor(t, 10_000, 50);
      expect(probe.attempts.get(key)).toBe(1);
      const message = `job ${key} failed attempt 1`;
      expect((await completions(t))[0].result).toEqual({
        kind: "failed",
        error: message,
        errorData: { __convexWorkpoolNonRetryable: true, message },
      });
    });
  }

  it("is recognised both ways by each package's isNonRetryableError", () => {
    const ours = new NonRetryableError("ours");
    const peers = new PeerNonRetryableError("peer's");
    expect(peerIsNonRetryable(ours)).toBe(true);
    expect(isNonRetryableError(peers)).toBe(true);
    expect(ours.data).toEqual({ __convexWorkpoolNonRetryable: true, message: "ours" });
    expect(isNonRetryableError(new ConvexError({ message: "plain" }))).toBe(false);
    expect(isNonRetryableError(new Error("plain"))).toBe(false);
    // Like the peer's, the constructor takes a cause.
    const cause = new Error("HTTP 400");
    expect(new NonRetryableError("bad input", { cause }).cause).toBe(cause);
  });
});

describe("status", () => {
  it("goes pending → running → finished with previousAttempts", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "s", ms: 500, failTimes: 1 }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 1000, base: 2 } },
    });
    const seen: string[] = [];
    const observe = async () => {
      const s = await t.query(anyApi.pool.status, { id });
      const label = s.state === "finished" ? "finished" : `${s.state}/${s.previousAttempts}`;
      if (seen.at(-1) !== label) seen.push(label);
    };
    await observe();
    await runChecking(t, 5000, observe, 20);
    expect(seen).toEqual(["pending/0", "running/0", "pending/1", "running/1", "finished"]);
    // Exactly the peer's shape: the detail lives in `info`.
    expect(await t.query(anyApi.pool.status, { id })).toEqual({ state: "finished" });
    expect(await info(t, id)).toMatchObject({
      id,
      state: "finished",
      previousAttempts: 2,
      result: { kind: "success", returnValue: "s" },
    });
  });

  it("returns statuses in input order in a batch", async () => {
    const t = setup();
    const ids = await enqueue(t, "mutation", [{ key: "a" }, { key: "b" }], { batch: true });
    const later = await enqueue(t, "mutation", [{ key: "c" }], { options: { runAfter: 60_000 } });
    await runFor(t, 500);
    const statuses = await t.query(anyApi.pool.statusBatch, { ids: [later[0], ...ids] });
    expect(statuses.map((s: any) => s.state)).toEqual(["pending", "finished", "finished"]);
  });
});

describe("batch enqueue", () => {
  it("returns ids in input order", async () => {
    const t = setup();
    const names = keys(25, "b");
    const ids = await enqueue(
      t,
      "action",
      names.map((key) => ({ key })),
      { batch: true },
    );
    await runFor(t, 2000);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c.result.returnValue]));
    expect(ids.map((id) => byId.get(id))).toEqual(names);
  });
});

describe("config", () => {
  it("maxParallelism 0 pauses starting; raising it resumes", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "p" }], { poolOptions: { maxParallelism: 0 } });
    await runFor(t, 2000);
    expect(probe.attempts.get("p")).toBeUndefined();
    expect(await jobStates(t)).toMatchObject({ pending: 1 });
    await t.mutation(anyApi.pool.enqueue, {
      kind: "action",
      argsList: [{ key: "q" }],
      poolOptions: { maxParallelism: 1 },
    });
    await runFor(t, 2000);
    expect(probe.attempts.get("p")).toBe(1);
    expect(probe.attempts.get("q")).toBe(1);
  });

  it("config.update changes parallelism at run time", async () => {
    const t = setup();
    await enqueue(
      t,
      "action",
      keys(6).map((key) => ({ key, ms: 1000 })),
      { poolOptions: { maxParallelism: 1 } },
    );
    await runFor(t, 500);
    expect(probe.running).toBe(1);
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 3 });
    await runFor(t, 300);
    expect(probe.running).toBe(3);
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 0 });
    await runFor(t, 5000);
    expect(probe.attempts.size).toBe(3);
    expect(probe.running).toBe(0);
    expect(await jobStates(t)).toEqual({ pending: 3, running: 0, finished: 3 });
  });
});

describe("runAt and runAfter", () => {
  for (const [name, options] of [
    ["runAfter", { runAfter: 2345 }],
    ["runAt", { runAt: Date.parse("2026-01-01T00:00:02.345Z") }],
  ] as const) {
    it(`${name} starts the job within one segment of its time, never early`, async () => {
      const t = setup();
      const due = Date.now() + 2345;
      await enqueue(t, "action", [{ key: "d" }], { options });
      await runFor(t, 4000);
      const [start] = probe.starts.get("d")!;
      expect(start).toBeGreaterThanOrEqual(due);
      expect(start - due).toBeLessThanOrEqual(100 + 20);
    });
  }
});

describe("recovery", () => {
  // A runner "dies" when every write of its attempt's completion fails: the worker ends failed
  // without reporting (as when an action times out or its process is lost), and only recovery,
  // which reads the worker's scheduled-function state, can notice.
  function killAttempt(attempt: number) {
    return failCompletionInserts((row) => row.attempt === attempt);
  }

  it("retries a job whose runner died without reporting, once its action could have ended", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const deaths = killAttempt(1);
    const [id] = await enqueue(t, "action", [{ key: "lost", ms: 100 }], {
      options: { retry: true },
    });
    // The worker's action is its own execution: the retry waits the runner's end + 10 + 1 min.
    await runFor(t, 11 * 60_000, 1_000);
    expect(probe.attempts.get("lost")).toBe(1);
    await runFor(t, 2 * 60_000, 1_000);
    expect(deaths.count).toBeGreaterThan(0);
    expect(probe.attempts.get("lost")).toBe(2);
    expect(await completions(t)).toEqual([
      expect.objectContaining({ workId: id, result: { kind: "success", returnValue: "lost" } }),
    ]);
  });

  it("fails a job whose runner died when it has no retries", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    killAttempt(1);
    const [id] = await enqueue(t, "mutation", [{ key: "m" }]);
    await runFor(t, 60_000, 100);
    expect(await completions(t)).toEqual([
      expect.objectContaining({
        workId: id,
        result: { kind: "failed", error: expect.stringContaining("runner died") },
      }),
    ]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 1 });
  });
});

describe("sweeper", () => {
  it("sweeps expired jobs behind a full batch of jobs still waiting for their delivery", async () => {
    const t = setup();
    await enqueue(
      t,
      "mutation",
      keys(70).map((key) => ({ key })),
      {
        poolOptions: { statusTtl: 1_000 },
      },
    );
    await runUntil(t, async () => (await completions(t)).length === 70);
    // The first 60 to expire wait for their delivery (as large jobs do until it runs): the
    // sweeper must leave them, and not stop in front of the 10 behind them.
    const waiting = await inComponent(t, async (ctx) => {
      const rows = await ctx.db.query("work").withIndex("by_expiresAt").take(60);
      for (const row of rows) await ctx.db.patch("work", row._id, { deliveryPending: true });
      return rows.map((row: { _id: string }) => row._id);
    });
    await runFor(t, 30_000, 500);
    const left = await inComponent(t, async (ctx) => await ctx.db.query("work").collect());
    expect(left.map((row: { _id: string }) => row._id).sort()).toEqual([...waiting].sort());
  });
});

describe("main loop", () => {
  it("duplicate mains, of the chain or wake-ups, do not start work twice", async () => {
    const t = setup();
    await enqueue(
      t,
      "action",
      keys(5).map((key) => ({ key, ms: 500 })),
      { poolOptions: { maxParallelism: 10 } },
    );
    await inComponent(t, async (ctx) => {
      const loop = await ctx.db.query("loopState").first();
      const generation = loop?.generation ?? 0;
      const { internal } = await import("../src/component/_generated/api.js");
      // Two more passes of the chain for the current generation, and two more wake-ups (which
      // carry no generation and always run a pass).
      await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, { generation });
      await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, { generation });
      await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, {});
      await ctx.scheduler.runAfter(0, internal.mainLoop.main.main, {});
    });
    await runFor(t, 3000);
    for (const key of keys(5)) expect(probe.attempts.get(key)).toBe(1);
    expect(await completions(t)).toHaveLength(5);
    const state = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    expect(state.running).toBe(0);
  });
});

describe("bad input", () => {
  const cases: Array<[string, object, RegExp]> = [
    [
      "negative maxParallelism",
      { poolOptions: { maxParallelism: -1 } },
      /maxParallelism.*whole number/,
    ],
    ["fractional maxParallelism", { poolOptions: { maxParallelism: 1.5 } }, /maxParallelism/],
    ["infinite maxParallelism", { poolOptions: { maxParallelism: Infinity } }, /maxParallelism/],
    [
      "maxAttempts < 1",
      { options: { retry: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } } },
      /maxAttempts/,
    ],
    [
      "fractional maxAttempts",
      { options: { retry: { maxAttempts: 2.5, initialBackoffMs: 1, base: 2 } } },
      /maxAttempts/,
    ],
    [
      "negative initialBackoffMs",
      { options: { retry: { maxAttempts: 2, initialBackoffMs: -1, base: 2 } } },
      /initialBackoffMs/,
    ],
    [
      "infinite initialBackoffMs",
      { options: { retry: { maxAttempts: 2, initialBackoffMs: Infinity, base: 2 } } },
      /initialBackoffMs/,
    ],
    [
      "base < 1",
      { options: { retry: { maxAttempts: 2, initialBackoffMs: 1, base: 0.5 } } },
      /base/,
    ],
    ["both runAt and runAfter", { options: { runAt: Date.now(), runAfter: 5 } }, /runAt\/runAfter/],
    ["runAt not finite", { options: { runAt: NaN } }, /runAt/],
    ["runAfter not finite", { options: { runAfter: Infinity } }, /runAfter/],
    [
      "args + context over the size limit",
      { options: { context: "y".repeat(1_000_001) } },
      /fnArgs.*1000000 bytes/,
    ],
  ];
  for (const [name, extra, message] of cases) {
    it(`rejects ${name}, naming the argument, and writes nothing`, async () => {
      const t = setup();
      await enqueue(t, "action", [{ key: "seed" }]);
      const before = await componentRows(t);
      await expect(enqueue(t, "action", [{ key: "x" }], extra)).rejects.toThrow(message);
      expect(await componentRows(t)).toEqual(before);
    });
  }

  it("rejects a malformed id in status and cancel, and treats an unknown one as finished", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "a" }]);
    await runFor(t, 500);
    await expect(t.query(anyApi.pool.status, { id: "not-an-id" })).rejects.toThrow(/invalid id/);
    await expect(t.mutation(anyApi.pool.cancel, { id: "not-an-id" })).rejects.toThrow(/invalid id/);
    await inComponent(t, async (ctx) => await ctx.db.delete(id));
    expect(await t.query(anyApi.pool.status, { id })).toEqual({ state: "finished" });
    const before = await componentRows(t);
    await t.mutation(anyApi.pool.cancel, { id });
    expect(await componentRows(t)).toEqual(before);
  });

  it("accepts args + context up to the limit, storing them apart", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "big", value: "z".repeat(990_000) }]);
    await runFor(t, 1000);
    const [done] = await completions(t);
    expect(done.workId).toBe(id);
    expect(done.result.returnValue.length).toBe(990_000);
  });
});

describe("quiescence", () => {
  it("leaves no rows behind once all work is done and the status TTL has passed", async () => {
    const t = setup();
    await enqueue(
      t,
      "action",
      keys(8).map((key) => ({ key, failTimes: 1 })),
      {
        poolOptions: { statusTtl: 60_000 },
        options: { retry: true, context: { big: "c".repeat(10_000) } },
      },
    );
    await enqueue(t, "mutation", [{ key: "m" }], { poolOptions: { statusTtl: 60_000 } });
    await runFor(t, 5000, 50);
    expect(await completions(t)).toHaveLength(9);
    expect((await componentRows(t)).work).toHaveLength(9);
    await runFor(t, 90_000, 500);
    const rows = await componentRows(t);
    for (const table of PER_JOB_TABLES) {
      expect(rows[table], table).toEqual([]);
    }
  });
});

describe("logging", () => {
  function captureReports() {
    const reports: any[] = [];
    vi.spyOn(console, "info").mockImplementation((line: string) => {
      const parsed = JSON.parse(line);
      if (parsed.event === "report") reports.push(parsed);
    });
    return reports;
  }

  it("logs a structured report with counts, backlog and start lag", async () => {
    const t = setup({ logLevel: "REPORT" });
    const reports = captureReports();
    await enqueue(t, "action", [{ key: "a" }, { key: "b" }, { key: "c", failTimes: 1 }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await enqueue(t, "action", [{ key: "d", failTimes: 1 }]);
    await runFor(t, 5000);
    const total = (field: string) => reports.reduce((sum, r) => sum + r[field], 0);
    expect(total("started")).toBe(5);
    expect(total("succeeded")).toBe(3);
    expect(total("failed")).toBe(1);
    expect(total("retried")).toBe(1);
    expect(reports[0]).toMatchObject({ component: "workpool", level: "REPORT", backlog: 0 });
    // Lag values depend on harness warm-up (first module loads); their precision is checked by the
    // runAt tests, so here only their shape.
    expect(reports[0].startLagMsMax).toBeGreaterThanOrEqual(reports[0].startLagMsAvg);
    expect(reports[0].startLagMsAvg).toBeGreaterThanOrEqual(0);
  });

  it("prints no report at logLevel ERROR", async () => {
    const t = setup({ logLevel: "REPORT" });
    const reports = captureReports();
    await enqueue(t, "action", [{ key: "a" }], { poolOptions: { logLevel: "ERROR" } });
    await runFor(t, 2000);
    expect(await completions(t)).toHaveLength(1);
    expect(reports).toEqual([]);
  });
});

describe("statusTtl", () => {
  it("keeps a finished status and result forever with Infinity", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "keep" }], {
      poolOptions: { statusTtl: Number.POSITIVE_INFINITY },
    });
    await runFor(t, 3 * 24 * 60 * 60 * 1000, 60 * 60 * 1000);
    expect(await info(t, id)).toMatchObject({
      state: "finished",
      result: { kind: "success", returnValue: "keep" },
    });
  });

  it("forgets a finished job after the TTL (info then says null, status finished)", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "gone" }], {
      poolOptions: { statusTtl: 1000 },
    });
    await runFor(t, 500);
    expect(await info(t, id)).toMatchObject({ result: { kind: "success" } });
    await runFor(t, 20_000, 100);
    expect(await info(t, id)).toBeNull();
    expect(await t.query(anyApi.pool.status, { id })).toEqual({ state: "finished" });
  });

  it("a job that succeeded keeps its expiry, not its TTL; one that failed keeps the TTL for retry", async () => {
    const t = setup();
    const statusTtl = 60_000;
    const [ok, bad] = await enqueue(t, "mutation", [{ key: "ok" }, { key: "bad", failTimes: 1 }], {
      poolOptions: { statusTtl },
    });
    await runFor(t, 1000);
    const [okRow, badRow] = await inComponent(t, async (ctx) => [
      await ctx.db.get(ok),
      await ctx.db.get(bad),
    ]);
    // The finish rewrites the row whole: what no later step reads is left out of it.
    expect(okRow).toMatchObject({ state: { kind: "finished", result: { kind: "success" } } });
    expect(okRow.statusTtlMs).toBeUndefined();
    expect(okRow.expiresAt).toBe(okRow.state.finishedAt + statusTtl);
    expect(badRow).toMatchObject({ statusTtlMs: statusTtl, state: { result: { kind: "failed" } } });
    expect(badRow.expiresAt).toBe(badRow.state.finishedAt + statusTtl);
  });
});

describe("watchdog", () => {
  it("restarts the loop after a main pass throws, and the job is reported once", async () => {
    const t = setup();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const [id] = await enqueue(t, "action", [{ key: "w", ms: 200 }]);
    await runUntil(t, () => probe.running === 1);
    // The pass that processes this job's completion throws (decideCompletion draws its jitter).
    vi.spyOn(Math, "random").mockImplementationOnce(() => {
      throw new Error("injected fault in main");
    });
    await runFor(t, 1000);
    expect(await completions(t)).toEqual([]);
    await runFor(t, 130_000, 500);
    expect(await completions(t)).toEqual([
      expect.objectContaining({ workId: id, result: { kind: "success", returnValue: "w" } }),
    ]);
    const stalls = vi
      .mocked(console.error)
      .mock.calls.filter(([line]) => String(line).includes("loopStalled"));
    expect(stalls).toHaveLength(1);
  });

  it("restarts within its interval a loop that made passes since the last check and then died", async () => {
    const { t, deployment } = await setupDeployment({ seed: 11 });
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The loop leaves idle (arming the watchdog) and passes; the pass for the job due in 20 s
    // fails. A check that took "the generation moved" for "alive" waited a second interval.
    // No onComplete: no delivery wakes the loop either.
    const none = { onComplete: undefined };
    await enqueue(t, "mutation", [{ key: "now" }], none);
    await enqueue(t, "mutation", [{ key: "later" }], { ...none, options: { runAfter: 20_000 } });
    await deployment.run(500);
    expect(await jobStates(t)).toMatchObject({ pending: 1, finished: 1 });
    deployment.arm({ kind: "commitFails", fn: "main" });
    await deployment.run(21_000);
    expect(deployment.fired).toHaveLength(1);
    expect(deployment.stall).toBeDefined();
    await deployment.run(WATCHDOG_INTERVAL_MS - 2_000, 500);
    expect(deployment.stall).toBeUndefined();
    expect(await jobStates(t)).toMatchObject({ pending: 0, finished: 2 });
  });

  it("restarts a loop that dies while running hot on enqueued work alone", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    // 150 jobs from one enqueue: the woken pass starts a full batch (100) and runs hot. The chain's
    // next pass throws while starting the next batch; no cancel, no later enqueue, and the
    // completions that follow find the loop "running", so none of them wakes it.
    // The woken pass hands its full batch to action runners; the next pass's runner fails.
    const failed = failSchedules("actionRunner", 1, START_BATCH / ACTION_RUNNER_BATCH);
    const argsList = keys(150).map((key) => ({ key, ms: 2_000 }));
    await enqueue(t, "action", argsList, { poolOptions: { maxParallelism: 1000 } });
    await runFor(t, 5_000, 100);
    expect(failed.count).toBe(1);
    expect(await completions(t)).toEqual([]);
    await runFor(t, 2 * WATCHDOG_INTERVAL_MS, 1000);
    const done = await completions(t);
    expect(done).toHaveLength(150);
    expect(new Set(done.map((c) => c.workId)).size).toBe(150);
    const stalls = error.mock.calls.filter(([line]) => String(line).includes("loopStalled"));
    expect(stalls).toHaveLength(1);
  });

  it("restarts the pass an enqueue scheduled when it failed, and the job runs once", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    // The pass the enqueue woke throws while starting the job (its worker cannot be scheduled),
    // and nothing else happens in the pool to run another.
    const failed = failSchedules("worker", 1);
    const [id] = await enqueue(t, "mutation", [{ key: "woken" }]);
    await runFor(t, 5000, 100);
    expect(failed.count).toBe(1);
    expect(await completions(t)).toEqual([]);
    await runFor(t, 130_000, 1000);
    expect(await completions(t)).toEqual([
      expect.objectContaining({ workId: id, result: expect.objectContaining({ kind: "success" }) }),
    ]);
    expect(probe.attempts.get("woken")).toBe(1);
    const alarms = error.mock.calls.filter(([line]) => String(line).includes("wakeFailed"));
    expect(alarms).toHaveLength(1);
    // Nothing is left to watch: the check disarmed itself.
    const watch = await inComponent(t, async (ctx) => await ctx.db.query("wakeWatch").first());
    expect(watch.armed).toBe(false);
  });

  it("watches a wake-up whose pass ran while its job waits, once, then disarms", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    // A paused pool: the woken pass runs and starts nothing, so the row recording the wake-up
    // stays, with its job, past the watchdog's first check.
    const [id] = await enqueue(t, "action", [{ key: "waits" }], {
      poolOptions: { maxParallelism: 0 },
    });
    const wakeRow = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("pendingStart").first());
    const { wake } = await wakeRow();
    expect(wake).toBeDefined();
    await runFor(t, 70_000, 1000);
    // The check found the pass done, moved its cursor past the wake-up and disarmed: nothing left
    // to watch, no alarm, no extra pass; the job still waits, with its wake-up recorded.
    const watch = await inComponent(t, async (ctx) => await ctx.db.query("wakeWatch").first());
    expect(watch).toMatchObject({ armed: false, from: wake.segment + 1 });
    expect(error.mock.calls.filter(([line]) => String(line).includes("wakeFailed"))).toEqual([]);
    expect((await wakeRow()).wake).toEqual(wake);
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 10 });
    await runFor(t, 5000, 100);
    expect(await completions(t)).toEqual([expect.objectContaining({ workId: id })]);
  });

  it("moves its cursor past the wake-ups of jobs that started, so no check walks their rows", async () => {
    const t = setup();
    const enqueuedAt = Date.now();
    for (const key of ["a", "b", "c"]) {
      await enqueue(t, "mutation", [{ key }]);
      await runFor(t, 300, 100);
    }
    expect(await completions(t)).toHaveLength(3);
    await runFor(t, 70_000, 1000);
    const watch = await inComponent(t, async (ctx) => await ctx.db.query("wakeWatch").first());
    // The three rows are gone: the cursor is past them (a minute on, at the check), not below.
    expect(watch.armed).toBe(false);
    expect(watch.from).toBeGreaterThan(segmentOf(enqueuedAt) + 50);
    expect(watch.from).toBeLessThanOrEqual(segmentOf(Date.now()) + 1);
  });

  it("reads on past a full batch of settled wake-ups before it disarms", async () => {
    const t = setup();
    // Twelve jobs into a paused pool, each into a segment of its own: twelve wake-ups whose passes
    // run and leave their rows, more than one check reads.
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const options = { poolOptions: { maxParallelism: 0 } };
      ids.push(...(await enqueue(t, "action", [{ key: `w${i}` }], options)));
      await runFor(t, 200, 100);
    }
    const watch = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("wakeWatch").first());
    const wakes = await inComponent(
      t,
      async (ctx) => await ctx.db.query("pendingStart").withIndex("by_wake").collect(),
    );
    expect(wakes).toHaveLength(12);
    const last = wakes[11].wake.segment;
    await runFor(t, WATCHDOG_CHECK_MS + 1_000, 1000);
    // The first check read ten and stays armed; the next reads the rest and disarms.
    expect(await watch()).toMatchObject({ armed: true });
    expect((await watch()).from).toBeLessThanOrEqual(last);
    await runFor(t, WATCHDOG_CHECK_MS, 1000);
    expect(await watch()).toMatchObject({ armed: false, from: last + 1 });
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 10 });
    await runFor(t, 5000, 100);
    expect(await completions(t)).toHaveLength(12);
  });

  it("raises one alarm for one dead loop, even when its restart runs late", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const [id] = await enqueue(t, "action", [{ key: "w", ms: 200 }]);
    await runUntil(t, () => probe.running === 1);
    vi.spyOn(Math, "random").mockImplementationOnce(() => {
      throw new Error("injected fault in main");
    });
    await runFor(t, 1000);
    // From now on every pass, the watchdog's restart included, runs 90 s late: more than one
    // watchdog interval passes before the restart runs.
    delaySchedules("mainLoop/main:main", 90_000);
    await runFor(t, 400_000, 1000);
    expect(await completions(t)).toEqual([expect.objectContaining({ workId: id })]);
    const stalls = error.mock.calls.filter(([line]) => String(line).includes("loopStalled"));
    expect(stalls).toHaveLength(1);
  });

  it("does not cry stalled while the loop's next pass is due but late (a backed-up scheduler)", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error");
    // Every pass of the loop runs 90 s after the time it asked for: longer than a watchdog interval.
    const delayed = delaySchedules("mainLoop/main:main", 90_000);
    const [id] = await enqueue(t, "mutation", [{ key: "late" }]);
    await runFor(t, 400_000, 1000);
    expect(delayed.count).toBeGreaterThan(1);
    expect(await completions(t)).toEqual([
      expect.objectContaining({ workId: id, result: expect.objectContaining({ kind: "success" }) }),
    ]);
    expect(error).not.toHaveBeenCalled();
  });

  it("does not cry stalled when fake timers jump ahead (finishAllScheduledFunctions)", async () => {
    const t = setup();
    const error = vi.spyOn(console, "error");
    const warn = vi.spyOn(console, "warn");
    const ids = await enqueue(
      t,
      "action",
      keys(20).map((key) => ({ key, ms: 1000 })),
      { poolOptions: { maxParallelism: 4 } },
    );
    // Each round fires every timer at once: the clock leaps past watchdog checks (a minute) and
    // the sweep (a day) while the loop's passes are still starting.
    await t.finishAllScheduledFunctions(vi.runAllTimers, 1000);
    expect((await completions(t)).map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(error).not.toHaveBeenCalled();
    expect(warn).not.toHaveBeenCalled();
  });
});

describe("cancelAll", () => {
  it("cancels pending and running work, each reported once", async () => {
    const t = setup();
    const ids = await enqueue(
      t,
      "action",
      keys(30).map((key) => ({ key, ms: 500, failTimes: 1 })),
      {
        poolOptions: { maxParallelism: 5 },
        options: { retry: true },
        batch: true,
      },
    );
    await runUntil(t, () => probe.running === 5);
    await t.mutation(anyApi.pool.cancelAll, { limit: 7 });
    await runFor(t, 10_000, 50);
    const all = await completions(t);
    expect(all.map((c) => c.workId).sort()).toEqual([...ids].sort());
    // The five running ones failed their first attempt and were not retried; the rest never ran.
    expect(all.filter((c) => c.result.kind === "canceled")).toHaveLength(30);
    expect(probe.attempts.size).toBe(5);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 30 });
  });
});

describe("waking the loop", () => {
  it("a job due now is not held back by a delayed job enqueued just before it", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "later" }], { options: { runAfter: 60_000 } });
    await enqueue(t, "action", [{ key: "now" }]);
    await runFor(t, 1000);
    expect(probe.attempts.get("now")).toBe(1);
    expect(probe.attempts.get("later")).toBeUndefined();
  });
});
