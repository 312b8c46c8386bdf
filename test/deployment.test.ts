/**
 * The deployment-like backend (test/deployment.ts) does what it says: each limit refuses what
 * Convex refuses and lets through what Convex lets through, each fault fires once where it is
 * armed and rolls back what Convex would, and its draws replay from the seed. Time is virtual;
 * `deployment.run(ms)` steps the clock and lets the backend's own events (dead actions noticed,
 * garbage collection) happen in between.
 */
import { anyApi } from "convex/server";
import fc from "fast-check";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadModules } from "../src/test.js";
import { probe } from "./app/probe.js";
import { run as ioExecutor } from "./app/tasks.js";
import { appModules, completions, enqueue, info, inComponent } from "./helpers.js";
import { DOCUMENT_SIZE_LIMIT, setupDeployment } from "./deployment.js";

// The app's modules load before the clock is stepped (a first import is real I/O).
beforeAll(async () => await loadModules(appModules));

const quiet = () => {
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
};

describe("limits", () => {
  it("refuses a document over 1 MiB, at insert, patch and replace, and lets one under it through", async () => {
    const { t } = await setupDeployment({ seed: 1 });
    const id = await t.run(
      async (ctx: any) =>
        await ctx.db.insert("effects", { key: "a", value: "x".repeat(1_000_000) }),
    );
    await expect(
      t.run(async (ctx: any) => await ctx.db.patch(id, { key: "b".repeat(60_000) })),
    ).rejects.toThrow(/Value is too large \(1\.0\d MiB > maximum size 1 MiB\)/);
    await expect(
      t.run(
        async (ctx: any) =>
          await ctx.db.replace(id, { key: "c", value: "x".repeat(DOCUMENT_SIZE_LIMIT) }),
      ),
    ).rejects.toThrow(/Value is too large/);
    await expect(
      t.run(
        async (ctx: any) =>
          await ctx.db.insert("effects", { key: "d", value: "x".repeat(DOCUMENT_SIZE_LIMIT) }),
      ),
    ).rejects.toThrow(/Value is too large/);
    // A patch that removes the big field shrinks the document: allowed.
    await t.run(async (ctx: any) => await ctx.db.patch(id, { value: "small" }));
  });

  it("refuses more than 1,024 fields, 8,192 array elements or 16 levels of nesting", async () => {
    const { t } = await setupDeployment({ seed: 1 });
    const fields = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, i]));
    const nested = (n: number): unknown => (n === 0 ? 1 : [nested(n - 1)]);
    const insert = (value: unknown) =>
      t.run(async (ctx: any) => await ctx.db.insert("effects", { key: "k", value }));
    await insert(fields(1024));
    await expect(insert(fields(1025))).rejects.toThrow(/too many fields/);
    await insert(new Array(8192).fill(0));
    await expect(insert(new Array(8193).fill(0))).rejects.toThrow(/Array length is too long/);
    await insert(nested(15));
    await expect(insert(nested(17))).rejects.toThrow(/too nested/);
  });

  it("refuses a transaction's 1,001st schedule", async () => {
    const { t, deployment } = await setupDeployment({ seed: 1 });
    const schedule = (n: number) =>
      t.run(async (ctx: any) => {
        for (let i = 0; i < n; i++) {
          await ctx.scheduler.runAfter(3_600_000, anyApi.jobs.mutation, { key: `s${i}` });
        }
      });
    await schedule(1000);
    await expect(schedule(1001)).rejects.toThrow(/Scheduled too many functions .*\(limit: 1000\)/);
    expect(deployment.stats.limitErrors.scheduled).toBe(1);
  });
});

/** When each of 30 mutations scheduled at the same instant ran, in order of running. */
async function startOrder(seed: number): Promise<Array<{ key: string; at: number }>> {
  const { t, deployment } = await setupDeployment({ seed });
  const t0 = Date.now();
  await t.run(async (ctx: any) => {
    for (let i = 0; i < 30; i++)
      await ctx.scheduler.runAfter(0, anyApi.jobs.mutation, { key: `m${i}` });
  });
  await deployment.run(6_000);
  const rows = await t.run(async (ctx: any) => await ctx.db.query("effects").collect());
  return rows.map((r: any) => ({ key: r.key, at: r._creationTime - t0 }));
}

