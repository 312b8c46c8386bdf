/**
 * Specifications of groups (API-EXTENSIONS section 12, the part built so far): jobs join a group at
 * enqueue, from any number of transactions and every enqueue method; `groupStatus` counts them
 * exactly, from a constant number of rows; `closeGroup` ends joining, and a closed group whose
 * jobs all finished is done. Through the client, on convex-test with the virtual clock.
 */
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { ENQUEUE_COUNT_SHARDS } from "../src/component/api/enqueue.js";
import { GROUP_STATUS_TTL_MS } from "../src/component/mainLoop/groups.js";
import {
  installInstrumentation,
  onTopLevelTransaction,
  type TransactionTotal,
} from "../bench/instrument.js";
import {
  completions,
  enqueue,
  inComponent,
  info,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

async function createGroup(t: T, name?: string): Promise<string> {
  return await t.mutation(anyApi.pool.callClient, {
    method: "createGroup",
    args: name === undefined ? [] : [{ name }],
  });
}

async function closeGroup(t: T, id: string): Promise<void> {
  await t.mutation(anyApi.pool.callClient, { method: "closeGroup", args: [id] });
}

async function groupStatus(t: T, id: string): Promise<any> {
  return await t.query(anyApi.pool.callClientQuery, { method: "groupStatus", args: [id] });
}

describe("groups", () => {
  it("counts its jobs exactly as they run and finish, and is done once closed and finished", async () => {
    const t = setup();
    const group = await createGroup(t, "import 42");
    const fresh = await groupStatus(t, group);
    expect(fresh).toEqual({
      id: group,
      name: "import 42",
      closed: false,
      done: false,
      total: 0,
      pending: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      canceled: 0,
      createdAt: expect.any(Number),
    });
    // Joined from three transactions, by single and batch enqueues of actions and mutations.
    await enqueue(t, "action", [{ key: "a", ms: 1000 }], { options: { group } });
    await enqueue(
      t,
      "action",
      [
        { key: "b", ms: 1000 },
        { key: "c", failTimes: 1 },
      ],
      {
        batch: true,
        options: { group },
      },
    );
    await enqueue(t, "mutation", [{ key: "d" }], { options: { group } });
    const [outside] = await enqueue(t, "action", [{ key: "outside", ms: 1000 }]);
    expect(outside).toBeDefined();
    expect(await groupStatus(t, group)).toMatchObject({ total: 4, pending: 4, running: 0 });
    await runUntil(t, async () => (await groupStatus(t, group)).running === 2);
    expect(await groupStatus(t, group)).toMatchObject({
      total: 4,
      pending: 0,
      running: 2,
      succeeded: 1,
      failed: 1,
      done: false,
    });
    await runUntil(t, async () => (await groupStatus(t, group)).succeeded === 3);
    const finishedOpen = await groupStatus(t, group);
    expect(finishedOpen).toMatchObject({ closed: false, done: false, pending: 0, running: 0 });
    expect(finishedOpen.finishedAt).toBeUndefined();
    await closeGroup(t, group);
    const done = await groupStatus(t, group);
    expect(done).toMatchObject({ closed: true, done: true, total: 4, succeeded: 3, failed: 1 });
    expect(done.finishedAt).toBe(Date.now());
  });

  it("becomes done when the last job of a closed group finishes", async () => {
    const t = setup();
    const group = await createGroup(t);
    const [id] = await enqueue(t, "action", [{ key: "slow", ms: 2000 }], { options: { group } });
    expect((await info(t, id)).group).toBe(group);
    await closeGroup(t, group);
    await runUntil(t, async () => (await groupStatus(t, group)).running === 1);
    expect(await groupStatus(t, group)).toMatchObject({ closed: true, done: false });
    await runUntil(t, async () => (await groupStatus(t, group)).done);
    const done = await groupStatus(t, group);
    expect(done).toMatchObject({ total: 1, succeeded: 1, pending: 0, running: 0 });
    expect(done.finishedAt).toBeGreaterThanOrEqual(done.createdAt + 2000);
  });

  it("counts a canceled job, and a closed empty group is done at once", async () => {
    const t = setup();
    const group = await createGroup(t);
    const [id] = await enqueue(t, "action", [{ key: "later" }], {
      options: { group, runAfter: 60_000 },
    });
    await t.mutation(anyApi.pool.cancel, { id });
    await runUntil(t, async () => (await groupStatus(t, group)).canceled === 1);
    const empty = await createGroup(t);
    await closeGroup(t, empty);
    expect(await groupStatus(t, empty)).toMatchObject({ total: 0, done: true, closed: true });
    await closeGroup(t, empty); // closing again does nothing
    expect(await groupStatus(t, empty)).toMatchObject({ done: true });
  });

  it("rejects an enqueue into a closed or unknown group, writing nothing", async () => {
    const t = setup();
    const group = await createGroup(t);
    await closeGroup(t, group);
    await expect(enqueue(t, "action", [{ key: "x" }], { options: { group } })).rejects.toThrow(
      /invalid group: must be an open group/,
    );
    await expect(
      enqueue(t, "action", [{ key: "x" }, { key: "y" }], { batch: true, options: { group } }),
    ).rejects.toThrow(/invalid items\[0\]\.group/);
    await expect(
      enqueue(t, "action", [{ key: "x" }], { options: { group: "not-a-group" } }),
    ).rejects.toThrow(/invalid group: must be a GroupId/);
    await inComponent(t, async (ctx) => await ctx.db.delete(group));
    await expect(enqueue(t, "action", [{ key: "x" }], { options: { group } })).rejects.toThrow(
      /invalid group: must be a group this pool created/,
    );
    expect(await inComponent(t, async (ctx) => await ctx.db.query("work").collect())).toEqual([]);
    expect(await groupStatus(t, group)).toBeNull();
  });

  it("spreads a group's enqueue counts over at most one row per shard", async () => {
    const t = setup();
    const group = await createGroup(t);
    for (let i = 0; i < 40; i++) {
      await enqueue(t, "action", [{ key: `j${i}` }], { options: { group, runAfter: 60_000 } });
    }
    const ledger = await inComponent(t, async (ctx) => await ctx.db.query("groupLedger").collect());
    expect(ledger.length).toBeLessThanOrEqual(ENQUEUE_COUNT_SHARDS);
    expect(ledger.length).toBeGreaterThan(1);
    expect((await groupStatus(t, group)).total).toBe(40);
  });

  it("reads as much for the status of a group of thousands as for one of 10 jobs", async () => {
    // GROUP_STATUS_JOBS=100000 gives the figure in docs/PERFORMANCE.md (about a minute here).
    const large = Number(process.env.GROUP_STATUS_JOBS ?? 2000);
    const statusReads = async (jobs: number) => {
      const t = setup();
      const group = await createGroup(t);
      // One job runs to its end (the loop's counts row exists), the rest wait an hour, enqueued
      // in batches of up to 1,000 from transactions of their own (spread over the shards).
      await enqueue(t, "mutation", [{ key: "first" }], { options: { group } });
      await runUntil(t, async () => (await groupStatus(t, group)).succeeded === 1);
      for (let from = 1; from < jobs; from += 1000) {
        const args = Array.from({ length: Math.min(1000, jobs - from) }, (_, i) => ({
          key: `j${from + i}`,
        }));
        await enqueue(t, "action", args, { batch: true, options: { group, runAfter: 3_600_000 } });
      }
      installInstrumentation();
      const seen: TransactionTotal[] = [];
      const stop = onTopLevelTransaction((_, total) => seen.push(total));
      const status = await groupStatus(t, group);
      stop();
      expect(status).toMatchObject({ total: jobs, succeeded: 1, pending: jobs - 1 });
      expect(seen).toHaveLength(1);
      return seen[0];
    };
    const small = await statusReads(10);
    const big = await statusReads(large);
    // The group's row, its ledger (one row per shard used: at most ENQUEUE_COUNT_SHARDS) and the
    // loop's counts row: three index ranges whatever the size.
    for (const reads of [small, big]) {
      expect(reads.databaseQueries).toBe(3);
      expect(reads.documentsRead).toBeLessThanOrEqual(2 + ENQUEUE_COUNT_SHARDS);
    }
    // For docs/PERFORMANCE.md.
    console.log(
      `groupStatus reads: 10 jobs ${JSON.stringify(small)}; ${large} jobs ${JSON.stringify(big)}`,
    );
  });
});

describe("a group's onComplete", () => {
  it("runs exactly once with the counts, after every job's own onComplete", async () => {
    const t = setup();
    const group = await t.mutation(anyApi.pool.callClient, {
      method: "createGroup",
      args: [{ onComplete: "$ref:groups.onGroupComplete", context: { importId: 7 } }],
    });
    await enqueue(
      t,
      "action",
      [
        { key: "a", ms: 500 },
        { key: "b", failTimes: 1 },
      ],
      {
        batch: true,
        options: { group },
      },
    );
    await enqueue(t, "mutation", [{ key: "c" }], { options: { group } });
    await closeGroup(t, group);
    await runUntil(t, async () => (await groupCallbacks(t)).length > 0);
    await runFor(t, 3000);
    const calls = (await groupCallbacks(t)).map(({ workId, context, result }) => ({
      workId,
      context,
      result,
    }));
    expect(calls).toEqual([
      {
        workId: group,
        context: { importId: 7 },
        result: { group: true, counts: { succeeded: 2, failed: 1, canceled: 0 }, jobCallbacks: 3 },
      },
    ]);
  });

  it("runs at once for a group closed after its jobs finished, and for an empty group", async () => {
    const t = setup();
    const group = await t.mutation(anyApi.pool.callClient, {
      method: "createGroup",
      args: [{ onComplete: "$ref:groups.onGroupComplete" }],
    });
    await enqueue(t, "action", [{ key: "quick" }], { options: { group } });
    await runUntil(t, async () => (await groupStatus(t, group)).succeeded === 1);
    await closeGroup(t, group);
    const empty = await t.mutation(anyApi.pool.callClient, {
      method: "createGroup",
      args: [{ onComplete: "$ref:groups.onGroupComplete" }],
    });
    await closeGroup(t, empty);
    await runUntil(t, async () => (await groupCallbacks(t)).length === 2);
    await closeGroup(t, group);
    await runFor(t, 2000);
    const byGroup = new Map((await groupCallbacks(t)).map((c: any) => [c.workId, c.result]));
    expect(byGroup.get(group)?.counts).toEqual({ succeeded: 1, failed: 0, canceled: 0 });
    expect(byGroup.get(empty)?.counts).toEqual({ succeeded: 0, failed: 0, canceled: 0 });
    expect((await groupCallbacks(t)).length).toBe(2);
  });
});

async function groupCallbacks(t: T): Promise<any[]> {
  return (await completions(t)).filter((c) => c.result?.group === true);
}

describe("cancelGroup", () => {
  it("closes the group and cancels its unfinished jobs, a page per transaction", async () => {
    const t = setup();
    const group = await t.mutation(anyApi.pool.callClient, {
      method: "createGroup",
      args: [{ onComplete: "$ref:groups.onGroupComplete" }],
    });
    await enqueue(t, "action", [{ key: "done" }], { options: { group } });
    await runUntil(t, async () => (await groupStatus(t, group)).succeeded === 1);
    await enqueue(
      t,
      "action",
      Array.from({ length: 5 }, (_, i) => ({ key: `later${i}` })),
      { batch: true, options: { group, runAfter: 60_000 } },
    );
    await t.mutation(anyApi.pool.callClient, {
      method: "cancelGroup",
      args: [group, { limit: 2 }],
    });
    expect(await groupStatus(t, group)).toMatchObject({ closed: true, total: 6 });
    await runUntil(t, async () => (await groupStatus(t, group)).done);
    expect(await groupStatus(t, group)).toMatchObject({
      succeeded: 1,
      canceled: 5,
      pending: 0,
      running: 0,
    });
    await runUntil(t, async () => (await groupCallbacks(t)).length === 1);
    expect((await groupCallbacks(t))[0].result.counts).toEqual({
      succeeded: 1,
      failed: 0,
      canceled: 5,
    });
    // A done group is left as it is.
    await t.mutation(anyApi.pool.callClient, { method: "cancelGroup", args: [group] });
    await runFor(t, 1000);
    expect((await groupCallbacks(t)).length).toBe(1);
  });
});

describe("retry in a group", () => {
  it("puts the rerun in the job's group while the group is not done, even closed", async () => {
    const t = setup();
    const group = await createGroup(t);
    const [flaky] = await enqueue(t, "action", [{ key: "f", failTimes: 1 }], {
      options: { group },
    });
    await enqueue(t, "action", [{ key: "slow", ms: 3000 }], { options: { group } });
    await closeGroup(t, group);
    await runUntil(t, async () => (await groupStatus(t, group)).failed === 1);
    const rerun = await t.mutation(anyApi.pool.callClient, { method: "retry", args: [flaky] });
    expect((await info(t, rerun)).group).toBe(group);
    expect(await groupStatus(t, group)).toMatchObject({ total: 3, failed: 1, done: false });
    await runUntil(t, async () => (await groupStatus(t, group)).done);
    expect(await groupStatus(t, group)).toMatchObject({ total: 3, succeeded: 2, failed: 1 });
    // Once the group is done, a rerun is in no group.
    const [late] = await enqueue(t, "action", [{ key: "g", failTimes: 1 }], {
      options: { group: await createGroup(t) },
    });
    const lateGroup = (await info(t, late)).group;
    await closeGroup(t, lateGroup);
    await runUntil(t, async () => (await groupStatus(t, lateGroup)).done);
    const again = await t.mutation(anyApi.pool.callClient, { method: "retry", args: [late] });
    expect((await info(t, again)).group).toBeUndefined();
    expect((await groupStatus(t, lateGroup)).total).toBe(1);
  });
});

describe("list({ group })", () => {
  it("pages one group's jobs, with state and outcome filters, and refuses key or schedule with group", async () => {
    const t = setup();
    const group = await createGroup(t);
    const ids = await enqueue(t, "action", [{ key: "a" }, { key: "b", failTimes: 1 }], {
      batch: true,
      options: { group },
    });
    const [slow] = await enqueue(t, "action", [{ key: "c", ms: 5000 }], { options: { group } });
    await enqueue(t, "action", [{ key: "outsider" }]);
    await runUntil(t, async () => (await groupStatus(t, group)).failed === 1);
    const list = async (filter: object) =>
      (
        await t.query(anyApi.pool.callClientQuery, {
          method: "list",
          args: [{ ...filter, paginationOpts: { numItems: 10, cursor: null } }],
        })
      ).page.map((job: any) => job.id);
    expect((await list({ group })).sort()).toEqual([...ids, slow].sort());
    expect(await list({ group, state: "running" })).toEqual([slow]);
    expect(await list({ group, outcome: "failed" })).toEqual([ids[1]]);
    expect((await list({ group, state: "finished" })).sort()).toEqual([...ids].sort());
    const oneFilter = /invalid group: give one of key, group or schedule, not two/;
    await expect(list({ group, key: "a" })).rejects.toThrow(oneFilter);
    await expect(list({ group, schedule: "nightly" })).rejects.toThrow(oneFilter);
    await expect(list({ group: "not-a-group" })).rejects.toThrow(/invalid group/);
  });
});

describe("a done group's rows", () => {
  it("are deleted by the sweep after the status TTL, with its ledger and counts", async () => {
    const t = setup();
    const group = await createGroup(t);
    await enqueue(t, "action", [{ key: "a" }, { key: "b" }], { batch: true, options: { group } });
    await closeGroup(t, group);
    await runUntil(t, async () => (await groupStatus(t, group)).done);
    await runFor(t, GROUP_STATUS_TTL_MS / 2, 60_000);
    expect(await groupStatus(t, group)).toMatchObject({ done: true, succeeded: 2 });
    await runFor(t, GROUP_STATUS_TTL_MS / 2 + 60_000, 60_000);
    expect(await groupStatus(t, group)).toBeNull();
    const rows = await inComponent(t, async (ctx) => ({
      ledger: await ctx.db.query("groupLedger").collect(),
      state: await ctx.db.query("groupState").collect(),
    }));
    expect(rows).toEqual({ ledger: [], state: [] });
  });
});
