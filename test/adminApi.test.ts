/**
 * The admin API (section 9 of the API extensions): `pool.adminApi({ authorize })` gives an app
 * public functions an operator's page calls. Each does what the pool method of its name does for a
 * caller `authorize` lets in; for any other caller (no identity, a role it refuses, or `authorize`
 * throwing) it fails with `workpool/Unauthorized`, returns nothing and changes nothing. The test
 * app's guard (test/app/admin.ts) lets "admin" do anything and "viewer" only read.
 */
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { isInvalidArgumentError, isUnauthorizedError, Workpool } from "../src/client/index.js";
import type { WorkpoolComponent } from "../src/client/index.js";
import {
  callPool,
  completions,
  componentRows,
  enqueue,
  keyStatus,
  poolStats,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

const admin = anyApi.admin;
const ADMIN = { subject: "ada", role: "admin" };
const VIEWER = { subject: "vic", role: "viewer" };
const BROKEN = { subject: "broken", role: "admin" };

/** The error `promise` rejects with (fails the test if it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  expect.fail("expected the call to fail");
}

/** A pool with a failed job (key "k1") and a pending, far-off one (key "k2"). */
async function poolWithAFailure(t: any) {
  const [failed] = await enqueue(t, "mutation", [{ key: "k1", failTimes: 1 }], {
    options: { key: "k1" },
  });
  const [pending] = await enqueue(t, "mutation", [{ key: "later" }], {
    options: { key: "k2", runAfter: 600_000 },
  });
  await runUntil(t, async () => (await completions(t)).length === 1, 5000);
  const group: string = await t.mutation(anyApi.pool.callClient, {
    method: "createGroup",
    args: [],
  });
  return { failed, pending, group };
}

/** Every admin function, with arguments valid in `poolWithAFailure`'s pool. */
function everyCall(ids: { failed: string; pending: string; group: string }) {
  return [
    { fn: "overview", kind: "query", args: {} },
    { fn: "jobs", kind: "query", args: { paginationOpts: { numItems: 10, cursor: null } } },
    { fn: "job", kind: "query", args: { id: ids.failed } },
    { fn: "retry", kind: "mutation", args: { id: ids.failed } },
    { fn: "cancel", kind: "mutation", args: { id: ids.pending } },
    { fn: "pause", kind: "mutation", args: {} },
    { fn: "resume", kind: "mutation", args: { key: "k1" } },
    { fn: "setKeyParallelism", kind: "mutation", args: { key: "k1", parallelism: 3 } },
    { fn: "setMaxParallelism", kind: "mutation", args: { maxParallelism: 7 } },
    { fn: "group", kind: "query", args: { id: ids.group } },
    { fn: "cancelGroup", kind: "mutation", args: { id: ids.group } },
    { fn: "schedules", kind: "query", args: { paginationOpts: { numItems: 10, cursor: null } } },
    { fn: "pauseSchedule", kind: "mutation", args: { name: "nightly" } },
    { fn: "resumeSchedule", kind: "mutation", args: { name: "nightly" } },
    { fn: "runScheduleNow", kind: "mutation", args: { name: "nightly" } },
  ] as const;
}

function call(t: any, c: { fn: string; kind: "query" | "mutation"; args: object }) {
  return c.kind === "query" ? t.query(admin[c.fn], c.args) : t.mutation(admin[c.fn], c.args);
}

describe("adminApi, allowed", () => {
  it("overview: stats with totals, the last minute second by second, and a page of keys", async () => {
    const t = setup();
    await poolWithAFailure(t);
    // More events, seconds later: the series holds seconds from the loop's ring too.
    await runFor(t, 2000);
    await enqueue(t, "mutation", [{ key: "later" }]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    const as = t.withIdentity(ADMIN);
    const view = await as.query(admin.overview, {});
    expect(view.stats).toEqual(await poolStats(t));
    expect(view.series.filter((s: any) => s.started > 0).length).toBe(2);
    expect(view.stats.totals).toMatchObject({ enqueued: 3, started: 2, failed: 1, succeeded: 1 });
    expect(view.series).toHaveLength(60);
    const now = Math.floor(Date.now() / 1000);
    expect(view.series.map((s: any) => s.second)).toEqual(
      Array.from({ length: 60 }, (_, i) => now - 59 + i),
    );
    const sum = (kind: string) => view.series.reduce((n: number, s: any) => n + s[kind], 0);
    for (const kind of ["started", "succeeded", "failed", "canceled", "retried"]) {
      expect(sum(kind), kind).toBe(view.stats.lastMinute[kind]);
    }
    expect(view.keys.page).toEqual([{ key: "k1", ...(await keyStatus(t, "k1")) }]);
    expect(view.keys.isDone).toBe(true);
  });

  it("overview: pages through every key once, in key order", async () => {
    const t = setup();
    const names = Array.from({ length: 25 }, (_, i) => `key${String(i).padStart(2, "0")}`);
    for (const key of names) await enqueue(t, "mutation", [{ key }], { options: { key } });
    await runUntil(t, async () => (await completions(t)).length === 25, 10_000);
    const as = t.withIdentity(VIEWER);
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let pages = 0; ; pages++) {
      expect(pages).toBeLessThan(4);
      const view: any = await as.query(admin.overview, {
        keysPaginationOpts: { numItems: 10, cursor },
      });
      expect(view.keys.page.length).toBeLessThanOrEqual(10);
      for (const row of view.keys.page) expect(row.succeeded, row.key).toBe(1);
      seen.push(...view.keys.page.map((row: any) => row.key));
      if (view.keys.isDone) break;
      cursor = view.keys.continueCursor;
    }
    expect(seen).toEqual(names);
    // Without keysPaginationOpts, the first 20.
    expect((await as.query(admin.overview, {})).keys.page).toHaveLength(20);
  });

  it("jobs and job: what list and info return", async () => {
    const t = setup();
    const { failed } = await poolWithAFailure(t);
    const as = t.withIdentity(VIEWER);
    const page = await as.query(admin.jobs, {
      outcome: "failed",
      paginationOpts: { numItems: 10, cursor: null },
    });
    expect(page.page.map((j: any) => j.id)).toEqual([failed]);
    expect(page.page[0].result.kind).toBe("failed");
    const job = await as.query(admin.job, { id: failed });
    expect(job).toMatchObject({ id: failed, state: "finished", previousAttempts: 1 });
    expect(job.result.kind).toBe("failed");
  });

  it("retry reruns a failed job once, and cancel cancels", async () => {
    const t = setup();
    const { failed, pending } = await poolWithAFailure(t);
    const as = t.withIdentity(ADMIN);
    const again = await as.mutation(admin.retry, { id: failed });
    expect(await as.mutation(admin.retry, { id: failed })).toBe(again);
    await as.mutation(admin.cancel, { id: pending });
    await runUntil(t, async () => (await completions(t)).length === 3, 5000);
    expect((await as.query(admin.job, { id: again })).result.kind).toBe("success");
    expect((await as.query(admin.job, { id: pending })).result.kind).toBe("canceled");
  });

  it("pause and resume the pool and a key; set a key's and the pool's parallelism", async () => {
    const t = setup();
    await poolWithAFailure(t);
    const as = t.withIdentity(ADMIN);
    await as.mutation(admin.pause, {});
    await as.mutation(admin.pause, { key: "k1" });
    expect((await poolStats(t)).paused).toBe(true);
    expect((await keyStatus(t, "k1")).paused).toBe(true);
    // Paused: a new job does not start.
    await enqueue(t, "mutation", [{ key: "n1" }]);
    await runFor(t, 2000);
    expect((await poolStats(t)).pending).toBe(2);
    await as.mutation(admin.resume, {});
    await as.mutation(admin.resume, { key: "k1" });
    await runUntil(t, async () => (await poolStats(t)).pending === 1, 5000);
    expect((await keyStatus(t, "k1")).paused).toBe(false);
    await as.mutation(admin.setKeyParallelism, { key: "k1", parallelism: 4 });
    expect((await keyStatus(t, "k1")).parallelism).toBe(4);
    await as.mutation(admin.setKeyParallelism, { key: "k1", parallelism: null });
    expect((await keyStatus(t, "k1")).parallelism).toBe(1);
    await as.mutation(admin.setMaxParallelism, { maxParallelism: 3 });
    expect((await poolStats(t)).maxParallelism).toBe(3);
  });

  it("a maxParallelism set from the page stays in force whatever clients pass, until cleared", async () => {
    const t = setup();
    const as = t.withIdentity(ADMIN);
    await as.mutation(admin.setMaxParallelism, { maxParallelism: 3 });
    await enqueue(t, "mutation", [{ key: "a" }]);
    await enqueue(t, "mutation", [{ key: "b" }], { poolOptions: { maxParallelism: 12 } });
    expect(await poolStats(t)).toMatchObject({ maxParallelism: 3, operatorMaxParallelism: 3 });
    await as.mutation(admin.setMaxParallelism, { maxParallelism: null });
    // Cleared: the clients' last value is in force.
    expect(await poolStats(t)).toMatchObject({ maxParallelism: 12, operatorMaxParallelism: null });
  });
});

describe("adminApi, denied", () => {
  const callers = [
    { who: "a caller without an identity", as: (t: any) => t },
    { who: "a caller whose role the guard refuses", as: (t: any) => t.withIdentity(VIEWER) },
    { who: "any caller when authorize throws", as: (t: any) => t.withIdentity(BROKEN) },
  ];
  for (const { who, as } of callers) {
    it(`refuses ${who} with workpool/Unauthorized, and changes nothing`, async () => {
      const t = setup();
      const ids = await poolWithAFailure(t);
      for (const c of everyCall(ids)) {
        // The viewer may read: only its writes are refused.
        if (who.includes("role") && c.kind === "query") continue;
        const before = await componentRows(t);
        const error = await rejection(call(as(t), c));
        expect(isUnauthorizedError(error), `${c.fn}: ${String(error)}`).toBe(true);
        expect((error as any).data).toMatchObject({ operation: c.fn });
        // The guard's own reason (a thrown message) is not sent to the caller.
        expect(String((error as any).data.message)).not.toContain("role service");
        expect(await componentRows(t), c.fn).toEqual(before);
      }
    });
  }

  it("schedules, pauseSchedule, resumeSchedule, runScheduleNow: what the pool's methods do", async () => {
    const t = setup();
    await t.mutation(anyApi.schedules.schedule, {
      kind: "mutation",
      name: "nightly",
      args: { key: "nightly" },
      options: { cron: "0 3 * * *", timezone: "Europe/Berlin" },
    });
    const as = t.withIdentity(ADMIN);
    const list = async () =>
      (await as.query(admin.schedules, { paginationOpts: { numItems: 10, cursor: null } })).page;
    expect((await list()).map((s: any) => [s.name, s.paused])).toEqual([["nightly", false]]);
    expect(await as.mutation(admin.pauseSchedule, { name: "nightly" })).toBe(true);
    expect((await list())[0]).toMatchObject({ paused: true, nextRunAt: null });
    expect(await as.mutation(admin.resumeSchedule, { name: "nightly" })).toBe(true);
    expect((await list())[0].nextRunAt).toEqual(expect.any(Number));
    const workId = await as.mutation(admin.runScheduleNow, { name: "nightly" });
    expect((await list())[0].lastRun.workId).toBe(workId);
    expect(await as.mutation(admin.pauseSchedule, { name: "unknown" })).toBe(false);
  });

  it("lets the viewer read what the admin reads", async () => {
    const t = setup();
    const ids = await poolWithAFailure(t);
    for (const c of everyCall(ids).filter((c) => c.kind === "query")) {
      expect(await call(t.withIdentity(VIEWER), c), c.fn).toEqual(
        await call(t.withIdentity(ADMIN), c),
      );
    }
  });

  it("cannot be made without authorize", () => {
    const pool = new Workpool({} as WorkpoolComponent);
    expect(() => pool.adminApi({} as any)).toThrow(/adminApi needs `authorize/);
    expect(() => pool.adminApi(undefined as any)).toThrow(/adminApi needs `authorize/);
  });
});

describe("adminApi, groups", () => {
  it("group shows a group's progress and cancelGroup cancels its jobs", async () => {
    const t = setup();
    const group: string = await t.mutation(anyApi.pool.callClient, {
      method: "createGroup",
      args: [{ name: "import" }],
    });
    await enqueue(t, "mutation", [{ key: "g1" }, { key: "g2" }], {
      options: { group, runAfter: 600_000 },
    });
    const as = t.withIdentity(ADMIN);
    expect(await as.query(admin.group, { id: group })).toMatchObject({
      name: "import",
      total: 2,
      pending: 2,
    });
    await as.mutation(admin.cancelGroup, { id: group });
    await runUntil(t, async () => (await as.query(admin.group, { id: group }))?.done === true);
    expect(await as.query(admin.group, { id: group })).toMatchObject({ canceled: 2, closed: true });
  });
});

describe("adminApi, bad arguments", () => {
  it("rejects values the pool rejects, naming the argument, and changes nothing", async () => {
    const t = setup();
    const ids = await poolWithAFailure(t);
    const as = t.withIdentity(ADMIN);
    const cases: Array<[Promise<unknown>, string]> = [
      [as.mutation(admin.setMaxParallelism, { maxParallelism: -1 }), "maxParallelism"],
      [as.mutation(admin.setMaxParallelism, { maxParallelism: 1.5 }), "maxParallelism"],
      [as.mutation(admin.setKeyParallelism, { key: "k1", parallelism: 0 }), "parallelism"],
      [as.mutation(admin.pause, { key: "" }), "key"],
      [as.mutation(admin.resume, { key: "" }), "key"],
      [as.mutation(admin.cancel, { id: "not-an-id" }), "id"],
      [as.query(admin.job, { id: "not-an-id" }), "id"],
      [as.mutation(admin.retry, { id: ids.pending }), "id"],
      [
        as.query(admin.jobs, { paginationOpts: { numItems: 5000, cursor: null } }),
        "paginationOpts.numItems",
      ],
      [
        as.query(admin.overview, { keysPaginationOpts: { numItems: 0, cursor: null } }),
        "keysPaginationOpts.numItems",
      ],
    ];
    for (const [promise, argument] of cases) {
      const before = await componentRows(t);
      const error = await rejection(promise);
      expect(isInvalidArgumentError(error), String(error)).toBe(true);
      expect((error as any).data.argument).toBe(argument);
      expect(await componentRows(t)).toEqual(before);
    }
  });

  it("rejects arguments of the wrong type or name before anything runs", async () => {
    const t = setup();
    await poolWithAFailure(t);
    const as = t.withIdentity(ADMIN);
    const before = await componentRows(t);
    await expect(as.mutation(admin.setMaxParallelism, { maxParallelism: "9" })).rejects.toThrow(
      /Validator error: Expected one of number, null/,
    );
    await expect(as.mutation(admin.pause, { keys: "k1" })).rejects.toThrow(/keys/);
    await expect(as.query(admin.job, {})).rejects.toThrow(/id/);
    expect(await componentRows(t)).toEqual(before);
  });

  it("checks authorization before the values: a refused caller learns nothing of them", async () => {
    const t = setup();
    const error = await rejection(t.mutation(admin.setMaxParallelism, { maxParallelism: -1 }));
    expect(isUnauthorizedError(error)).toBe(true);
    expect(await callPool(t, "stats", [])).toMatchObject({ maxParallelism: 10 });
  });
});
