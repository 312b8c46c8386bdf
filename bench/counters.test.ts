/**
 * The benchmark's counters (bench/instrument.ts) on cases small enough to know the answer: a
 * transaction with known reads and writes, checked against convex-test's own
 * `ctx.meta.getTransactionMetrics()`, and one job through our pool, checked against what the app did
 * and against the component's `_scheduled_functions` rows. Also the key checks of the harness: that
 * they see a key over its limit and a key's jobs out of order, and what a small keyed run gives; and
 * the rate-limit and priority checks (checks.ts): that they see a window over the limit, a slow
 * rate and a low job ahead of a waiting high one, and that a small rate-limited run records the
 * pool's starts without printing them. Billed bandwidth (each document at least 1 KiB) is checked
 * on both cases too.
 */
import { convexTest } from "convex-test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "./app/_generated/api.js";
import schema from "./app/schema.js";
import { probe } from "./app/probe.js";
import { priorityChecks, rateChecks } from "./checks.js";
import { appModules, keyChecks, runScenario, type Scenario } from "./harness.js";
import { installInstrumentation, MIN_BILLED_DOCUMENT_BYTES, resetCounters } from "./instrument.js";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("bench counters", () => {
  it("attribute a transaction's reads and writes to the functions that made them", async () => {
    installInstrumentation();
    const t = convexTest({ schema, modules: appModules } as any);
    const counters = resetCounters();
    const r = await t.mutation(api.calibrate.writeThenRead, { n: 7 });
    expect(r.read).toBe(7);
    const mutation = counters.usageByFunction.get("app:calibrate:writeThenRead (mutation)")!;
    const query = counters.usageByFunction.get("app:calibrate:readAll (query)")!;
    // The mutation's own: 7 inserts; the nested query's own: the 7 reads.
    expect(mutation.docsWritten).toBe(7);
    expect(mutation.docsRead).toBe(0);
    expect(query.docsRead).toBe(7);
    expect(query.docsWritten).toBe(0);
    // Together they are the transaction, exactly as convex-test reports it from inside.
    expect(mutation.docsRead + query.docsRead).toBe(r.documentsRead);
    expect(mutation.bytesRead + query.bytesRead).toBe(r.bytesRead);
    expect(mutation.docsWritten + query.docsWritten).toBe(r.documentsWritten);
    expect(mutation.bytesWritten + query.bytesWritten).toBe(r.bytesWritten);
    // Billed bandwidth: each of the 7 small documents (about 130 bytes) counts for 1 KiB, once
    // written and once read.
    expect(r.bytesWritten / 7).toBeLessThan(MIN_BILLED_DOCUMENT_BYTES);
    expect(mutation.billedBytesWritten).toBe(7 * MIN_BILLED_DOCUMENT_BYTES);
    expect(query.billedBytesRead).toBe(7 * MIN_BILLED_DOCUMENT_BYTES);
    expect(mutation.billedBytesRead + query.billedBytesWritten).toBe(0);
    expect(counters.transactions).toBe(1);
    expect(counters.maxTxDocsRead).toBe(7);
    expect(counters.maxTxBytesRead).toBe(r.bytesRead);
    expect(counters.invocations.app).toEqual({ query: 1, mutation: 1, action: 0 });
    expect(counters.invocations.pool).toEqual({ query: 0, mutation: 0, action: 0 });
    // convex-test's own helpers are not counted.
    await t.run(async (ctx: any) => await ctx.db.query("scratch").collect());
    expect(counters.transactions).toBe(1);
    expect(counters.invocations.app.mutation).toBe(1);
  });

  it("count one job through our pool", async () => {
    vi.spyOn(console, "info").mockImplementation(() => {});
    vi.spyOn(console, "log").mockImplementation(() => {});
    const sc: Scenario = {
      id: "one",
      title: "one action of 1 s",
      kind: "action",
      jobs: 1,
      maxParallelism: 10,
      ms: 1000,
      failTimes: 0,
      expectKind: "success",
      deadlineMs: 30_000,
    };
    const r = await runScenario("ours", sc);
    const c = r.counters;
    // The app: one enqueue mutation, the job itself, one onComplete.
    expect(c.invocations.app).toEqual({ query: 0, mutation: 2, action: 1 });
    expect(c.byFunction.get("app:pools:enqueue (mutation)")).toBe(1);
    expect(c.byFunction.get("app:jobs:work (action)")).toBe(1);
    expect(c.byFunction.get("app:jobs:onComplete (mutation)")).toBe(1);
    // The app's own writes: the onComplete row, nothing else; its reads: none.
    expect(c.usage.app.docsWritten).toBe(1);
    expect(c.usage.app.docsRead).toBe(0);
    // Every pool function that ran as a scheduled function was counted, by name.
    const scheduled = (await (r.backend as any).runInComponent(
      "ours",
      async (ctx: any) => await ctx.db.system.query("_scheduled_functions").collect(),
    )) as Array<{ name: string; state: { kind: string } }>;
    const ran = new Map<string, number>();
    for (const s of scheduled) {
      if (s.state.kind === "success" || s.state.kind === "failed")
        ran.set(s.name, (ran.get(s.name) ?? 0) + 1);
    }
    expect(ran.size).toBeGreaterThan(0);
    let scheduledCalls = 0;
    for (const [name, n] of ran) {
      const counted = [...c.byFunction]
        .filter(([k]) => k.startsWith(`ours:${name} (`))
        .reduce((s, [, v]) => s + v, 0);
      expect(counted, name).toBeGreaterThanOrEqual(n);
      scheduledCalls += n;
    }
    const pool = c.invocations.pool;
    // Beyond the scheduled ones, the pool was called by the app's enqueue (and possibly by its own worker).
    expect(pool.query + pool.mutation + pool.action).toBeGreaterThanOrEqual(scheduledCalls + 1);
    // Per-function usage adds up to the transactions' totals.
    expect(c.usage.app.docsRead + c.usage.pool.docsRead).toBe(c.txTotal.docsRead);
    expect(c.usage.app.docsWritten + c.usage.pool.docsWritten).toBe(c.txTotal.docsWritten);
    expect(c.usage.app.bytesRead + c.usage.pool.bytesRead).toBe(c.txTotal.bytesRead);
    expect(c.usage.app.bytesWritten + c.usage.pool.bytesWritten).toBe(c.txTotal.bytesWritten);
    expect(c.usage.app.billedBytesRead + c.usage.pool.billedBytesRead).toBe(
      c.txTotal.billedBytesRead,
    );
    expect(c.usage.app.billedBytesWritten + c.usage.pool.billedBytesWritten).toBe(
      c.txTotal.billedBytesWritten,
    );
    // Every document counts for at least 1 KiB, and a larger one for its size.
    const used = c.usage.pool;
    expect(used.billedBytesRead).toBeGreaterThanOrEqual(used.docsRead * MIN_BILLED_DOCUMENT_BYTES);
    expect(used.billedBytesRead).toBeGreaterThanOrEqual(used.bytesRead);
    expect(used.billedBytesWritten).toBeGreaterThanOrEqual(
      used.docsWritten * MIN_BILLED_DOCUMENT_BYTES,
    );
    expect(c.usage.pool.docsWritten).toBeGreaterThan(0);
    expect(c.maxTxDocsRead).toBeGreaterThan(0);
    // Timing: one attempt of exactly 1 s, started after enqueue, finished within the makespan.
    expect(r.completions).toEqual({ success: 1, failed: 0, canceled: 0 });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    expect(r.maxConcurrency).toBe(1);
    expect(r.busyMs).toBe(1000);
    expect(r.lags).toHaveLength(1);
    expect(r.lags[0]).toBeGreaterThanOrEqual(0);
    expect(r.makespanMs).toBeGreaterThanOrEqual(r.lags[0] + 1000);
  }, 60_000);

  it("see a key over its limit and a key's jobs out of order", () => {
    probe.reset();
    for (const [job, poolKey] of [
      ["j0", "a"],
      ["j1", "b"],
      ["j2", "a"],
      ["j3", "a"],
    ]) {
      probe.enqueuedAt.set(job, 0);
      probe.poolKeyOf.set(job, poolKey);
    }
    // a's third job starts while its first runs, and before its second.
    const first = probe.enter("j0").record;
    probe.enter("j3");
    probe.exit(first);
    probe.enter("j2");
    probe.enter("j1");
    expect(keyChecks(probe)).toEqual({
      keys: 2,
      maxConcurrency: 2,
      maxConcurrencyKey: "a",
      outOfOrder: 1,
      firstOutOfOrder: "key a: j2 (its job #2) started after j3 (#3)",
    });
    probe.reset();
  });

  it("check a keyed run's keys as its jobs saw them", async () => {
    vi.spyOn(console, "info").mockImplementation(() => {});
    vi.spyOn(console, "log").mockImplementation(() => {});
    const r = await runScenario("ours", {
      id: "keyed",
      title: "20 actions of 1 s over 2 keys, keyParallelism 2",
      kind: "action",
      jobs: 20,
      maxParallelism: 10,
      keyParallelism: 2,
      keys: { count: 2, layout: "grouped" },
      ms: 1000,
      failTimes: 0,
      expectKind: "success",
      deadlineMs: 60_000,
    });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    // Two keys of 10 jobs each, two of each key at once: 4 at once.
    expect(r.maxConcurrency).toBe(4);
    expect(r.keyChecks).toEqual({
      keys: 2,
      maxConcurrency: 2,
      maxConcurrencyKey: "k0",
      outOfOrder: 0,
    });
  }, 60_000);

  it("see a window over the rate limit and a rate under it", () => {
    const limit = { starts: 2, periodMs: 1000 };
    // Two starts a period, each group exactly a period apart: as fast as the limit allows. The
    // window is half-open, so the starts at 1000 are not in the one beginning at 0. Any order.
    expect(rateChecks([2000, 1000, 0, 1000, 0], limit)).toEqual({
      starts: 5,
      spanMs: 2000,
      minSpanMs: 2000,
      achieved: 1,
      busiest: 2,
      busiestAt: 0,
    });
    // Three starts within [0, 1000): over the limit.
    expect(rateChecks([0, 500, 999, 1000], limit)).toMatchObject({ busiest: 3, busiestAt: 0 });
    // The same five starts at half the rate the limit allows.
    expect(rateChecks([0, 0, 2000, 2000, 4000], limit)).toMatchObject({
      spanMs: 4000,
      minSpanMs: 2000,
      achieved: 0.5,
      busiest: 2,
    });
    // The busiest window need not begin at the first start; its beginning is after the first.
    expect(rateChecks([100, 1200, 1300, 1400], { starts: 3, periodMs: 1000 })).toMatchObject({
      busiest: 3,
      busiestAt: 1100,
    });
  });

  it("see a low job start ahead of a waiting high one", () => {
    const c = priorityChecks({
      enqueuedAt: new Map([
        ["l0", 0],
        ["l1", 0],
        ["l2", 0],
        ["l3", 0],
        ["l4", 0],
        ["h0", 1000],
        ["h1", 2000],
      ]),
      priorityOf: new Map([
        ["l0", "low"],
        ["l1", "low"],
        ["l2", "low"],
        ["l3", "low"],
        ["l4", "low"],
        ["h0", "high"],
        ["h1", "high"],
      ]),
      attempts: [
        { key: "l0", start: 0 },
        // Within one segment of h0's enqueue: no inversion.
        { key: "l1", start: 1050 },
        // While h0 waits: an inversion.
        { key: "l2", start: 1200 },
        // As h0 starts: none.
        { key: "l3", start: 1300 },
        { key: "h0", start: 1300 },
        // h1 never starts: a low start after its enqueue and the grace is an inversion.
        { key: "l4", start: 2500 },
      ],
    });
    expect(c).toEqual({
      highLags: [300],
      lowLags: [0, 1050, 1200, 1300, 2500],
      inversions: 2,
      firstInversion:
        "low l2 started 200 ms after high h0 was enqueued, which started 300 ms after",
    });
  });

  it("record the pool's starts under a rate limit, printing none", async () => {
    vi.spyOn(console, "info").mockImplementation(() => {});
    vi.spyOn(console, "log").mockImplementation(() => {});
    const debug = vi.spyOn(console, "debug").mockImplementation(() => {});
    const r = await runScenario("ours", {
      id: "rate",
      title: "12 actions of 10 ms, at most 5 starts per second",
      kind: "action",
      jobs: 12,
      maxParallelism: 10,
      rateLimit: { starts: 5, periodMs: 1000 },
      ms: 10,
      failTimes: 0,
      expectKind: "success",
      deadlineMs: 30_000,
      sides: ["ours"],
    });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    // One start per job, five a period at most: the last two periods after the first.
    expect(r.rateChecks).toMatchObject({ starts: 12, minSpanMs: 2000, busiest: 5 });
    expect(r.rateChecks!.achieved).toBeGreaterThanOrEqual(0.9);
    // The pool's debug lines went to the harness, not to console.debug, which is back in place.
    expect(debug).not.toHaveBeenCalled();
    expect(console.debug).toBe(debug);
  }, 60_000);
});
