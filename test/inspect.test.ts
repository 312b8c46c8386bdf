/**
 * Inspecting a pool (section 7 of the API extensions): `list` pages through jobs by state, outcome
 * and key in the promised orders, and `stats` reports exact counts, the oldest wait, the last
 * minute's events and the totals since the pool began from a constant number of reads.
 */
import { describe, expect, it } from "vitest";
import { currentCounters, resetCounters } from "../bench/instrument.js";
import { ENQUEUE_COUNT_SHARDS } from "../src/component/api/enqueue.js";
import { LAST_MINUTE_SECONDS } from "../src/component/mainLoop/stats.js";
import {
  callPool,
  completions,
  enqueue,
  inComponent,
  jobStates,
  listAll,
  listJobs,
  poolStats,
  runChecking,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

const ids = (jobs: Array<{ id: string }>) => jobs.map((job) => job.id);

/** A pool with three jobs of each outcome finished, in a known order. */
async function finishedOfEachOutcome(t: any) {
  const succeeded = await enqueue(t, "mutation", [{ key: "s1" }, { key: "s2" }]);
  await runFor(t, 500);
  const failed = await enqueue(t, "mutation", [{ key: "f1", failTimes: 1 }]);
  await runFor(t, 500);
  const canceled = await enqueue(t, "mutation", [{ key: "c1" }], { options: { runAfter: 60_000 } });
  await callPool(t, "cancel", [canceled[0]]);
  await runUntil(t, async () => (await completions(t)).length === 4, 5000);
  return { succeeded, failed, canceled };
}

describe("list", () => {
  it("lists pending jobs by due time, running ones by start time, finished ones newest first", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 2 };
    const later = await enqueue(t, "action", [{ key: "later" }], {
      poolOptions,
      options: { runAfter: 30_000 },
    });
    const first = await enqueue(t, "action", [{ key: "a", ms: 5000 }], { poolOptions });
    await runFor(t, 200);
    const second = await enqueue(t, "action", [{ key: "b", ms: 8000 }], { poolOptions });
    await runFor(t, 200);
    const waiting = await enqueue(
      t,
      "action",
      [
        { key: "c", ms: 100 },
        { key: "d", ms: 100 },
      ],
      {
        poolOptions,
      },
    );
    expect(ids(await listAll(t, { state: "running" }))).toEqual([first[0], second[0]]);
    expect(ids(await listAll(t, { state: "pending" }))).toEqual([...waiting, later[0]]);
    await runUntil(t, async () => (await completions(t)).length === 4, 10_000);
    // a ends at 5 s, then c and d run one after the other in its slot; b ends at 8.2 s. (Each
    // finish comes after the one before it: no two of them race.)
    expect(ids(await listAll(t, { state: "finished" }))).toEqual([
      second[0],
      waiting[1],
      waiting[0],
      first[0],
    ]);
    // Without a filter: newest enqueued first.
    expect(ids(await listAll(t))).toEqual([...waiting].reverse().concat(second, first, later));
  });

  it("filters finished jobs by outcome, and any list by key", async () => {
    const t = setup();
    const { succeeded, failed, canceled } = await finishedOfEachOutcome(t);
    expect(ids(await listAll(t, { outcome: "success" }))).toEqual([...succeeded].reverse());
    expect(ids(await listAll(t, { outcome: "failed", state: "finished" }))).toEqual(failed);
    expect(ids(await listAll(t, { outcome: "canceled" }))).toEqual(canceled);
    const keyed = await enqueue(t, "mutation", [{ key: "k1" }, { key: "k2", failTimes: 1 }], {
      options: { key: "tenant-1" },
    });
    await enqueue(t, "mutation", [{ key: "other" }], { options: { key: "tenant-2" } });
    expect(ids(await listAll(t, { key: "tenant-1", state: "pending" }))).toEqual(keyed);
    await runUntil(t, async () => (await completions(t)).length === 7, 5000);
    expect(ids(await listAll(t, { key: "tenant-1" }))).toEqual([...keyed].reverse());
    expect(ids(await listAll(t, { key: "tenant-1", outcome: "failed" }))).toEqual([keyed[1]]);
    expect(ids(await listAll(t, { key: "tenant-1", state: "finished" }))).toEqual([
      keyed[1],
      keyed[0],
    ]);
  });

  it("shows each job as info does, with the error of a failure but no return value", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "x", value: { big: "y".repeat(100) } }]);
    const [bad] = await enqueue(t, "mutation", [{ key: "bad", failTimes: 1 }]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    const [failed, succeeded] = await listAll(t, { state: "finished" });
    expect(succeeded).toMatchObject({ id, state: "finished", result: { kind: "success" } });
    expect(succeeded.result).not.toHaveProperty("returnValue");
    expect(failed).toMatchObject({
      id: bad,
      result: { kind: "failed", error: "job bad failed attempt 1" },
    });
    const info = await callPool(t, "info", [bad]);
    expect(failed).toEqual(info);
  });

  it("pages through 45 jobs 10 at a time, each job exactly once", async () => {
    const t = setup();
    const argsList = Array.from({ length: 45 }, (_, i) => ({ key: `j${i}` }));
    const enqueued = await enqueue(t, "action", argsList, {
      batch: true,
      options: { runAfter: 10_000 },
    });
    const pages: number[] = [];
    let cursor: string | null = null;
    const seen: string[] = [];
    for (;;) {
      const page: any = await listJobs(t, {
        state: "pending",
        paginationOpts: { numItems: 10, cursor },
      });
      pages.push(page.page.length);
      seen.push(...ids(page.page));
      if (page.isDone) break;
      cursor = page.continueCursor;
    }
    expect(pages.slice(0, 4)).toEqual([10, 10, 10, 10]);
    expect(seen).toEqual(enqueued);
  });

  it("still finds every pending job once the loop raised its floor past the jobs it started", async () => {
    const t = setup();
    const enqueuedAt = Date.now();
    // Two at a time for over two seconds: the last starts come after the floor's 1 s margin.
    const argsList = Array.from({ length: 50 }, (_, i) => ({ key: `early${i}`, ms: 100 }));
    await enqueue(t, "action", argsList, { batch: true, poolOptions: { maxParallelism: 2 } });
    await runUntil(t, async () => (await completions(t)).length === 50, 20_000);
    await runFor(t, 3000);
    const loop = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    // Past the due time of every job it started: pending reads skip their index entries.
    expect(loop.pendingFloor).toBeGreaterThan(enqueuedAt);
    await callPool(t, "pause", []);
    const late = await enqueue(t, "mutation", [{ key: "late" }]);
    const delayed = await enqueue(t, "mutation", [{ key: "delayed" }], {
      options: { runAfter: 5000 },
    });
    await runFor(t, 2000);
    expect(ids(await listAll(t, { state: "pending" }))).toEqual([late[0], delayed[0]]);
  });
});

