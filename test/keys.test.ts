/**
 * Keys (section 1 of the API extensions) and persisted pause (section 2): per-key parallelism and
 * order, a retry keeping its key's slot, no head-of-line blocking, cancel by key, keyStatus, and
 * pause/resume of the pool and of a key. Job keys here are "<pool key>:<n>", so the probe counts
 * each pool key's attempts (running at once, start order) from inside the jobs.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { onTopLevelTransaction } from "../bench/instrument.js";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  enqueue,
  failCompletionInserts,
  inComponent,
  keyStatus,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

/** Job args for `n` jobs of pool key `key`: job keys "key:0" … */
function jobsOf(key: string, n: number, behavior: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => ({ key: `${key}:${i}`, ...behavior }));
}

/** Enqueues actions with pool key `key`. */
async function enqueueKeyed(
  t: T,
  key: string,
  argsList: Array<Record<string, unknown>>,
  extra: { poolOptions?: object; options?: object } = {},
) {
  return await enqueue(t, "action", argsList, {
    poolOptions: extra.poolOptions,
    options: { key, ...extra.options },
  });
}

/** Result kinds onComplete received, by job key. */
async function kindsByJob(t: T): Promise<Record<string, string>> {
  const all = await completions(t);
  return Object.fromEntries(all.map((c) => [c.result.returnValue ?? c.workId, c.result.kind]));
}

describe("keys: parallelism", () => {
  it("runs at most keyParallelism jobs of a key at once, while other keys and unkeyed jobs flow", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 10 };
    for (const key of ["a", "b", "c"]) {
      await enqueueKeyed(t, key, jobsOf(key, 4, { ms: 200 }), { poolOptions });
    }
    await enqueue(
      t,
      "action",
      jobsOf("free", 4, { ms: 200 }).map((a, i) => ({ ...a, key: `u${i}` })),
      {
        poolOptions,
      },
    );
    await runFor(t, 3000);
    expect(await completions(t)).toHaveLength(16);
    for (const key of ["a", "b", "c"]) expect(probe.groupMax.get(key)).toBe(1);
    // Three keys at one each, and the four unkeyed jobs at once.
    expect(probe.maxRunning).toBe(7);
  });

  it("takes keyParallelism from the pool's options", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", jobsOf("k", 6, { ms: 200 }), { poolOptions: { keyParallelism: 3 } });
    await runFor(t, 2000);
    expect(await completions(t)).toHaveLength(6);
    expect(probe.groupMax.get("k")).toBe(3);
    expect(await keyStatus(t, "k")).toMatchObject({ parallelism: 3, succeeded: 6 });
  });

  it("never exceeds maxParallelism across keys", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 3, keyParallelism: 2 };
    for (const key of ["a", "b", "c", "d"]) {
      await enqueueKeyed(t, key, jobsOf(key, 3, { ms: 100 }), { poolOptions });
    }
    await runFor(t, 3000);
    expect(await completions(t)).toHaveLength(12);
    expect(probe.maxRunning).toBe(3);
    for (const key of ["a", "b", "c", "d"]) {
      expect(probe.groupMax.get(key)).toBeLessThanOrEqual(2);
    }
  });
});

