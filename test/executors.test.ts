/**
 * Executors (API-EXTENSIONS section 8): tasks are jobs of the pool that run many at once inside an
 * executor action. Driven end to end through the test app (test/app/tasks.ts: an executor of
 * concurrency 5 with tasks `io`, `quick` and `throwsAtOnce`) on the virtual clock (helpers.ts).
 */
import { anyApi } from "convex/server";
import { CANCEL_ABORT_BOUND_MS } from "../src/component/runners/batchRun.js";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { run as executorAction, signals } from "./app/tasks.js";
import {
  completions,
  inComponent,
  info,
  interceptSyscalls,
  killRunnerAtNextReport,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

/** Enqueues `io` tasks (one per element) with the given options; returns their ids. */
async function enqueueIo(
  t: T,
  argsList: Array<Record<string, unknown>>,
  extra: { poolOptions?: object; options?: object; batch?: boolean; task?: string } = {},
): Promise<string[]> {
  return await t.mutation(anyApi.tasks.enqueueIo, { argsList, ...extra });
}

/** The executor actions the pool started, from the component's scheduler records. */
async function executorRuns(t: T): Promise<number> {
  return await inComponent(t, async (ctx) => {
    const runs = await ctx.db.system.query("_scheduled_functions").collect();
    return runs.filter((run: { name: string }) => run.name.endsWith("tasks:run")).length;
  });
}

const ios = (n: number, extra: Record<string, unknown> = {}) =>
  Array.from({ length: n }, (_, i) => ({ key: `t${i}`, ...extra }));

/** docs/executors.md: a dead executor's started tasks are found "within about 35 s" (a recovery
 * cycle every RECOVERY_INTERVAL_MS = 30 s checks the jobs that have run over RECOVERY_THRESHOLD_MS
 * = 5 s: a task killed at k, started at s <= k, is checked by the first cycle after
 * max(k, s + 5 s), at most 35 s after k). */
const DEATH_FOUND_WITHIN_MS = 35_000;
/** On top of that window: the pass that runs the cycle starts on a 100 ms segment boundary, and
 * onComplete runs in a delivery transaction that pass schedules at once (a few ms of virtual time);
 * a new executor for a retry is started by the next pass. 1 s is ten segments of slack, far below
 * the 30 s a missed cycle would add. */
const DEATH_SLACK_MS = 1_000;

/** Enqueues `io` tasks with `options`, waits until all run (in one executor: concurrency 5), then
 * kills that executor at its next call to the pool (a check-in, within 2 s), tasks in hand.
 * Returns the jobs' ids and when the executor died (virtual ms). */
async function killMidTask(
  t: T,
  argsList: Array<Record<string, unknown>>,
  options?: object,
): Promise<{ ids: string[]; diedAt: number }> {
  const ids = await enqueueIo(t, argsList, { options });
  await runUntil(t, () => probe.running === argsList.length, 5_000, 50);
  const killed = killRunnerAtNextReport();
  await runUntil(t, () => killed.count === 1, 5_000, 50);
  return { ids, diedAt: killed.at! };
}

describe("executors", () => {
  it("run tasks as jobs of the pool: one onComplete each, within maxParallelism, in few actions", async () => {
    const t = setup();
    const ids = await enqueueIo(t, ios(20, { ms: 1_000 }), { poolOptions: { maxParallelism: 10 } });
    await runUntil(t, async () => (await completions(t)).length === 20, 30_000, 50);
    const done = await completions(t);
    expect(done.map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(done.every((c) => c.result.kind === "success")).toBe(true);
    expect(probe.maxRunning).toBeLessThanOrEqual(10);
    expect(probe.maxRunning).toBeGreaterThanOrEqual(5);
    // concurrency 5: two executors at a time for 10 slots
    expect(await executorRuns(t)).toBeLessThanOrEqual(4);
    expect(await info(t, ids[0])).toMatchObject({
      fnType: "action",
      name: "io",
      state: "finished",
    });
  });

  it("refills a freed slot within half a second", async () => {
    const t = setup();
    await enqueueIo(t, ios(10, { ms: 1_000 }), { poolOptions: { maxParallelism: 5 } });
    await runUntil(t, async () => (await completions(t)).length === 10, 20_000, 20);
    const starts = Array.from({ length: 10 }, (_, i) => probe.starts.get(`t${i}`)![0]).sort(
      (a, b) => a - b,
    );
    const firstWaveEnds = starts[4] + 1_000;
    for (const start of starts.slice(5)) expect(start - firstWaveEnds).toBeLessThanOrEqual(500);
  });

  it("enqueueTaskBatch enqueues many tasks in one call, each a job", async () => {
    const t = setup();
    const ids = await enqueueIo(t, ios(12, { ms: 100 }), { batch: true });
    expect(ids).toHaveLength(12);
    await runUntil(t, async () => (await completions(t)).length === 12, 10_000, 50);
  });

  it("retries a failing task with backoff, as an action", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "flaky", failTimes: 1 }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect((await completions(t))[0].result).toEqual({ kind: "success", returnValue: "flaky" });
    expect(probe.attempts.get("flaky")).toBe(2);
    expect(await info(t, id)).toMatchObject({ previousAttempts: 2 });
  });

  it("fails a task with bad args or an unknown name at once, not retried, naming it", async () => {
    const t = setup();
    // Both allow three attempts: a refusal must not use them.
    const retry = { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } };
    const [badArgs] = await enqueueIo(t, [{ key: 5 }], { options: retry });
    const [unknown] = await enqueueIo(t, [{ key: "x" }], { options: retry, task: "nope" });
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000, 50);
    await runFor(t, 2_000, 100);
    const results = new Map((await completions(t)).map((c) => [c.workId, c.result]));
    expect(results.get(badArgs)).toEqual({
      kind: "failed",
      error: expect.stringMatching(/^workpool: task "io" args: .*\bkey\b/),
    });
    expect(results.get(unknown)).toEqual({
      kind: "failed",
      error: 'workpool: the executor has no task named "nope" (it has: io, quick, throwsAtOnce)',
    });
    for (const id of [badArgs, unknown]) {
      expect(await info(t, id)).toMatchObject({ state: "finished", previousAttempts: 1 });
    }
    // Refused before any handler ran.
    expect(probe.attempts.size).toBe(0);
  });

  it("a handler that throws before any await, or returns a value Convex cannot store, fails the attempt", async () => {
    const t = setup();
    await enqueueIo(t, [{}], { task: "throwsAtOnce" });
    await enqueueIo(t, [{ key: "bad", badReturn: true }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000, 50);
    const errors = (await completions(t)).map((c) => c.result.error);
    expect(errors).toContainEqual(expect.stringMatching(/thrown before any await/));
    expect(errors).toContainEqual(expect.stringMatching(/the return value is not a Convex value/));
    expect(probe.attempts.get("bad")).toBe(1); // not retried
  });

  it("a return value over the inline size is stored aside and reaches onComplete", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "big", returnBytes: 300_000 }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect((await completions(t))[0].result.returnValue).toHaveLength(300_000);
    expect((await info(t, id)).result.returnValue).toHaveLength(300_000);
  });

  it("a return value of 1,000,000 bytes arrives; one byte more fails the attempt, naming the limit, not retried", async () => {
    const t = setup();
    const retry = { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } };
    // A string's size is its JSON: the characters and two quotes.
    const [atLimit, over] = await enqueueIo(
      t,
      [
        { key: "at-limit", returnBytes: 1_000_000 - 2 },
        { key: "over", returnBytes: 1_000_000 - 1 },
      ],
      { options: retry },
    );
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000, 50);
    await runFor(t, 2_000, 100);
    const results = new Map((await completions(t)).map((c) => [c.workId, c.result]));
    expect(results.get(atLimit)?.kind).toBe("success");
    expect(results.get(atLimit)?.returnValue).toHaveLength(1_000_000 - 2);
    expect(results.get(over)).toEqual({
      kind: "failed",
      error: "workpool: the return value is 1000001 bytes, over the limit of 1000000 bytes",
    });
    // Running it again would return the same: one attempt of the three allowed.
    expect(await info(t, over)).toMatchObject({ state: "finished", previousAttempts: 1 });
    expect(probe.attempts.get("over")).toBe(1);
  });

  it("dedupe: a duplicate of a waiting task returns it; one of another task is rejected", async () => {
    const t = setup();
    const options = { dedupeKey: "page-1", runAfter: 1_000 };
    const [first] = await enqueueIo(t, [{ key: "d" }], { options });
    const [again] = await enqueueIo(t, [{ key: "d2" }], { options });
    expect(again).toBe(first);
    await expect(enqueueIo(t, [{ key: "d3" }], { options, task: "quick" })).rejects.toThrow(
      /dedupeKey.*runs another function/,
    );
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect(probe.attempts.get("d")).toBe(1);
  });

  it("large args (stored aside) reach the handler on every attempt", async () => {
    const t = setup();
    const value = "v".repeat(20_000);
    await enqueueIo(t, [{ key: "heavy", failTimes: 1, value }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect((await completions(t))[0].result).toEqual({ kind: "success", returnValue: value });
    expect(probe.attempts.get("heavy")).toBe(2);
  });

  it("a task past its timeoutMs fails that attempt, saying so, and follows its retry policy", async () => {
    const t = setup();
    await enqueueIo(t, [{ key: "slow" }], {
      task: "quick",
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 20_000, 50);
    expect((await completions(t))[0].result).toEqual({
      kind: "failed",
      error: "workpool: the task timed out after 1000 ms",
    });
    expect(probe.attempts.get("slow")).toBe(2);
    expect(signals.get("slow")).toMatch(/timed out after 1000 ms/);
  });

  it("a handler that never settles fails its attempt at its timeout, and the executor goes on", async () => {
    const t = setup();
    await enqueueIo(
      t,
      [
        { key: "stuck", hang: true },
        { key: "after", ms: 100 },
      ],
      {
        poolOptions: { maxParallelism: 1 },
      },
    );
    await runUntil(t, async () => (await completions(t)).length === 2, 120_000, 1_000);
    const results = (await completions(t)).map((c) => c.result);
    expect(results).toContainEqual({
      kind: "failed",
      error: "workpool: the task timed out after 60000 ms",
    });
    expect(results).toContainEqual({ kind: "success", returnValue: "after" });
  });

  it("cancel of a running task aborts its signal within 2 s and ends it canceled", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "long", ms: 30_000 }]);
    await runUntil(t, () => probe.running === 1, 5_000, 50);
    const canceledAt = Date.now();
    await t.mutation(anyApi.pool.cancel, { id });
    await runUntil(t, () => signals.has("long"), 5_000, 50);
    expect(Date.now() - canceledAt).toBeLessThanOrEqual(CANCEL_ABORT_BOUND_MS);
    await runUntil(t, async () => (await completions(t)).length === 1, 5_000, 50);
    expect((await completions(t))[0].result).toEqual({ kind: "canceled" });
  });

  it("a task canceled while its executor gives it back untaken never starts and ends canceled", async () => {
    const t = setup();
    // Six tasks to the first executor, handed over before it says it runs five: its first report
    // gives the sixth back (to its place in line). The cancel is sent as the executor starts,
    // before that report, so the loop meets the give-back and the cancel in one pass.
    const hooked = executorAction as unknown as { _handler: (ctx: any, args: any) => unknown };
    const original = hooked._handler;
    let canceledAt: number | undefined;
    let ids: string[] = [];
    hooked._handler = async (ctx: any, args: any) => {
      if (canceledAt === undefined) {
        canceledAt = Date.now();
        await ctx.runMutation(anyApi.pool.cancel, { id: ids[5] });
      }
      return await original(ctx, args);
    };
    try {
      ids = await enqueueIo(t, ios(6, { ms: 5_000 }), { batch: true });
      await runUntil(
        t,
        async () => (await completions(t)).some((c) => c.workId === ids[5]),
        10_000,
        50,
      );
    } finally {
      hooked._handler = original;
    }
    expect(Date.now() - canceledAt!).toBeLessThanOrEqual(CANCEL_ABORT_BOUND_MS);
    const done = (await completions(t)).find((c) => c.workId === ids[5])!;
    expect(done.result).toEqual({ kind: "canceled" });
    await runUntil(t, async () => (await completions(t)).length === 6, 20_000, 100);
    expect(probe.attempts.has("t5")).toBe(false);
    expect(probe.attempts.get("t0")).toBe(1);
  });

  it("a canceled task keeps its pool slot until its handler settles", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1 };
    const [stubborn] = await enqueueIo(t, [{ key: "stubborn", ms: 6_000, ignoreSignal: true }], {
      poolOptions,
    });
    await enqueueIo(t, [{ key: "next" }], { poolOptions });
    await runUntil(t, () => probe.running === 1, 5_000, 50);
    await t.mutation(anyApi.pool.cancel, { id: stubborn });
    await runFor(t, 4_000, 100);
    expect(probe.attempts.has("next")).toBe(false);
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000, 50);
    const [first] = await completions(t);
    expect(first).toMatchObject({ workId: stubborn, result: { kind: "canceled" } });
    expect(probe.starts.get("next")![0]).toBeGreaterThanOrEqual(
      probe.starts.get("stubborn")![0] + 6_000,
    );
  });

  it("an executor killed mid-batch: its running tasks fail 'executor died' and follow their retry policy", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const retry = { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } };
    const { ids, diedAt } = await killMidTask(t, ios(3, { ms: 3_000, failTimes: 0 }), retry);
    await runUntil(t, async () => (await completions(t)).length === 3, 120_000, 500);
    for (const [i, id] of ids.entries()) {
      // the death was found, and the retry (backoff 100 ms ± 50%) started, within the window
      const retriedAt = probe.starts.get(`t${i}`)![1];
      expect(retriedAt - diedAt).toBeLessThanOrEqual(DEATH_FOUND_WITHIN_MS + 150 + DEATH_SLACK_MS);
      const job = await info(t, id);
      // each ran again in a new executor after its first attempt failed with the executor
      expect(job).toMatchObject({
        state: "finished",
        previousAttempts: 2,
        result: { kind: "success" },
      });
    }
    expect(probe.attempts.get("t0")).toBe(2);
  });

  it("an executor killed mid-batch: a task with no retries left fails with 'executor died'", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { diedAt } = await killMidTask(t, [{ key: "once", ms: 3_000 }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 120_000, 500);
    const [done] = await completions(t);
    expect(done.result.error).toMatch(/^workpool: executor died \(its action failed/);
    // onComplete ran (the completion's creation time) within the window of the death
    expect(done._creationTime - diedAt).toBeLessThanOrEqual(DEATH_FOUND_WITHIN_MS + DEATH_SLACK_MS);
  });

  it("a task handed to an executor that died before taking it goes back to pending, no attempt used", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The first executor dies on its first call, before it takes anything.
    const killed = killRunnerAtNextReport();
    const [id] = await enqueueIo(t, [{ key: "untaken" }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 120_000, 500);
    expect(killed.count).toBe(1);
    expect(probe.attempts.get("untaken")).toBe(1);
    expect(await info(t, id)).toMatchObject({ previousAttempts: 1, result: { kind: "success" } });
  });

  it("ignores a late report for an attempt given up on while the next attempt runs: one outcome per attempt", async () => {
    const t = setup();
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    // Attempt 1's executor dies; recovery fails that attempt and the retry runs attempt 2.
    const retry = { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } };
    const {
      ids: [id],
    } = await killMidTask(t, [{ key: "again", ms: 3_000 }], retry);
    await runUntil(t, () => probe.attempts.get("again") === 2, 60_000, 100);
    expect(await info(t, id)).toMatchObject({ state: "running", previousAttempts: 1 });
    // Attempt 1's executor reports after all, claiming success, while attempt 2 runs.
    await t.mutation(anyApi.tasks.lateReport, { workId: id, attempt: 1 });
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    await runFor(t, 5_000, 100);
    // The job's one outcome is attempt 2's, not the late "success" of attempt 1.
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [id, { kind: "success", returnValue: "again" }],
    ]);
    expect(await info(t, id)).toMatchObject({ previousAttempts: 2 });
    expect(probe.attempts.get("again")).toBe(2);
    // The late report was logged as stale, for the attempt it named, while the job ran.
    const stale = warnings.mock.calls
      .map(([line]) => String(line))
      .filter((line) => line.includes('"event":"staleCompletion"'))
      .map((line) => JSON.parse(line));
    expect(stale).toEqual([expect.objectContaining({ workId: id, attempt: 1, state: "running" })]);
  });

  it("calls nothing while idle: once the tasks are done, no executor runs or reports", async () => {
    const t = setup();
    await enqueueIo(t, ios(3, { ms: 500 }));
    await runUntil(t, async () => (await completions(t)).length === 3, 10_000, 50);
    await runFor(t, 3_000, 100);
    const calls = countExecutorCalls();
    await runFor(t, 120_000, 1_000);
    expect(calls.count).toBe(0);
    const live = await inComponent(t, async (ctx) => {
      const rows = await ctx.db.query("executors").collect();
      const runs = await ctx.db.system.query("_scheduled_functions").collect();
      return {
        rows: rows.length,
        running: runs.filter(
          (run: { name: string; state: { kind: string } }) =>
            run.name.endsWith("tasks:run") && ["pending", "inProgress"].includes(run.state.kind),
        ).length,
      };
    });
    expect(live).toEqual({ rows: 0, running: 0 });
    // The counter does see an executor's calls: the next task makes some.
    await enqueueIo(t, [{ key: "again" }]);
    await runUntil(t, async () => (await completions(t)).length === 4, 10_000, 50);
    expect(calls.count).toBeGreaterThan(0);
  });

  it("keys, priority and pause apply to tasks as to any job", async () => {
    const t = setup();
    await t.mutation(anyApi.pool.callClient, { method: "pause", args: [{}] });
    await enqueueIo(
      t,
      ios(3, { ms: 200 }).map((args, i) => ({ ...args, key: `k:${i}` })),
      {
        options: { key: "k" },
      },
    );
    await runFor(t, 2_000, 100);
    expect(probe.attempts.size).toBe(0);
    await t.mutation(anyApi.pool.callClient, { method: "resume", args: [{}] });
    await runUntil(t, async () => (await completions(t)).length === 3, 10_000, 50);
    // keyParallelism 1: one at a time, in order
    expect(probe.groupMax.get("k")).toBe(1);
    expect(probe.groupStarts.get("k")).toEqual(["k:0", "k:1", "k:2"]);
  });

  it("a canceled task that never settles is failed at the executor's time limit, and ends canceled", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "forever", hang: true }]);
    await runUntil(t, () => probe.running === 1, 5_000, 50);
    await t.mutation(anyApi.pool.cancel, { id });
    await runFor(t, 8 * 60_000, 5_000);
    expect(await completions(t)).toEqual([]);
    await runUntil(t, async () => (await completions(t)).length === 1, 2 * 60_000, 1_000);
    expect((await completions(t))[0].result).toEqual({ kind: "canceled" });
    expect(signals.get("forever")).toMatch(/canceled/);
  });
});

