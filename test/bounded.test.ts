/**
 * Every loop pass is a bounded transaction, whatever the backlog: with thousands of jobs waiting (1,500
 * under `npm test`, 5,000 under `npm run test:slow`), each pass
 * reads and writes at most a fixed number of documents. The loop logs its own transaction metrics
 * (from convex-test's per-transaction tracking) at DEBUG level; this test reads those lines.
 */
import { describe, expect, it, vi } from "vitest";
import { COMPLETION_BATCH } from "../src/component/mainLoop/complete.js";
import { START_BATCH } from "../src/component/mainLoop/start.js";
import { onTopLevelTransaction } from "../bench/instrument.js";
import { completions, enqueue, runFor, runUntil, setup } from "./helpers.js";
import { PASS_READ_BOUND } from "./passBudget.js";
import { count, scaled } from "./scale.js";

describe("bounded transactions", () => {
  // Fifteen times the jobs one pass may start, or fifty under test:slow.
  const backlog = scaled(1_500, 5_000);
  it(`keeps every loop pass under a fixed document count with a ${count(backlog)}-job backlog`, async () => {
    const t = setup();
    const passes = debugPasses();
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

  it("reads only as many due rows as it has room to start", async () => {
    const passes = debugPasses();
    const t = setup();
    const argsList = Array.from({ length: 300 }, (_, i) => ({ key: `j${i}` }));
    await enqueue(t, "mutation", argsList, {
      batch: true,
      poolOptions: { maxParallelism: 2, logLevel: "DEBUG" },
    });
    await runFor(t, 3000, 50);
    expect(passes.length).toBeGreaterThan(20);
    // A pass with two free slots starts two jobs and finishes two: a few dozen reads, not the
    // hundred due rows a batch-sized read would take. (The median skips the report's backlog scan.)
    const reads = passes.map((p) => p.documentsRead).sort((a, b) => a - b);
    expect(reads[Math.floor(reads.length / 2)]).toBeLessThanOrEqual(40);
    expect((await completions(t)).length).toBeGreaterThan(20);
  });
});

describe("priority costs", () => {
  // Measured: 9.56 documents read and 9.27 written per job at every level (240 mutations).
  const JOBS = 240;
  it("a backlog of low or high priority costs no more per job than a normal one", async () => {
    const costOf = async (priority: string) => {
      const t = setup();
      let read = 0;
      let written = 0;
      const stop = onTopLevelTransaction((_fn, total) => {
        read += total.documentsRead;
        written += total.documentsWritten;
      });
      const jobs = Array.from({ length: JOBS }, (_, i) => ({ key: `${priority}${i}` }));
      await enqueue(t, "mutation", jobs, {
        batch: true,
        poolOptions: { maxParallelism: 20 },
        options: { priority },
      });
      await runUntil(t, async () => (await completions(t)).length === JOBS, 60_000);
      stop();
      return { read: read / JOBS, written: written / JOBS };
    };
    const normal = await costOf("normal");
    for (const priority of ["low", "high"]) {
      const cost = await costOf(priority);
      expect(cost.read, `${priority}: documents read per job`).toBeLessThanOrEqual(
        normal.read * 1.1,
      );
      expect(cost.written, `${priority}: documents written per job`).toBeLessThanOrEqual(
        normal.written * 1.1,
      );
    }
  }, 120_000);
});

/** Collects the loop's per-pass metrics lines (logged at DEBUG). */
function debugPasses(): Array<{ documentsRead: number; documentsWritten: number }> {
  const passes: Array<{ documentsRead: number; documentsWritten: number }> = [];
  vi.spyOn(console, "debug").mockImplementation((line: string) => {
    const parsed = JSON.parse(line);
    if (parsed.event === "pass") passes.push(parsed);
  });
  vi.spyOn(console, "info").mockImplementation(() => {});
  return passes;
}