describe("keys: order", () => {
  it("starts a key's jobs by due time, then enqueue order", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", [{ key: "k:late", ms: 300 }], { options: { runAfter: 500 } });
    await enqueueKeyed(t, "k", [
      { key: "k:first", ms: 300 },
      { key: "k:second", ms: 300 },
    ]);
    await enqueueKeyed(t, "k", [{ key: "k:delayed", ms: 300 }], { options: { runAfter: 200 } });
    await runFor(t, 3000);
    expect(probe.groupStarts.get("k")).toEqual(["k:first", "k:second", "k:delayed", "k:late"]);
  });

  it("starts a queued job that sorts below where head reads start: it is never lost", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", jobsOf("k", 2, { ms: 300 }));
    await runUntil(t, () => probe.groupRunning.get("k") === 1);
    // As if the key had started jobs due an hour from now: head reads begin there.
    await inComponent(t, async (ctx) => {
      const row = await ctx.db
        .query("keyState")
        .withIndex("by_key", (q: any) => q.eq("key", "k"))
        .unique();
      // Rank 2: waiting jobs of "normal" priority.
      await ctx.db.patch(row._id, { headFromByRank: [null, null, Date.now() + 3_600_000, null] });
    });
    await runFor(t, 1000);
    expect(probe.groupStarts.get("k")).toEqual(["k:0", "k:1"]);
  });

  it("keeps a retrying job's slot: with keyParallelism 1 each job runs to its final outcome first", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", [{ key: "k:flaky", ms: 100, failTimes: 2 }, ...jobsOf("k", 2)], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 400, base: 2 } },
    });
    await runFor(t, 5000);
    expect(probe.groupStarts.get("k")).toEqual(["k:flaky", "k:flaky", "k:flaky", "k:0", "k:1"]);
    expect(probe.groupMax.get("k")).toBe(1);
  });

  it("keeps order and limits when a dead runner is recovered", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The first attempt of k:0 dies without reporting; recovery retries it.
    failCompletionInserts((row) => row.attempt === 1 && probe.attempts.get("k:0") === 1);
    await enqueueKeyed(t, "k", jobsOf("k", 3, { ms: 100 }), { options: { retry: true } });
    // Recovery calls the runner dead once its action cannot still run (its end + 10 + 1 min).
    await runUntil(t, async () => (await completions(t)).length === 3, 15 * 60_000, 500);
    expect(probe.groupStarts.get("k")).toEqual(["k:0", "k:0", "k:1", "k:2"]);
    expect(probe.groupMax.get("k")).toBe(1);
    expect(await keyStatus(t, "k")).toMatchObject({ pending: 0, running: 0, succeeded: 3 });
  });
});

describe("keys: no head-of-line blocking", () => {
  it("a key at its limit holds back neither other keys nor unkeyed jobs, whatever its backlog", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 20 };
    await enqueueKeyed(t, "big", jobsOf("big", 300, { ms: 1000 }), { poolOptions });
    await runFor(t, 500);
    const startedAt = Date.now();
    await enqueueKeyed(t, "other", jobsOf("other", 2, { ms: 100 }), { poolOptions });
    await enqueue(t, "action", [{ key: "free", ms: 100 }], { poolOptions });
    await runFor(t, 600);
    // Both others ran (one after the other for "other") within a few segments, not after "big".
    expect(probe.starts.get("other:0")?.[0]).toBeLessThanOrEqual(startedAt + 200);
    expect(probe.starts.get("free")?.[0]).toBeLessThanOrEqual(startedAt + 200);
    expect(probe.attempts.get("other:1")).toBe(1);
    expect(probe.groupMax.get("big")).toBe(1);
  });
});

describe("keys: setKeyParallelism", () => {
  it("raises, lowers and restores a key's limit; lowering starts none until there is room", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", jobsOf("k", 9, { ms: 500 }));
    await callPool(t, "setKeyParallelism", ["k", 3]);
    await runUntil(t, () => probe.groupRunning.get("k") === 3);
    expect(await keyStatus(t, "k")).toMatchObject({ parallelism: 3, running: 3 });
    const loweredAt = Date.now();
    const lastEarlierStart = Math.max(...[...probe.starts.values()].flat());
    await callPool(t, "setKeyParallelism", ["k", 1]);
    await runFor(t, 2000);
    // Nothing new started until the three running had finished (500 ms each); then one at a time.
    const later = [...probe.starts.values()]
      .flat()
      .filter((at) => at > loweredAt)
      .sort((a, b) => a - b);
    expect(later.length).toBeGreaterThanOrEqual(2);
    expect(later[0]).toBeGreaterThanOrEqual(lastEarlierStart + 500);
    for (let i = 1; i < later.length; i++)
      expect(later[i] - later[i - 1]).toBeGreaterThanOrEqual(500);
    await callPool(t, "setKeyParallelism", ["k", null]);
    expect(await keyStatus(t, "k")).toMatchObject({ parallelism: 1 });
    await runUntil(t, async () => (await completions(t)).length === 9, 10_000);
  });
});

