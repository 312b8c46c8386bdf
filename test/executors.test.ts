/**
 * Executors (API-EXTENSIONS section 8): tasks are jobs of the pool that run many at once inside an
 * executor action. Driven end to end through the test app (test/app/tasks.ts: an executor of
 * concurrency 5 with tasks `io`, `quick` and `throwsAtOnce`) on the virtual clock (helpers.ts).
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { signals } from "./app/tasks.js";
import { completions, inComponent, info, runFor, runUntil, setup, type T } from "./helpers.js";

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
    const retry = { retry: { maxAttempts: 3, initialBackoffMs: 100, base: 2 } };
    await enqueueIo(t, [{ key: 5 }], { options: retry });
    await enqueueIo(t, [{ key: "x" }], { options: retry, task: "nope" });
    await runUntil(t, async () => (await completions(t)).length === 2, 10_000, 50);
    const errors = (await completions(t)).map((c) => c.result.error).sort();
    expect(errors[0]).toMatch(/task "io" args: .*key/);
    expect(errors[1]).toMatch(/no task named "nope"/);
    await runFor(t, 2_000, 100);
    expect(await completions(t)).toHaveLength(2);
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
    expect(errors).toContainEqual(expect.stringMatching(/a value Convex cannot store/));
    expect(probe.attempts.get("bad")).toBe(1); // not retried
  });

  it("a return value over the inline size is stored aside and reaches onComplete", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "big", returnBytes: 300_000 }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect((await completions(t))[0].result.returnValue).toHaveLength(300_000);
    expect((await info(t, id)).result.returnValue).toHaveLength(300_000);
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

  it("cancel of a running task aborts its signal within 2 s and ends it canceled", async () => {
    const t = setup();
    const [id] = await enqueueIo(t, [{ key: "long", ms: 30_000 }]);
    await runUntil(t, () => probe.running === 1, 5_000, 50);
    const canceledAt = Date.now();
    await t.mutation(anyApi.pool.cancel, { id });
    await runUntil(t, () => signals.has("long"), 5_000, 50);
    expect(Date.now() - canceledAt).toBeLessThanOrEqual(2_500);
    await runUntil(t, async () => (await completions(t)).length === 1, 5_000, 50);
    expect((await completions(t))[0].result).toEqual({ kind: "canceled" });
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
});