/** Counts, from now on, the database calls that touch executors or their hand-overs. */
function countExecutorCalls(): { count: number } {
  const seen = { count: 0 };
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (/"table":"(executors|handovers)"/.test(jsonArgs)) seen.count++;
    return await asyncSyscall(op, jsonArgs);
  });
  return seen;
}

/** Counts, from now on, the rows inserted into `table` and the items they hold (`itemsOf`). */
function countInserts(
  table: string,
  itemsOf: (value: any) => number,
): { rows: number; items: number } {
  const seen = { rows: 0, items: 0 };
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (op === "1.0/insert") {
      const { table: inserted, value } = JSON.parse(jsonArgs);
      // (A hand-over row a report keeps for a retry of itself, `takenBy`, is not the loop's.)
      if (inserted === table && value.takenBy === undefined) {
        seen.rows++;
        seen.items += itemsOf(value);
      }
    }
    return await asyncSyscall(op, jsonArgs);
  });
  return seen;
}

describe("rows of many jobs: a batch's start rows, hand-overs, reports", () => {
  it("an enqueueBatch files its jobs due together in one start row per 100, and they start in order", async () => {
    const t = setup();
    const filed = countInserts("pendingStart", (row) => 1 + (row.more?.length ?? 0));
    const argsList = Array.from({ length: 250 }, (_, i) => ({ key: `o:${i}`, ms: 100 }));
    const ids = await enqueueIo(t, argsList.slice(0, 150), {
      batch: true,
      poolOptions: { maxParallelism: 7 },
    });
    ids.push(
      ...(await enqueueIo(t, argsList.slice(150), {
        batch: true,
        poolOptions: { maxParallelism: 7 },
      })),
    );
    expect(filed).toEqual({ rows: 3, items: 250 }); // 100 + 50, then 100
    await runUntil(t, async () => (await completions(t)).length === 250, 60_000, 50);
    // a row holds more than the 7 free slots: each pass starts what fits, the rest waits in it,
    // and the loop starts them in the order they were enqueued
    expect(probe.groupMax.get("o")).toBeLessThanOrEqual(7);
    // (A task the first executor gave back at its first report, before it said it runs five,
    // goes behind those due, as a snooze does: only the others are in order.)
    const startedAt = await inComponent(t, async (ctx) => {
      const times: number[] = [];
      for (const id of ids) {
        const work = await ctx.db.get(id);
        if ((work.snoozes ?? 0) === 0) times.push(work.state.startedAt);
      }
      return times;
    });
    expect(startedAt.length).toBeGreaterThan(240);
    expect(startedAt).toEqual([...startedAt].sort((a, b) => a - b));
    expect(new Set(startedAt).size).toBeGreaterThan(240 / 7);
    const left = await inComponent(t, async (ctx) => await ctx.db.query("pendingStart").collect());
    expect(left).toEqual([]);
  });

  it("a job canceled while it waits in a batch's row, first or not, ends canceled; the others start", async () => {
    const t = setup();
    const errors = vi.spyOn(console, "error");
    await t.mutation(anyApi.pool.callClient, { method: "pause", args: [{}] });
    const ids = await enqueueIo(t, ios(5), { batch: true });
    for (const i of [0, 2]) {
      await t.mutation(anyApi.pool.callClient, { method: "cancel", args: [ids[i]] });
    }
    await runFor(t, 1_000, 100);
    await t.mutation(anyApi.pool.callClient, { method: "resume", args: [{}] });
    await runUntil(t, async () => (await completions(t)).length === 5, 10_000, 50);
    const kinds = new Map((await completions(t)).map((c) => [c.workId, c.result.kind]));
    expect(ids.map((id) => kinds.get(id))).toEqual([
      "canceled",
      "success",
      "canceled",
      "success",
      "success",
    ]);
    expect([...probe.attempts.keys()].sort()).toEqual(["t1", "t3", "t4"]);
    // the loop skips a canceled job of a batch's row as expected, not as a broken invariant
    expect(errors).not.toHaveBeenCalled();
  });

  it("a pass hands an executor its tasks in one row, and a report files its outcomes in one", async () => {
    const t = setup();
    const handed = countInserts("handovers", (row) => row.tasks.length);
    const filed = countInserts("pendingCompletion", (row) => 1 + (row.more?.length ?? 0));
    const ids = await enqueueIo(t, ios(12, { ms: 200 }), { batch: true });
    await runUntil(t, async () => (await completions(t)).length === 12, 10_000, 50);
    const done = await completions(t);
    expect(done.map((c) => c.workId).sort()).toEqual([...ids].sort());
    // concurrency 5: the first pass hands a new executor 10 (maxParallelism; it has not said
    // how many it runs); its first report takes 5 and gives back 5 (filed as outcomes), which
    // the loop hands on; each report carries the outcomes of the tasks that ended together
    expect(handed.items).toBe(12 + 5);
    expect(filed.items).toBe(12 + 5);
    expect(handed.rows).toBeLessThan(12);
    expect(filed.rows).toBeLessThan(12);
  });

  it("tasks handed in one row to an executor that died before taking them go back to pending, no attempt used", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const killed = killRunnerAtNextReport();
    const handed = countInserts("handovers", (row) => row.tasks.length);
    const ids = await enqueueIo(t, ios(3), { batch: true });
    await runUntil(t, async () => (await completions(t)).length === 3, 120_000, 500);
    expect(killed.count).toBe(1);
    // all three went to the dead executor's one row first
    expect(handed.rows).toBeGreaterThanOrEqual(2);
    for (const [i, id] of ids.entries()) {
      expect(probe.attempts.get(`t${i}`)).toBe(1);
      expect(await info(t, id)).toMatchObject({ previousAttempts: 1, result: { kind: "success" } });
    }
    const left = await inComponent(t, async (ctx) => await ctx.db.query("handovers").collect());
    expect(left).toEqual([]);
  });

  it("recovery reads a dead executor's hand-over rows once a pass, however many of its tasks it judges", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    // 60 tasks of 7 KB of inline args, handed in rows of 64 KiB to an executor that dies before
    // taking any. Judging each task by reading every row would read about 25 MB in one pass; the
    // pass budget (test/passBudget.ts, checked after every test) allows 4 MiB.
    const killed = killRunnerAtNextReport();
    const value = "a".repeat(7_000);
    const ids = await enqueueIo(
      t,
      Array.from({ length: 60 }, (_, i) => ({ key: `w${i}`, value })),
      { batch: true, poolOptions: { maxParallelism: 60 } },
    );
    await runUntil(t, async () => (await completions(t)).length === 60, 180_000, 500);
    expect(killed.count).toBe(1);
    for (const [i, id] of ids.entries()) {
      expect(probe.attempts.get(`w${i}`)).toBe(1);
      expect(await info(t, id)).toMatchObject({ previousAttempts: 1, result: { kind: "success" } });
    }
  });

  it("a report takes at most 4 MiB of arguments: the rest of a row waits for the next report", async () => {
    const t = setup();
    // Six tasks with 900 KB of args each (stored aside) in one hand-over row, to an executor with
    // room for twenty: its first report takes five (4.5 MB) and leaves the sixth in the row.
    const handed = countInserts("handovers", (row) => row.tasks.length);
    const left: number[] = [];
    interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
      const { table, value } = JSON.parse(jsonArgs);
      // The row's rest, written back (not what a report keeps for a retry of itself, `takenBy`).
      if (op === "1.0/shallowMerge" && table === "handovers" && value.takenBy === undefined) {
        left.push(value.tasks.length);
      }
      return await asyncSyscall(op, jsonArgs);
    });
    const keys = Array.from({ length: 6 }, (_, i) => `big${i}`);
    await t.mutation(anyApi.tasks.enqueueBig, { keys, bytes: 10, ballastBytes: 900_000 });
    await runUntil(t, async () => (await completions(t)).length === 6, 20_000, 50);
    expect(handed).toEqual({ rows: 1, items: 6 });
    expect(left).toEqual([1]);
    const results = (await completions(t)).map((c) => c.result.returnValue).sort();
    expect(results).toEqual(keys.map((key) => key.padEnd(10, ".")));
  });

  it("an executor's row says whether it takes more tasks (open), which hand-overs read by", async () => {
    const t = setup();
    const opts = { poolOptions: { maxParallelism: 12 } };
    await enqueueIo(t, ios(12, { ms: 1_500 }), { ...opts, batch: true });
    const seen = new Set<string>();
    for (let step = 0; step < 40 && (await completions(t)).length < 12; step++) {
      await runFor(t, 100, 100);
      const rows = await inComponent(t, async (ctx) => await ctx.db.query("executors").collect());
      for (const row of rows) {
        // concurrency 5 once said (50 before the first report), and not ending
        const open = !row.ending && row.assigned < (row.concurrency ?? 50);
        expect({ id: row._id, open: row.open }).toEqual({ id: row._id, open });
        seen.add(String(row.open));
      }
    }
    // full executors (12 tasks at 5 each) and ones with room were both seen
    expect([...seen].sort()).toEqual(["false", "true"]);
    await runUntil(t, async () => (await completions(t)).length === 12, 20_000, 100);
    expect(await executorRuns(t)).toBeLessThanOrEqual(4);
  });

  it("recovery leaves a task whose outcome waits in its executor's report row, first or not", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const [a, b] = await enqueueIo(t, ios(2, { ms: 600_000 }), { batch: true });
    await runUntil(t, () => probe.running === 2, 5_000, 50);
    // A report of both outcomes waits in a later segment (as while the loop is behind), in one
    // row: a's outcome first, b's among `more`. Then the executor dies.
    const executorId = await runningExecutor(t, a);
    const rowId = await inComponent(t, async (ctx) => {
      const outcome = (workId: string) => ({
        workId,
        attempt: 1,
        result: { kind: "success", returnValue: workId },
      });
      return await ctx.db.insert("pendingCompletion", {
        ...outcome(a),
        more: [outcome(b)],
        runner: executorId,
        segment: Number.MAX_SAFE_INTEGER,
      });
    });
    const killed = killRunnerAtNextReport();
    await runUntil(t, () => killed.count === 1, 5_000, 50);
    // Two recovery cycles: neither task is taken for dead.
    await runFor(t, 75_000, 1_000);
    expect(await completions(t)).toEqual([]);
    // Without the row, recovery finds both dead.
    await inComponent(t, async (ctx) => await ctx.db.delete("pendingCompletion", rowId));
    await runUntil(t, async () => (await completions(t)).length === 2, 60_000, 1_000);
    for (const done of await completions(t)) {
      expect(done.result.error).toMatch(/^workpool: executor died/);
    }
  });
});

/** The executor a running task was handed to. */
async function runningExecutor(t: T, id: string): Promise<string> {
  return await inComponent(t, async (ctx) => {
    const work = await ctx.db.get(id);
    if (work?.state.kind !== "running") throw new Error(`${id} is not running`);
    return work.state.executorId;
  });
}