describe("keys: cancelAll({ key })", () => {
  it("cancels that key's unfinished jobs and no others", async () => {
    const t = setup();
    await enqueueKeyed(t, "a", jobsOf("a", 5, { ms: 300 }));
    await enqueueKeyed(t, "b", jobsOf("b", 5, { ms: 300 }));
    await runUntil(t, () => probe.groupRunning.get("a") === 1);
    await callPool(t, "cancelAll", [{ key: "a", limit: 2 }]);
    await runFor(t, 3000);
    const kinds = await kindsByJob(t);
    const ofKey = (key: string) =>
      Object.entries(kinds)
        .filter(([job]) => job.startsWith(`${key}:`))
        .map(([, kind]) => kind);
    // a:0 was running: it finishes with its own outcome; the four behind it never start.
    expect(ofKey("a")).toEqual(["success"]);
    expect((await completions(t)).filter((c) => c.result.kind === "canceled")).toHaveLength(4);
    expect(ofKey("b")).toEqual(Array(5).fill("success"));
    expect(await keyStatus(t, "a")).toMatchObject({ succeeded: 1, canceled: 4, pending: 0 });
  });
});

describe("keyStatus", () => {
  it("counts a key's jobs exactly at each step, and forgets them with their status", async () => {
    const t = setup();
    const poolOptions = { statusTtl: 10_000 };
    await enqueueKeyed(
      t,
      "k",
      [
        { key: "k:0", ms: 300 },
        { key: "k:1", ms: 300, failTimes: 1, nonRetryable: true },
        { key: "k:2", ms: 300 },
      ],
      { poolOptions },
    );
    const zero = { pending: 0, running: 0, succeeded: 0, failed: 0, canceled: 0 };
    // The share in force (API-EXTENSIONS section 13): the defaults, as the key has none of its own.
    const share = { weight: 1, reserve: 0, rateLimit: null };
    expect(await keyStatus(t, "k")).toEqual({
      ...zero,
      ...share,
      pending: 3,
      paused: false,
      parallelism: 1,
    });
    await runUntil(t, () => probe.groupRunning.get("k") === 1);
    expect(await keyStatus(t, "k")).toMatchObject({ pending: 2, running: 1 });
    await runUntil(t, async () => (await completions(t)).length === 3, 5000);
    expect(await keyStatus(t, "k")).toMatchObject({ ...zero, succeeded: 2, failed: 1 });
    await runFor(t, 30_000, 100);
    expect(await keyStatus(t, "k")).toMatchObject(zero);
    expect(await keyStatus(t, "never-used")).toMatchObject(zero);
  });
});

describe("keyStatus cost", () => {
  it("reads the same few documents whether the key has one job queued or five hundred", async () => {
    const t = setup();
    const readsOf = async (key: string) => {
      let reads = 0;
      const stop = onTopLevelTransaction((fn, total) => {
        if (fn.includes("callClientQuery")) reads += total.documentsRead;
      });
      await keyStatus(t, key);
      stop();
      return reads;
    };
    await enqueueKeyed(t, "one", jobsOf("one", 2, { ms: 60_000 }));
    await enqueue(t, "action", jobsOf("many", 500, { ms: 60_000 }), {
      batch: true,
      options: { key: "many" },
    });
    await runFor(t, 2000);
    expect(await keyStatus(t, "many")).toMatchObject({ pending: 499, running: 1 });
    const one = await readsOf("one");
    expect(one).toBeGreaterThan(0);
    expect(await readsOf("many")).toBe(one);
  });

  it("counts a batch's jobs of one key with one ledger write, and counts them all", async () => {
    const t = setup();
    const writesOfBatch = async (key: string, n: number) => {
      let written = 0;
      const stop = onTopLevelTransaction((fn, total) => {
        if (fn.includes("enqueue")) written += total.documentsWritten;
      });
      await enqueue(t, "action", jobsOf(key, n, { ms: 60_000 }), { batch: true, options: { key } });
      stop();
      return written;
    };
    await writesOfBatch("warm-up", 1); // the pool's first call also writes its config
    const ten = await writesOfBatch("a", 10);
    const twenty = await writesOfBatch("b", 20);
    // Each job is a work row and a pendingStart row; the key's ledger is written once per batch.
    expect(twenty - ten).toBe(20);
    expect(await keyStatus(t, "b")).toMatchObject({ pending: 20 });
    await writesOfBatch("b", 5);
    expect(await keyStatus(t, "b")).toMatchObject({ pending: 25 });
  });
});

