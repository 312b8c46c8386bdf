/**
 * Every loop pass is a bounded transaction, whatever the backlog: with thousands of jobs waiting (1,500
 * under `npm test`, 5,000 under `npm run test:slow`), each pass
 * reads and writes at most a fixed number of documents. The loop logs its own transaction metrics
 * (from convex-test's per-transaction tracking) at DEBUG level; this test reads those lines.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMPLETION_BATCH } from "../src/component/complete.js";
import { CANCEL_BATCH } from "../src/component/cancel.js";
import { RECOVERY_BATCH } from "../src/component/recovery.js";
import { START_BATCH } from "../src/component/start.js";
import { probe } from "./app/probe.js";
import { completions, enqueue, runFor, runUntil, setup } from "./helpers.js";
import { onTopLevelTransaction } from "../bench/instrument.js";
import { recordedPasses } from "./passBudget.js";
import { count, scaled } from "./scale.js";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Documents one pass may read: per started job 4, per completion 4 (+1 onComplete insert read 0),
 * per cancelation 5, per recovered job 2, plus a fixed dozen for singletons and probes. */
const PASS_READ_BOUND =
  START_BATCH * 4 + COMPLETION_BATCH * 4 + CANCEL_BATCH * 5 + RECOVERY_BATCH * 2 + 12;

describe("bounded transactions", () => {
  // Fifteen times the jobs one pass may start, or fifty under test:slow.
  const backlog = scaled(1_500, 5_000);
  it(`keeps every loop pass under a fixed document count with a ${count(backlog)}-job backlog`, async () => {
    const t = setup();
    const passes: Array<{ documentsRead: number; documentsWritten: number }> = [];
    vi.spyOn(console, "debug").mockImplementation((line: string) => {
      const parsed = JSON.parse(line);
      if (parsed.event === "pass") passes.push(parsed);
    });
    vi.spyOn(console, "info").mockImplementation(() => {});
    const poolOptions = { maxParallelism: 100, logLevel: "DEBUG" };
    for (let batch = 0; batch * 500 < backlog; batch++) {
      const size = Math.min(500, backlog - batch * 500);
      const argsList = Array.from({ length: size }, (_, i) => ({ key: `k${batch}-${i}` }));
      await enqueue(t, "mutation", argsList, { batch: true, poolOptions });
    }
    await runFor(t, 3000, 50);
    expect(passes.length).toBeGreaterThan(20);
    const maxRead = Math.max(...passes.map((p) => p.documentsRead));
    const maxWritten = Math.max(...passes.map((p) => p.documentsWritten));
    expect(maxRead).toBeLessThanOrEqual(PASS_READ_BOUND);
    expect(maxRead).toBeLessThanOrEqual(1000);
    expect(maxWritten).toBeLessThanOrEqual(START_BATCH * 2 + COMPLETION_BATCH * 3 + 4);
    // The backlog is being drained, not starved.
    expect((await completions(t)).length).toBeGreaterThan(Math.min(1000, backlog / 2));
  }, 300_000);
});

describe("bounded transactions with keys", () => {
  /** The most documents any loop pass of this test read, from convex-test's transaction metrics. */
  const maxPassRead = () => recordedPasses().max.documentsRead;

  // A key's backlog is read once, when due, and then only at its head.
  const hot = scaled(2_000, 10_000);
  it(`keeps passes bounded, and unkeyed jobs flowing, beside one key with ${count(hot)} queued jobs`, async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 20 };
    for (let batch = 0; batch * 1000 < hot; batch++) {
      const size = Math.min(1000, hot - batch * 1000);
      const argsList = Array.from({ length: size }, (_, i) => ({
        key: `hot:${batch * 1000 + i}`,
        ms: 3_600_000,
      }));
      await enqueue(t, "action", argsList, { batch: true, poolOptions, options: { key: "hot" } });
    }
    await runFor(t, 2000, 50);
    const lags: number[] = [];
    for (let round = 0; round < 10; round++) {
      const enqueuedAt = Date.now();
      const argsList = Array.from({ length: 5 }, (_, i) => ({ key: `s${round}-${i}` }));
      await enqueue(t, "mutation", argsList, { poolOptions });
      await runFor(t, 200, 10);
      for (const args of argsList) lags.push(probe.starts.get(args.key)![0] - enqueuedAt);
    }
    expect(Math.max(...lags)).toBeLessThanOrEqual(200);
    expect(probe.groupMax.get("hot")).toBe(1);
    expect(maxPassRead()).toBeLessThanOrEqual(PASS_READ_BOUND);
  }, 600_000);

  // Each of many keys costs what an unkeyed job does, plus its key's rows, however many keys exist:
  // a second wave of four times as many keys reads no more per job than the first. (convex-test
  // scans every document for each index lookup, so its wall time grows with the square of the
  // keys; the reads it counts, which are what a deployment pays, do not.)
  const firstWave = scaled(250, 600);
  it(`keeps passes bounded with ${count(firstWave * 5)} distinct keys of one job each`, async () => {
    const t = setup();
    const wave = async (from: number, size: number) => {
      let poolReads = 0;
      const stop = onTopLevelTransaction((fn, total) => {
        if (fn.startsWith("workpool:")) poolReads += total.documentsRead;
      });
      await enqueueDistinctKeys(t, from, size);
      await runUntil(t, () => probe.attempts.size === from + size, 600_000);
      await runFor(t, 1000);
      stop();
      return poolReads / size;
    };
    const first = await wave(0, firstWave);
    const second = await wave(firstWave, firstWave * 4);
    expect(second).toBeLessThanOrEqual(first * 1.1);
    expect(maxPassRead()).toBeLessThanOrEqual(PASS_READ_BOUND);
  }, 1_200_000);
});

/** Enqueues mutation jobs `from`..`from + size - 1`, each with a key of its own, straight to the
 * component's enqueueBatch (the client gives every job of a batch one key). */
async function enqueueDistinctKeys(t: any, from: number, size: number) {
  for (let batch = 0; batch * 1000 < size; batch++) {
    const items = Array.from({ length: Math.min(1000, size - batch * 1000) }, (_, i) => {
      const key = `d${from + batch * 1000 + i}`;
      return {
        fnHandle: "$handle:jobs.mutation",
        fnName: "jobs:mutation",
        fnArgs: { key },
        fnType: "mutation",
        key,
      };
    });
    await t.mutation(anyApi.pool.callComponent, {
      fn: "lib.enqueueBatch",
      args: { items, config: { maxParallelism: 100 } },
    });
  }
}
