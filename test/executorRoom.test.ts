/**
 * An executor holds only tasks it can start (API-EXTENSIONS section 8: "a task handed to it that
 * it never started goes back to pending without using an attempt"). Its reports take no more
 * than its free slots; what it has not taken stays with the pool. Driven end to end through the
 * test app's executor (test/app/tasks.ts: concurrency 5) on the virtual clock.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  inComponent,
  info,
  killRunnerAtNextReport,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

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
  await runUntil(t, () => probe.running >= 5, 5_000, 50);
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

/** Tasks given back by an executor, over all jobs: a give-back counts as a snooze of the job
 * (none of these tasks snoozes of its own). */
async function givenBackInAll(t: T): Promise<number> {
  const jobs = await inComponent(t, async (ctx) => await ctx.db.query("work").collect());
  return jobs.reduce((sum: number, job: { snoozes?: number }) => sum + (job.snoozes ?? 0), 0);
}

describe("an executor's room", () => {
  it("tasks handed to an executor beyond its slots wait with the pool: when it dies, only tasks it started used an attempt", async () => {
    // The pool hands all eight to the first executor before its first report says five. It
    // takes five and gives three back, which the pool hands to a second executor; the next
    // report of either kills it.
    const { attempts, started } = await killWithFiveRunning(setup(), 8);
    // An attempt is used only by a start: had the dead executor taken tasks it could not
    // start, each would have used one (2 attempts, 1 start).
    expect(attempts).toEqual(started);
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

  /** Enqueues `n` tasks of 3 s under maxParallelism 15 and runs them all; returns how long. */
  async function burst(t: T, n: number, first: number): Promise<number> {
    const before = (await completions(t)).length;
    const startedAt = Date.now();
    await enqueueTasks(t, n, 3_000, { poolOptions: { maxParallelism: 15 } }, first);
    await runUntil(t, async () => (await completions(t)).length === before + n, 60_000, 50);
    return Date.now() - startedAt;
  }

  it("a new executor of unknown concurrency gives back at its first report what it cannot start: 15 tasks run at once in executors of five", async () => {
    const t = setup();
    const took = await burst(t, 15, 0);
    expect(probe.maxRunning).toBe(15);
    // Before, 5 at a time in the first executor: 9 s.
    expect(took).toBeLessThan(5_000);
  });

  it("the same after the pool went idle and its executors' rows were deleted", async () => {
    const t = setup();
    await burst(t, 5, 0);
    await runFor(t, 10_000, 100);
    expect(await inComponent(t, async (ctx) => await ctx.db.query("executors").collect())).toEqual(
      [],
    );
    probe.maxRunning = 0;
    const took = await burst(t, 15, 100);
    expect(probe.maxRunning).toBe(15);
    expect(took).toBeLessThan(5_000);
    // The function's concurrency outlived its executors (`executorFunctions`): no executor of the
    // second burst was handed more than five, so none gave a task back (chaos program 643; the
    // first burst's five fit its first executor).
    expect(await givenBackInAll(t)).toBe(0);
  });

  it("a report that states another concurrency overrides the one remembered (a deploy changed it)", async () => {
    const t = setup();
    await burst(t, 5, 0);
    await runFor(t, 10_000, 100);
    // As if an earlier deploy's executors had said two.
    await inComponent(t, async (ctx) => {
      const [said] = await ctx.db.query("executorFunctions").collect();
      await ctx.db.patch(said._id, { concurrency: 2 });
    });
    probe.maxRunning = 0;
    await burst(t, 15, 100);
    // Executors of two were started until the first report said five; then five each.
    expect(probe.maxRunning).toBe(15);
    const rows = await inComponent(
      t,
      async (ctx) => await ctx.db.query("executorFunctions").collect(),
    );
    expect(rows.map((row: { concurrency: number }) => row.concurrency)).toEqual([5]);
    expect(await givenBackInAll(t)).toBe(0);
  });

  it("starts no handler after pause() whose task was not taken before it", async () => {
    const t = setup();
    await enqueueTasks(t, 15, 3_000, { poolOptions: { maxParallelism: 15 } });
    await runUntil(t, () => probe.running >= 5, 5_000, 10);
    await callPool(t, "pause", []);
    const pausedAt = Date.now();
    await runFor(t, 15_000, 50);
    const startedAfterPause = [...probe.starts.values()].flat().filter((at) => at > pausedAt);
    expect(startedAfterPause).toEqual([]);
    // The rest wait, pending, for resume; then all run.
    await callPool(t, "resume", []);
    await runUntil(t, async () => (await completions(t)).length === 15, 30_000, 50);
    expect((await completions(t)).every((c) => c.result.kind === "success")).toBe(true);
  });

  it("tasks handed over but not taken obey a lowered maxParallelism", async () => {
    const t = setup();
    // The pool hands a new executor all 15 before it says it runs 5; maxParallelism drops to 3
    // before its first report.
    await enqueueTasks(t, 15, 3_000, { poolOptions: { maxParallelism: 15 } });
    await runUntil(
      t,
      async () =>
        (await inComponent(
          t,
          async (ctx) => (await ctx.db.query("handovers").first()) !== null,
        )) === true,
      5_000,
      10,
    );
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 3 });
    await runUntil(t, async () => (await completions(t)).length === 15, 60_000, 50);
    // Before, the executor started five of those it held.
    expect(probe.maxRunning).toBe(3);
  });
});