describe("scheduled functions start late", () => {
  it("by seeded delays of up to 5 s, so that functions due together run in a drawn order", async () => {
    const a = await startOrder(11);
    const b = await startOrder(11);
    const c = await startOrder(12);
    expect(a).toHaveLength(30);
    expect(b).toEqual(a); // the same seed, the same start times and order
    expect(c.map((r) => r.key)).not.toEqual(a.map((r) => r.key));
    const keys = a.map((r) => r.key);
    expect(keys).not.toEqual([...keys].sort((x, y) => Number(x.slice(1)) - Number(y.slice(1))));
    expect(Math.max(...a.map((r) => r.at))).toBeGreaterThan(0);
    expect(Math.max(...a.map((r) => r.at))).toBeLessThanOrEqual(5_000);
  });
});

describe("faults of the pool's own", () => {
  it("a loop pass that fails at commit rolls back whole, and the pool goes on", async () => {
    const { t, deployment } = await setupDeployment({ seed: 3 });
    quiet();
    deployment.arm({ kind: "commitFails", fn: "main" });
    const loopBefore = await inComponent(t, async (ctx) => await ctx.db.query("loopState").first());
    await enqueue(t, "mutation", [{ key: "j1" }]);
    await deployment.run(4_000);
    expect(deployment.fired).toHaveLength(1);
    expect(deployment.fired[0].fn).toBe("mainLoop/main:main");
    expect(deployment.failures[0]).toMatchObject({ fn: "mainLoop/main:main", injected: true });
    // Nothing the failed pass did stayed: the job is neither started nor run.
    expect(await inComponent(t, async (ctx) => await ctx.db.query("loopState").first())).toEqual(
      loopBefore,
    );
    // The wake-up's check restarts it within its interval.
    await deployment.run(70_000, 500);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success"]);
    expect(deployment.stall).toBeUndefined();
  });

  it("a fault that fails the pass the watchdog restarted starts the stall's window again", async () => {
    const { t, deployment } = await setupDeployment({ seed: 3 });
    quiet();
    deployment.arm({ kind: "commitFails", fn: "main" });
    await enqueue(t, "mutation", [{ key: "j1" }]);
    await deployment.run(4_000);
    const first = deployment.stall;
    expect(first).toBeDefined();
    // The next pass (the one the watchdog restarts) fails too, by a second fault.
    deployment.arm({ kind: "commitFails", fn: "main" });
    for (let waited = 0; deployment.fired.length < 2 && waited < 70_000; waited += 500) {
      await deployment.run(500, 500);
    }
    const deaths = deployment.failures.filter((f) => f.injected);
    expect(deaths).toHaveLength(2);
    expect(deaths[1].at).toBeGreaterThan(first!.since);
    expect(deployment.stall?.since).toBe(deaths[1].at);
    await deployment.run(70_000, 500);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success"]);
    expect(deployment.stall).toBeUndefined();
  });

  it("a loop pass throws at a chosen database call, and its caught error still fails the pass", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4 });
    quiet();
    deployment.arm({ kind: "passThrows", stage: 3 });
    await enqueue(t, "mutation", [{ key: "j1" }]);
    await deployment.run(2_000);
    expect(deployment.fired).toHaveLength(1);
    expect(deployment.fired[0].error).toMatch(/at its database call 3/);
    expect(deployment.stall).toBeDefined();
    await deployment.run(70_000, 500);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success"]);
    expect(deployment.stall).toBeUndefined();
  });

  it("a worker action dies before it runs the job; Convex marks it failed; recovery runs the job again once an action it started could have ended", async () => {
    const { t, deployment } = await setupDeployment({ seed: 5 });
    quiet();
    deployment.arm({
      kind: "actionDies",
      at: 1,
      after: false,
      mode: "hang",
      noticedAfterMs: 2_000,
    });
    const [id] = await enqueue(t, "action", [{ key: "a1" }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await deployment.run(3_000);
    expect(deployment.fired).toHaveLength(1);
    expect(deployment.fired[0].workIds).toEqual([id]);
    const worker = await inComponent(t, async (ctx) => {
      const work = await ctx.db.get(id);
      return await ctx.db.system.get(work.state.scheduledId);
    });
    expect(worker.state.kind).toBe("failed");
    expect(probe.attempts.get("a1")).toBeUndefined(); // it died before the job's code ran
    // Recovery cannot tell a worker that died before its action from one that died during it:
    // nothing reruns until such an action could have ended (the worker's end + 10 + 1 min).
    await deployment.run(10 * 60_000, 1_000);
    expect(probe.attempts.get("a1")).toBeUndefined();
    await deployment.run(3 * 60_000, 1_000);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success"]);
    expect(probe.attempts.get("a1")).toBe(1);
  });

  it("a worker action whose report call dies after taking effect leaves the job reported once", async () => {
    const { t, deployment } = await setupDeployment({ seed: 6 });
    quiet();
    deployment.arm({ kind: "actionDies", at: 2, after: true, mode: "hang", noticedAfterMs: 1_000 });
    await enqueue(t, "action", [{ key: "a2" }]);
    await deployment.run(60_000, 500);
    expect(deployment.fired.map((f) => f.error)).toEqual([
      expect.stringMatching(/call 2 \(runMutation, after/),
    ]);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success"]);
  });

  it("an executor dies at a report mid-batch: the attempts of the tasks it took fail, and each runs again and reports once", async () => {
    const { t, deployment } = await setupDeployment({
      seed: 7,
      maxStartDelayMs: 0,
      actions: { executor: ioExecutor },
    });
    quiet();
    // Its second report: the first took the three tasks, which are running (3 s each).
    deployment.arm({
      kind: "actionDies",
      at: 2,
      after: false,
      mode: "hang",
      noticedAfterMs: 2_000,
      action: "executor",
    });
    const ids: string[] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: ["e0", "e1", "e2"].map((key) => ({ key, ms: 3_000 })),
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await deployment.run(90_000, 500);
    expect(deployment.fired).toHaveLength(1);
    expect(deployment.fired[0]).toMatchObject({
      fn: expect.stringMatching(/tasks:run$/),
      executorId: expect.any(String),
      error: expect.stringMatching(/the action executor died at its call 2/),
    });
    // The dead executor's tasks finished their runs, but it never called the pool again: each
    // attempt failed as the executor's, and the retry, in another executor, succeeded.
    for (const [i, id] of ids.entries()) {
      expect(await info(t, id)).toMatchObject({ previousAttempts: 2, result: { kind: "success" } });
      expect(probe.attempts.get(`e${i}`)).toBe(2);
    }
    expect((await completions(t)).map((c) => c.result.kind)).toEqual([
      "success",
      "success",
      "success",
    ]);
  });
});

describe("_scheduled_functions", () => {
  it("finished rows get a completion time and are collected after the window", async () => {
    const { t, deployment } = await setupDeployment({ seed: 8, gcAfterMs: 10_000 });
    await enqueue(t, "mutation", [{ key: "g1" }, { key: "g2" }]);
    await deployment.run(3_000);
    const rows = async () =>
      await inComponent(
        t,
        async (ctx) => await ctx.db.system.query("_scheduled_functions").collect(),
      );
    const before = await rows();
    const finished = before.filter(
      (r: any) => r.state.kind !== "pending" && r.state.kind !== "inProgress",
    );
    expect(finished.length).toBeGreaterThan(2);
    for (const row of finished) expect(row.completedTime).toEqual(expect.any(Number));
    await deployment.run(120_000, 1_000);
    expect(deployment.stats.gcDeleted).toBeGreaterThan(0);
    const left = new Set((await rows()).map((r: any) => r._id));
    expect(finished.some((r: any) => !left.has(r._id))).toBe(true);
  });
});

describe("a test's direct view of a table (documents)", () => {
  it("is what a query reads after every commit: rows patched, added and deleted, and none of a rolled-back transaction", async () => {
    const { t, deployment } = await setupDeployment({ seed: 9 });
    type Step = { op: "insert" | "patch" | "delete" | "abort"; pick: number; value: string };
    const step = fc.record({
      op: fc.constantFrom("insert" as const, "patch" as const, "delete" as const, "abort" as const),
      pick: fc.nat(),
      value: fc.string({ maxLength: 8 }),
    });
    const program = fc.array(fc.array(step, { minLength: 1, maxLength: 4 }), { maxLength: 30 });
    // Transactions of a few steps each; an "abort" step throws, rolling its transaction back.
    const transactions = fc.sample(program, { seed: 9, numRuns: 20 }).flat();
    const queried = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    let aborts = 0;
    for (const steps of transactions) {
      // The view is read before each transaction too, so that what it kept is what is tested.
      deployment.documents("payloads");
      await inComponent(t, async (ctx) => {
        for (const { op, pick, value } of steps as Step[]) {
          const rows = await ctx.db.query("payloads").collect();
          const row = rows.length > 0 ? rows[pick % rows.length] : undefined;
          if (op === "insert" || row === undefined) {
            await ctx.db.insert("payloads", { returnValue: value });
          } else if (op === "patch") await ctx.db.patch(row._id, { returnValue: value });
          else if (op === "delete") await ctx.db.delete(row._id);
          else throw new Error("abort");
        }
      }).catch((error: Error) => {
        expect(error.message).toMatch(/abort/);
        aborts++;
      });
      expect(deployment.documents("payloads")).toEqual(await queried());
    }
    expect(aborts).toBeGreaterThan(0);
    expect((await queried()).length).toBeGreaterThan(0);
  });
});
