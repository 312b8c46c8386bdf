/**
 * The batch run alone (src/component/runners/batchRun.ts), with a stand-in for the pool's
 * `report`, on the virtual clock: the limits an executor keeps by its own count (the results it
 * holds unreported, its time limit), which an end-to-end test can see only from outside.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import {
  BatchRun,
  CANCEL_ABORT_BOUND_MS,
  CHECK_IN_INTERVAL_MS,
  EXECUTOR_BUDGET_MS,
  HELD_RESULT_BYTES_LIMIT,
  type BatchRunner,
  type Handed,
  type Outcome,
  type ReportAnswer,
  type ReportRequest,
} from "../src/component/runners/batchRun.js";
import { valueSizeBytes } from "../src/component/model/valueMeasure.js";
import { advance, startVirtualClock } from "./virtualClock.js";

afterEach(() => {
  vi.useRealTimers();
});

const handed = (i: number): Handed => ({
  workId: `w${i}`,
  attempt: 1,
  previousAttempts: 0,
  task: "io",
  fnArgs: { i },
});

const NOTHING: ReportAnswer = { tasks: [], cancels: [], more: false, stop: false };

/** A stand-in pool: answers each report after `latencyMs` with what `answer` says for its call
 * number, and keeps what it was sent. */
function standInPool(answer: (call: number) => Partial<ReportAnswer>, latencyMs = 50) {
  const pool = {
    outcomes: [] as Outcome[],
    requests: [] as ReportRequest[],
    /** Bytes of results in reports sent and not yet answered: the most at once. */
    inFlightBytes: 0,
    peakInFlightBytes: 0,
    report: async (request: ReportRequest): Promise<ReportAnswer> => {
      const call = pool.requests.push(request);
      const bytes = request.outcomes.reduce((sum, o) => sum + valueSizeBytes(o.result), 0);
      pool.inFlightBytes += bytes;
      pool.peakInFlightBytes = Math.max(pool.peakInFlightBytes, pool.inFlightBytes);
      await new Promise((resolve) => setTimeout(resolve, latencyMs));
      pool.inFlightBytes -= bytes;
      pool.outcomes.push(...request.outcomes);
      // As the pool does: a last report that brings nothing ends the run.
      return { ...NOTHING, stop: request.ending === true, ...answer(call) };
    },
  };
  return pool;
}

/** A runner of `concurrency` whose jobs run `execute`; every job's time limit is `timeoutMs`. */
function runner(
  pool: ReturnType<typeof standInPool>,
  concurrency: number,
  execute: BatchRunner["execute"],
  timeoutMs = 60_000,
): BatchRunner {
  return {
    concurrency,
    noun: "task",
    budgetMs: EXECUTOR_BUDGET_MS,
    report: pool.report,
    timeoutOf: () => timeoutMs,
    refuse: () => undefined,
    execute,
  };
}

/** Runs `run` to its end on the virtual clock, advancing at most `limitMs` in steps of `stepMs`. */
async function runToEnd(run: BatchRun, limitMs: number, stepMs = 100): Promise<void> {
  let ended = false;
  const done = run.run().finally(() => {
    ended = true;
  });
  const end = Date.now() + limitMs;
  while (!ended && Date.now() < end) await advance(stepMs, stepMs);
  expect(ended, "the run ended").toBe(true);
  await done;
}

