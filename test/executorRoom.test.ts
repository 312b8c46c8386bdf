/**
 * An executor holds only tasks it can start (API-EXTENSIONS section 8: "a task handed to it that
 * it never started goes back to pending without using an attempt"). Its reports take no more
 * than its free slots; what it has not taken stays with the pool. Driven end to end through the
 * test app's executor (test/app/tasks.ts: concurrency 5) on the virtual clock.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { completions, info, killRunnerAtNextReport, runUntil, setup, type T } from "./helpers.js";

/** Enqueues `n` `io` tasks of `ms` each in one enqueueTaskBatch (probe keys t<first>, t<first+1>,
 * ...); returns their ids. */
async function enqueueTasks(
  t: T,
  n: number,
  ms: number,
  extra: object = {},
  first = 0,
): Promise<string[]> {
  const argsList = Array.from({ length: n }, (_, i) => ({ key: `t${first + i}`, ms }));
  return await t.mutation(anyApi.tasks.enqueueIo, { argsList, batch: true, ...extra });
}

/**
 * Eight tasks of 3 s (one retry each) to executors of five under `maxParallelism`; once five run,
 * their executor dies at its next call. Returns, once all eight completed, each task's attempts
 * used and starts, and how long after the kill the last one completed.
 */
async function killWithFiveRunning(t: T, maxParallelism: number) {
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  const retry = { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } };
  const ids = await enqueueTasks(t, 8, 3_000, { options: retry, poolOptions: { maxParallelism } });
  await runUntil(t, () => probe.running === 5, 5_000, 50);
  const killed = killRunnerAtNextReport();
  const killedAt = Date.now();
  await runUntil(t, async () => (await completions(t)).length === 8, 120_000, 200);
  expect(killed.count).toBe(1);
  expect((await completions(t)).every((c) => c.result.kind === "success")).toBe(true);
  return {
    attempts: await Promise.all(ids.map(async (id) => (await info(t, id)).previousAttempts)),
    started: ids.map((_, i) => probe.starts.get(`t${i}`)!.length),
    doneAfterMs: Date.now() - killedAt,
  };
}

describe("an executor's room", () => {
  it("tasks handed to an executor beyond its slots wait with the pool: when it dies, only tasks it started used an attempt", async () => {
    // The pool hands all eight to the first executor before its first report says five. It
    // takes five; three stay in its hand-over row.
    const { attempts, started } = await killWithFiveRunning(setup(), 8);
    // An attempt is used only by a start: had the dead executor taken the three it could not
    // start, each would have used one (2 attempts, 1 start).
    expect(attempts).toEqual(started);
    expect(started.filter((n) => n === 2)).toHaveLength(5);
  });

  it("an executor found dead is handed nothing more: its tasks retry and the waiting ones start, in a new executor", async () => {
    // Five run in the executor, three wait in the pool for a slot.
    const { attempts, started, doneAfterMs } = await killWithFiveRunning(setup(), 5);
    // Within the recovery window and the retries' run: not after the dead executor's hand-over
    // window (4 minutes), which is when a pass would otherwise stop handing it tasks.
    expect(doneAfterMs).toBeLessThan(60_000);
    expect(attempts).toEqual(started);
    expect(started.filter((n) => n === 2)).toHaveLength(5);
    expect(started.filter((n) => n === 1)).toHaveLength(3);
  });

  it("a new executor is handed no more tasks than its function's executors said they run", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 15 };
    // The first executor says it runs five.
    await enqueueTasks(t, 5, 3_000, { poolOptions });
    await runUntil(t, () => probe.running === 5, 5_000, 50);
    // Ten more go to new executors of five each, so all fifteen run at once (a new executor
    // handed ten would run five and hold five).
    await enqueueTasks(t, 10, 3_000, { poolOptions }, 5);
    await runUntil(t, async () => (await completions(t)).length === 15, 30_000, 50);
    expect(probe.maxRunning).toBe(15);
  });
});
