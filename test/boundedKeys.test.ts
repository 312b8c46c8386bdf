/**
 * Every loop pass stays bounded with keys, at any shape of keyed load: beside one key with
 * thousands of queued jobs (which unkeyed jobs must not wait behind), and over thousands of distinct
 * keys (which must cost no more per job as their number grows). Sizes: test/scale.ts.
 */
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { onTopLevelTransaction } from "../bench/instrument.js";
import { probe } from "./app/probe.js";
import { enqueue, runFor, runUntil, setup } from "./helpers.js";
import { PASS_READ_BOUND, recordedPasses } from "./passBudget.js";
import { count, scaled } from "./scale.js";

describe("bounded transactions with keys", () => {
  /** The most documents any loop pass of this test read, from convex-test's transaction metrics. */
  const maxPassRead = () => recordedPasses().max.documentsRead;

  // A key's backlog is read once, when due, and then only at its head.
  const hot = scaled(1_000, 10_000);
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
  const firstWave = scaled(150, 600);
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