describe("stats", () => {
  it("counts pending and running jobs exactly at every step of a run with retries and cancels", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 3 };
    await enqueue(
      t,
      "action",
      Array.from({ length: 12 }, (_, i) => ({
        key: `a${i}`,
        ms: 300,
        failTimes: i % 4 === 0 ? 1 : 0,
      })),
      { poolOptions, options: { retry: { maxAttempts: 2, initialBackoffMs: 200, base: 2 } } },
    );
    const delayed = await enqueue(t, "mutation", [{ key: "d1" }, { key: "d2" }], {
      poolOptions,
      options: { runAfter: 1500 },
    });
    await callPool(t, "cancel", [delayed[1]], poolOptions);
    let checks = 0;
    await runChecking(
      t,
      5000,
      async () => {
        const states = await jobStates(t);
        const stats = await poolStats(t);
        expect({ pending: stats.pending, running: stats.running }).toEqual({
          pending: states.pending,
          running: states.running,
        });
        checks++;
      },
      50,
    );
    expect(checks).toBeGreaterThan(50);
    expect((await completions(t)).length).toBe(14);
    expect(await poolStats(t)).toMatchObject({ pending: 0, running: 0, maxParallelism: 3 });
  });

  it("reports how long the longest-waiting due job has waited, and 0 for jobs not yet due", async () => {
    const t = setup();
    await callPool(t, "pause", []);
    await enqueue(t, "mutation", [{ key: "future" }], { options: { runAfter: 60_000 } });
    await runFor(t, 1000);
    expect(await poolStats(t)).toMatchObject({ pending: 1, oldestPendingMs: 0, paused: true });
    await enqueue(t, "mutation", [{ key: "due" }]);
    await runFor(t, 4000);
    const { oldestPendingMs } = await poolStats(t);
    expect(oldestPendingMs).toBeGreaterThanOrEqual(4000);
    expect(oldestPendingMs).toBeLessThan(4100);
    await callPool(t, "resume", []);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    expect(await poolStats(t)).toMatchObject({ pending: 1, oldestPendingMs: 0, paused: false });
  });

  it("counts the events of the current second and the 59 before it", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "ok1" }, { key: "ok2" }, { key: "flaky", failTimes: 1 }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await enqueue(t, "action", [{ key: "broken", failTimes: 1 }]);
    const [canceled] = await enqueue(t, "mutation", [{ key: "never" }], {
      options: { runAfter: 120_000 },
    });
    await callPool(t, "cancel", [canceled]);
    await runUntil(t, async () => (await completions(t)).length === 5, 5000);
    const expected = { started: 5, succeeded: 3, failed: 1, canceled: 1, retried: 1 };
    expect((await poolStats(t)).lastMinute).toEqual(expected);
    // Every event happened in the first second (the clock starts on a whole second): they count
    // until that second's 59th successor ends, and not a millisecond longer.
    const start = Math.floor(Date.now() / 1000) * 1000;
    expect(Date.now() - start).toBeLessThan(1000);
    await runFor(t, start + 60_000 - 1 - Date.now(), 500);
    expect((await poolStats(t)).lastMinute).toEqual(expected);
    await runFor(t, 1, 1);
    expect((await poolStats(t)).lastMinute).toEqual({
      started: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      retried: 0,
    });
  });

  describe("totals", () => {
    const ZERO = { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 };

    /** The run of the last-minute spec: 5 jobs enqueued; 5 attempts, 3 successes, 1 failure, 1
     * cancel and 1 retry, all in the first second. */
    async function runOfEachEvent(t: any) {
      await enqueue(t, "action", [{ key: "ok1" }, { key: "ok2" }, { key: "flaky", failTimes: 1 }], {
        options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
      });
      const [broken] = await enqueue(t, "action", [{ key: "broken", failTimes: 1 }]);
      const [canceled] = await enqueue(t, "mutation", [{ key: "never" }], {
        options: { runAfter: 120_000 },
      });
      await callPool(t, "cancel", [canceled]);
      await runUntil(t, async () => (await completions(t)).length === 5, 5000);
      return { broken, canceled };
    }

    it("counts every event since the pool began, with lastMinute's meanings, past the last minute", async () => {
      const t = setup();
      await runOfEachEvent(t);
      const first = { started: 5, succeeded: 3, failed: 1, canceled: 1, retried: 1 };
      expect((await poolStats(t)).totals).toEqual({ enqueued: 5, ...first });
      // Two minutes on, the last minute is empty and the totals are unchanged.
      await runFor(t, 120_000, 1000);
      const later = await poolStats(t);
      expect(later.lastMinute).toEqual(ZERO);
      expect(later.totals).toEqual({ enqueued: 5, ...first });
      // They only grow: a second run adds its events to them.
      await enqueue(t, "mutation", [{ key: "again1" }, { key: "again2" }]);
      await runUntil(t, async () => (await completions(t)).length === 7, 5000);
      expect((await poolStats(t)).totals).toEqual({
        enqueued: 7,
        ...first,
        started: 7,
        succeeded: 5,
      });
    });

    it("counts a job retry() creates as enqueued, and its run as any other", async () => {
      const t = setup();
      const { broken, canceled } = await runOfEachEvent(t);
      await callPool(t, "retry", [broken]);
      await callPool(t, "retry", [canceled]);
      // Retrying again creates nothing, and counts nothing.
      await callPool(t, "retry", [broken]);
      await runUntil(t, async () => (await poolStats(t)).totals.started === 7, 5000);
      await runFor(t, 1000);
      const { totals, pending, running } = await poolStats(t);
      expect({ pending, running }).toEqual({ pending: 0, running: 0 });
      // The retried "broken" job fails no more (it failed once); "never" now runs.
      expect(totals).toEqual({
        enqueued: 7,
        started: 7,
        succeeded: 5,
        failed: 1,
        canceled: 1,
        retried: 1,
      });
    });

    it("count from the upgrade on when the loop's row predates them, enqueued from its shards", async () => {
      const t = setup();
      await runOfEachEvent(t);
      // A loop row written before `totals` existed: the field is absent.
      await inComponent(t, async (ctx) => {
        const loop = await ctx.db.query("loopState").first();
        expect(loop.totals).toBeDefined();
        await ctx.db.patch("loopState", loop._id, { totals: undefined });
      });
      expect((await poolStats(t)).totals).toEqual({ enqueued: 5, ...ZERO });
      await enqueue(t, "mutation", [{ key: "after" }]);
      await runUntil(t, async () => (await completions(t)).length === 6, 5000);
      const stats = await poolStats(t);
      expect(stats.totals).toEqual({ enqueued: 6, ...ZERO, started: 1, succeeded: 1 });
      expect(stats.pending).toBe(0);
    });

    it("are written only by the loop: an enqueue writes no row the loop keeps its totals in", async () => {
      const t = setup();
      await runOfEachEvent(t);
      const loopRow = async () =>
        await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
      const before = await loopRow();
      await enqueue(t, "mutation", [{ key: "later" }], { options: { runAfter: 600_000 } });
      await enqueue(t, "action", [{ key: "batch1" }, { key: "batch2" }], {
        batch: true,
        options: { runAfter: 600_000 },
      });
      expect(await loopRow()).toEqual(before);
      expect((await poolStats(t)).totals.enqueued).toBe(8);
    });
  });

  it("counts the jobs one app mutation enqueues one by one in one counter row", async () => {
    const t = setup();
    const one = Array.from({ length: 20 }, (_, i) => ({ key: `one${i}` }));
    await enqueue(t, "mutation", one, { options: { runAfter: 60_000 } });
    const rows = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("enqueueCounts").collect());
    expect((await rows()).map((row: any) => row.enqueued)).toEqual([20]);
    // Other mutations draw their own row (16 to choose from): the count stays exact across them.
    for (let i = 0; i < 5; i++) {
      await enqueue(t, "mutation", [{ key: `m${i}a` }, { key: `m${i}b` }], {
        options: { runAfter: 60_000 },
      });
    }
    const counts = (await rows()).map((row: any) => row.enqueued);
    expect(counts.reduce((a: number, b: number) => a + b, 0)).toBe(30);
    expect((await poolStats(t)).pending).toBe(30);
  });

  it("reads no more documents with 1,000 jobs waiting than its fixed bound", async () => {
    const readsWith = async (jobs: number) => {
      const t = setup();
      await callPool(t, "pause", []);
      for (let i = 0; i < jobs; i += 500) {
        const argsList = Array.from({ length: Math.min(500, jobs - i) }, (_, j) => ({
          key: `j${i + j}`,
        }));
        await enqueue(t, "mutation", argsList, { batch: true });
      }
      await enqueue(t, "mutation", [{ key: "single" }]);
      await runFor(t, 1000);
      resetCounters();
      const stats = await poolStats(t);
      expect(stats.pending).toBe(jobs + 1);
      const usage = [...currentCounters().usageByFunction].find(([fn]) =>
        fn.includes("inspect:stats"),
      );
      return usage![1].docsRead;
    };
    // The loop's state, the config, the oldest pending job, the counter shards and the event ring.
    const bound = 3 + ENQUEUE_COUNT_SHARDS + LAST_MINUTE_SECONDS;
    const small = await readsWith(10);
    expect(small).toBeGreaterThan(2);
    expect(small).toBeLessThanOrEqual(bound);
    expect(await readsWith(1000)).toBeLessThanOrEqual(bound);
  });
});
