/**
 * Priority (section 3 of the API extensions): among due jobs that may start, every "high" one starts
 * before any "normal" one and "normal" before "low"; within a level, earlier due time first; a retry
 * keeps its priority; a key's order is priority, then due time.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { WATCHDOG_INTERVAL_MS } from "../src/component/mainLoop/watchdog.js";
import { probe } from "./app/probe.js";
import { REFILE_BATCH } from "../src/component/mainLoop/refile.js";
import { setupDeployment } from "./deployment.js";
import { callPool, completions, enqueue, info, runFor, runUntil, setup } from "./helpers.js";

/** Job keys in the order their first attempts started. */
function startOrder(): string[] {
  return [...probe.starts.entries()].sort((a, b) => a[1][0] - b[1][0]).map(([key]) => key);
}

describe("priority", () => {
  it("starts every high job before any normal one, and normal before low", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1 };
    // The one slot is busy while the rest arrive, so they are all due together.
    await enqueue(t, "action", [{ key: "first", ms: 500 }], { poolOptions });
    await runUntil(t, () => probe.running === 1);
    for (const priority of ["low", "normal", "high"] as const) {
      const jobs = [0, 1, 2].map((i) => ({ key: `${priority}${i}`, ms: 10 }));
      await enqueue(t, "action", jobs, { poolOptions, options: { priority } });
    }
    await runUntil(t, async () => (await completions(t)).length === 10, 10_000);
    expect(startOrder()).toEqual([
      "first",
      ...["high0", "high1", "high2", "normal0", "normal1", "normal2", "low0", "low1", "low2"],
    ]);
  });

  it("within a level, starts the job due first", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1 };
    await enqueue(t, "action", [{ key: "first", ms: 2000 }], { poolOptions });
    await runUntil(t, () => probe.running === 1);
    const high = { poolOptions, options: { priority: "high" } };
    await enqueue(t, "action", [{ key: "later", ms: 10 }], {
      ...high,
      options: { ...high.options, runAfter: 1000 },
    });
    await enqueue(t, "action", [{ key: "sooner", ms: 10 }], {
      ...high,
      options: { ...high.options, runAfter: 500 },
    });
    await runUntil(t, async () => (await completions(t)).length === 3, 10_000);
    expect(startOrder()).toEqual(["first", "sooner", "later"]);
  });

  it("a retry keeps its priority: it goes before the normal backlog", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1 };
    await enqueue(t, "action", [{ key: "urgent", ms: 10, failTimes: 1 }], {
      poolOptions,
      options: { priority: "high", retry: { maxAttempts: 2, initialBackoffMs: 50, base: 2 } },
    });
    const backlog = Array.from({ length: 5 }, (_, i) => ({ key: `n${i}`, ms: 200 }));
    await enqueue(t, "action", backlog, { poolOptions });
    await runUntil(t, async () => (await completions(t)).length === 6, 10_000);
    // The retry became due while n0 ran, and started before n1.
    const [, retryAt] = probe.starts.get("urgent")!;
    expect(retryAt).toBeLessThan(probe.starts.get("n1")![0]);
    expect(probe.starts.get("n0")![0]).toBeLessThan(retryAt);
  });

  it("orders a key's jobs by priority, then due time", async () => {
    const t = setup();
    const keyed = (priority: string) => ({ options: { key: "k", priority } });
    await enqueue(t, "action", [{ key: "k:0", ms: 500 }], keyed("normal"));
    await runUntil(t, () => probe.running === 1);
    await enqueue(t, "action", [{ key: "k:low", ms: 10 }], keyed("low"));
    await enqueue(t, "action", [{ key: "k:normal", ms: 10 }], keyed("normal"));
    await enqueue(t, "action", [{ key: "k:high", ms: 10 }], keyed("high"));
    await runUntil(t, async () => (await completions(t)).length === 4, 10_000);
    expect(probe.groupStarts.get("k")).toEqual(["k:0", "k:high", "k:normal", "k:low"]);
  });

  it("a lower level is not skipped when a pass spends its last slot on a higher one", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 2 };
    // k:0 runs and k:1 waits in key k's queue; "long" takes the second slot.
    await enqueue(
      t,
      "action",
      [
        { key: "k:0", ms: 2000 },
        { key: "k:1", ms: 10 },
      ],
      {
        poolOptions,
        options: { key: "k" },
      },
    );
    await enqueue(t, "action", [{ key: "long", ms: 5000 }], { poolOptions });
    await runUntil(t, () => probe.running === 2);
    await enqueue(t, "action", [{ key: "low", ms: 10 }], {
      poolOptions,
      options: { priority: "low" },
    });
    // When k:0 ends, its pass gives the freed slot to k:1 (normal) and has none left for "low":
    // "low" must still be read later, however long that takes.
    await runUntil(t, async () => (await completions(t)).length === 4, 20_000);
    expect(probe.attempts.get("low")).toBe(1);
  });

  it("a high job is not held back by a low backlog of a thousand", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 5 };
    const lows = Array.from({ length: 1000 }, (_, i) => ({ key: `low${i}`, ms: 100 }));
    await enqueue(t, "action", lows, { poolOptions, options: { priority: "low" }, batch: true });
    await runUntil(t, () => probe.running === 5);
    const [id] = await enqueue(t, "action", [{ key: "vip", ms: 10 }], {
      poolOptions,
      options: { priority: "high" },
    });
    expect(await info(t, id)).toMatchObject({ priority: "high", state: "pending" });
    await runUntil(t, () => probe.attempts.has("vip"), 2000);
    // It took the first slot that freed: only the five lows running when it came started before.
    const before = startOrder().indexOf("vip");
    expect(before).toBeLessThanOrEqual(10);
  });

  it("a high job filed early and overdue when a late pass reaches it starts before a due normal job", async () => {
    // Scheduled functions on time, so the workers run in the order the loop starts them.
    const { t, deployment } = await setupDeployment({ seed: 5, maxStartDelayMs: 0 });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const poolOptions = { maxParallelism: 1 };
    // The first pass fails at commit: the loop next runs when the watchdog restarts it, long
    // after both jobs are due; "h" (due in 1.5 s) sits where it was filed early until then.
    deployment.arm({ kind: "commitFails", fn: "main" });
    await enqueue(t, "action", [{ key: "n", ms: 10 }], { poolOptions });
    await enqueue(t, "action", [{ key: "h", ms: 10 }], {
      poolOptions,
      options: { priority: "high", runAfter: 1_500 },
    });
    await deployment.run(WATCHDOG_INTERVAL_MS + 5_000, 500);
    expect(deployment.fired).toHaveLength(1);
    expect((await completions(t)).length).toBe(2);
    expect(startOrder()).toEqual(["h", "n"]);
  });

  it("overdue jobs filed early, refiled over several passes by a late loop, start in due order", async () => {
    // Scheduled functions start late (up to 3 s, drawn): the refiling passes fall in different
    // segments. Order is read from each job's start time, which the loop records.
    const { t, deployment } = await setupDeployment({ seed: 6 });
    vi.spyOn(console, "error").mockImplementation(() => {});
    const poolOptions = { maxParallelism: 1 };
    // More early rows than one pass refiles, all due in seconds, then one due before them but
    // enqueued (and so filed early) last; the loop's first pass fails, so a late pass finds all
    // of them overdue.
    const many = REFILE_BATCH + 20;
    deployment.arm({ kind: "commitFails", fn: "main" });
    const ids: string[] = await t.mutation(anyApi.chaos.enqueueSpread, {
      kind: "mutation",
      n: many,
      prefix: "m",
      firstDelayMs: 2_000,
      spacingMs: 10,
      poolOptions,
    });
    const [first] = await enqueue(t, "mutation", [{ key: "first" }], {
      poolOptions,
      options: { runAfter: 1_500 },
    });
    await deployment.run(WATCHDOG_INTERVAL_MS + 10_000, 500);
    expect(deployment.fired).toHaveLength(1);
    // Started once before the other is (undefined: not started yet).
    const startedAt = async (id: string) => (await info(t, id))?.startedAt ?? Infinity;
    for (let i = 0; i < 100; i++) {
      if ((await startedAt(first)) !== Infinity && (await startedAt(ids[0])) !== Infinity) break;
      await deployment.run(5_000, 500);
    }
    expect(await startedAt(first)).toBeLessThan(await startedAt(ids[0]));
  });

  for (const how of ["resume({ key })", "setKeyParallelism"] as const) {
    for (const head of ["high", "low"] as const) {
      it(`a ${head} key head listed by ${how} keeps its level among the pool's due jobs`, async () => {
        const t = setup();
        const resume = how === "resume({ key })";
        const poolOptions = { maxParallelism: resume ? 2 : 3 };
        const long = (key: string, options = {}) =>
          enqueue(t, "action", [{ key, ms: 1_000 }], { poolOptions, options });
        // Key k is blocked (paused, or at its limit of 1), so its job waits in k's queue.
        await long("first");
        if (resume) await callPool(t, "pause", [{ key: "k" }]);
        else await long("k:holder", { key: "k" });
        // The jobs whose order is checked are mutations: each runs when the loop starts it (an
        // action started alone gets a worker, one started with others a shared runner, which
        // takes it up to a refill later; the loop's order is the same either way).
        await enqueue(t, "mutation", [{ key: "k:head" }], {
          poolOptions,
          options: { key: "k", priority: head },
        });
        await runFor(t, 200);
        // The last slot fills; then jobs of k's level and normal ones wait, due after k's head.
        await long("second");
        await runFor(t, 200);
        await enqueue(t, "mutation", [{ key: "x0" }], { poolOptions, options: { priority: head } });
        await enqueue(t, "mutation", [{ key: "n0" }, { key: "n1" }], { poolOptions });
        if (resume) await callPool(t, "resume", [{ key: "k" }]);
        else await callPool(t, "setKeyParallelism", ["k", 2]);
        await runUntil(t, () => ["k:head", "x0", "n0", "n1"].every((key) => probe.starts.has(key)));
        const order = startOrder().filter((key) => ["k:head", "x0", "n0", "n1"].includes(key));
        // Within its level, k's head goes first (due first); the levels keep their order.
        expect(order).toEqual(
          head === "high" ? ["k:head", "x0", "n0", "n1"] : ["n0", "n1", "k:head", "x0"],
        );
      });
    }
  }
});