describe("a batch run's limits", () => {
  it("holds at most 8 MiB of unreported results: 20 jobs returning 900 KB at once, every result reported once", async () => {
    startVirtualClock();
    const tasks = Array.from({ length: 20 }, (_, i) => handed(i));
    const pool = standInPool((call) => (call === 1 ? { tasks } : {}));
    const result = "x".repeat(900_000);
    const run = new BatchRun(
      runner(pool, 20, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return result;
      }),
    );
    await runToEnd(run, 60_000);
    expect(pool.peakInFlightBytes).toBeLessThanOrEqual(HELD_RESULT_BYTES_LIMIT);
    expect(run.peakHeldBytes).toBeLessThanOrEqual(HELD_RESULT_BYTES_LIMIT);
    // It held as much as it could, not one result at a time.
    expect(run.peakHeldBytes).toBeGreaterThan(HELD_RESULT_BYTES_LIMIT / 2);
    const ids = pool.outcomes.map((o) => o.workId).sort();
    expect(ids).toEqual(tasks.map((task) => task.workId).sort());
    expect(pool.outcomes.every((o) => o.result.kind === "success")).toBe(true);
  });

  it("says in every report how many jobs it can start now", async () => {
    startVirtualClock();
    const tasks = Array.from({ length: 3 }, (_, i) => handed(i));
    const pool = standInPool((call) => (call === 1 ? { tasks } : {}));
    const run = new BatchRun(
      runner(pool, 5, () => new Promise((resolve) => setTimeout(() => resolve(null), 3_000))),
    );
    await runToEnd(run, 60_000);
    // The first report: all five slots; a check-in while three run: two.
    expect(pool.requests[0]).toMatchObject({ concurrency: 5, room: 5 });
    expect(pool.requests.some((request) => request.room === 2)).toBe(true);
  });

  it("does not start a job with less than its time limit left: it goes back, no attempt used", async () => {
    startVirtualClock();
    const pool = standInPool(() => ({}));
    const execute = vi.fn(async () => null);
    const run = new BatchRun({
      ...runner(pool, 5, execute, EXECUTOR_BUDGET_MS + 1_000),
      batch: [handed(0)],
    });
    await runToEnd(run, 10_000);
    expect(execute).not.toHaveBeenCalled();
    expect(pool.outcomes).toEqual([
      { workId: "w0", attempt: 1, result: { kind: "snoozed", delayMs: 0, fnArgs: { i: 0 } } },
    ]);
  });

  it("fails a job still running at its time limit, saying so, and aborts its signal", async () => {
    startVirtualClock();
    // Canceled at its first check-in, and its handler ignores the signal: its own time limit
    // (60 s) no longer ends it, so it runs until the executor's does.
    const pool = standInPool((call) =>
      call === 1 ? { tasks: [handed(0)] } : call === 2 ? { cancels: ["w0"] } : {},
    );
    let signal: AbortSignal | undefined;
    const run = new BatchRun(
      runner(pool, 5, (_handed, aborted) => {
        signal = aborted;
        return new Promise(() => {});
      }),
    );
    await runToEnd(run, EXECUTOR_BUDGET_MS + 60_000, 5_000);
    expect(pool.outcomes).toEqual([
      {
        workId: "w0",
        attempt: 1,
        result: {
          kind: "failed",
          error: "workpool: the executor reached its time limit before the task ended",
          fnArgs: { i: 0 },
        },
      },
    ]);
    expect(signal?.aborted).toBe(true);
    // Its last report says it ends.
    expect(pool.requests.at(-1)).toMatchObject({ ending: true });
  });

  it("takes nothing at its time limit: its last reports say room 0, so the pool keeps (and takes back) what waits for it", async () => {
    startVirtualClock();
    // A canceled task whose handler ignores its signal holds every slot until the time limit.
    const pool = standInPool((call) =>
      call === 1
        ? { tasks: [0, 1, 2, 3, 4].map(handed) }
        : call === 2
          ? { cancels: ["w0", "w1", "w2", "w3", "w4"] }
          : {},
    );
    const run = new BatchRun(runner(pool, 5, () => new Promise(() => {})));
    await runToEnd(run, EXECUTOR_BUDGET_MS + 60_000, 5_000);
    const last = pool.requests.filter((request) => request.ending);
    expect(last.length).toBeGreaterThan(0);
    // Before, it said room 5, took what the pool had handed it meanwhile, and dropped it unrun.
    for (const request of last) expect(request.room).toBe(0);
  });

  it("keeps its check-ins close enough for the cancel bound: a check-in and the pass that hands a cancel over (two segments) fit in it", () => {
    expect(CHECK_IN_INTERVAL_MS + 2 * SEGMENT_MS).toBeLessThan(CANCEL_ABORT_BOUND_MS);
    expect(CANCEL_ABORT_BOUND_MS).toBe(2_500); // the figure API-EXTENSIONS section 8 promises
  });
});