describe("pause and resume", () => {
  it("while paused, enqueue, cancel and status keep working, and running jobs report", async () => {
    const t = setup();
    const [running] = await enqueue(t, "action", [{ key: "runs", ms: 500 }]);
    await runUntil(t, () => probe.running === 1);
    await callPool(t, "pause", []);
    const [waiting] = await enqueue(t, "action", [{ key: "waits" }]);
    expect(await t.query(anyApi.pool.status, { id: waiting })).toMatchObject({ state: "pending" });
    await t.mutation(anyApi.pool.cancel, { id: waiting });
    await runFor(t, 2000);
    const kinds = Object.fromEntries((await completions(t)).map((c) => [c.workId, c.result.kind]));
    expect(kinds).toEqual({ [running]: "success", [waiting]: "canceled" });
    expect(probe.attempts.get("waits")).toBeUndefined();
  });

  it("a paused pool starts nothing, retries included, whatever maxParallelism clients pass", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "flaky", ms: 200, failTimes: 1 }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, () => probe.running === 1);
    await callPool(t, "pause", []);
    await callPool(t, "pause", []);
    await enqueue(t, "action", [{ key: "later" }], { poolOptions: { maxParallelism: 5 } });
    await runFor(t, 3000);
    expect(probe.attempts.get("flaky")).toBe(1);
    expect(probe.attempts.get("later")).toBeUndefined();
    await callPool(t, "resume", []);
    await runFor(t, 1000);
    expect(probe.attempts.get("flaky")).toBe(2);
    expect(probe.attempts.get("later")).toBe(1);
  });

  it("a paused key starts nothing until resume, and other keys flow", async () => {
    const t = setup();
    await callPool(t, "pause", [{ key: "p" }]);
    await enqueueKeyed(t, "p", jobsOf("p", 2));
    await enqueueKeyed(t, "q", jobsOf("q", 2));
    await runFor(t, 1000);
    expect(probe.groupStarts.get("p")).toBeUndefined();
    expect(probe.groupStarts.get("q")).toEqual(["q:0", "q:1"]);
    expect(await keyStatus(t, "p")).toMatchObject({ paused: true, pending: 2 });
    await callPool(t, "resume", [{ key: "p" }]);
    await runFor(t, 1000);
    expect(probe.groupStarts.get("p")).toEqual(["p:0", "p:1"]);
    expect(await keyStatus(t, "p")).toMatchObject({ paused: false, succeeded: 2 });
  });

  it("a key paused while its job backs off holds the retry until resume", async () => {
    const t = setup();
    await enqueueKeyed(t, "k", [{ key: "k:flaky", ms: 100, failTimes: 1 }, { key: "k:next" }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 300, base: 2 } },
    });
    await runUntil(t, () => probe.attempts.get("k:flaky") === 1 && probe.running === 0);
    await callPool(t, "pause", [{ key: "k" }]);
    await runFor(t, 2000);
    expect(probe.groupStarts.get("k")).toEqual(["k:flaky"]);
    await callPool(t, "resume", [{ key: "k" }]);
    await runFor(t, 1000);
    expect(probe.groupStarts.get("k")).toEqual(["k:flaky", "k:flaky", "k:next"]);
  });
});
