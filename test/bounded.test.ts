/**
 * Every loop pass is a bounded transaction, whatever the backlog: with 5,000 jobs waiting, each pass
 * reads and writes at most a fixed number of documents. The loop logs its own transaction metrics
 * (from convex-test's per-transaction tracking) at DEBUG level; this test reads those lines.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { COMPLETION_BATCH } from "../src/component/complete.js";
import { CANCEL_BATCH } from "../src/component/cancel.js";
import { RECOVERY_BATCH } from "../src/component/recovery.js";
import { START_BATCH } from "../src/component/start.js";
import { completions, enqueue, runFor, setup } from "./helpers.js";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Documents one pass may read: per started job 4, per completion 4 (+1 onComplete insert read 0),
 * per cancelation 5, per recovered job 2, plus a fixed dozen for singletons and probes. */
const PASS_READ_BOUND =
  START_BATCH * 4 + COMPLETION_BATCH * 4 + CANCEL_BATCH * 5 + RECOVERY_BATCH * 2 + 12;

describe("bounded transactions", () => {
  it("keeps every loop pass under a fixed document count with a 5,000-job backlog", async () => {
    const t = setup();
    const passes: Array<{ documentsRead: number; documentsWritten: number }> = [];
    vi.spyOn(console, "debug").mockImplementation((line: string) => {
      const parsed = JSON.parse(line);
      if (parsed.event === "pass") passes.push(parsed);
    });
    vi.spyOn(console, "info").mockImplementation(() => {});
    const poolOptions = { maxParallelism: 100, logLevel: "DEBUG" };
    for (let batch = 0; batch < 5; batch++) {
      const argsList = Array.from({ length: 1000 }, (_, i) => ({ key: `k${batch}-${i}` }));
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
    expect((await completions(t)).length).toBeGreaterThan(1000);
  }, 300_000);
});
