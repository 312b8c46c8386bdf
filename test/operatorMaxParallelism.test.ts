// The operator's maxParallelism (API extensions, section 9): `pool.setMaxParallelism(ctx, n | null)`
// is stored apart from the clients' option, is the value in force while set whatever clients pass,
// and `null` hands the pool back to the clients' value. The admin API's functions never write the
// options of the pool they were made from.
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { isInvalidArgumentError } from "../src/client/index.js";
import {
  callPool,
  completions,
  enqueue,
  inComponent,
  jobStates,
  poolStats,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

const admin = anyApi.sec4Admin;
const ADMIN = { subject: "ada", role: "admin" };
const CLIENT = { maxParallelism: 5 };

describe("pool.setMaxParallelism: the operator's value", () => {
  it("is unset at first: stats shows operatorMaxParallelism null and the clients' value", async () => {
    const t = setup();
    await enqueue(t, "mutation", [{ key: "a" }], { poolOptions: CLIENT });
    const stats = await poolStats(t);
    expect(stats.operatorMaxParallelism).toBeNull();
    expect(stats.maxParallelism).toBe(5);
  });

  it("is in force while set, whatever maxParallelism clients pass, and 0 is not a pause", async () => {
    const t = setup();
    await callPool(t, "setMaxParallelism", [0]);
    await enqueue(t, "mutation", [{ key: "a" }, { key: "b" }], { poolOptions: CLIENT });
    await t.mutation(anyApi.pool.updateConfig, { maxParallelism: 7 });
    await runFor(t, 2000);
    const stats = await poolStats(t);
    expect(stats).toMatchObject({ maxParallelism: 0, operatorMaxParallelism: 0, paused: false });
    expect(await jobStates(t)).toEqual({ pending: 2, running: 0, finished: 0 });
  });

  it("cleared with null, the clients' last value is in force at once and waiting jobs start", async () => {
    const t = setup();
    await callPool(t, "setMaxParallelism", [0]);
    await enqueue(t, "mutation", [{ key: "a" }, { key: "b" }], { poolOptions: CLIENT });
    await runFor(t, 1000);
    await callPool(t, "setMaxParallelism", [null]);
    expect(await poolStats(t)).toMatchObject({ maxParallelism: 5, operatorMaxParallelism: null });
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    expect((await completions(t)).map((c: any) => c.result.kind)).toEqual(["success", "success"]);
  });

  it("survives a client's cancel, cancelAll and retry with their own maxParallelism", async () => {
    const t = setup();
    const [failed] = await enqueue(t, "mutation", [{ key: "f", failTimes: 1 }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    await callPool(t, "setMaxParallelism", [3]);
    const [later] = await enqueue(t, "mutation", [{ key: "later" }], {
      poolOptions: CLIENT,
      options: { runAfter: 600_000 },
    });
    await callPool(t, "cancel", [later], CLIENT);
    await callPool(t, "retry", [failed], { maxParallelism: 9 });
    await callPool(t, "cancelAll", [], { maxParallelism: 8 });
    expect(await poolStats(t)).toMatchObject({ maxParallelism: 3, operatorMaxParallelism: 3 });
  });

  for (const bad of [-1, 1.5, Number.POSITIVE_INFINITY]) {
    it(`refuses ${bad}, naming maxParallelism, and keeps what was set`, async () => {
      const t = setup();
      await callPool(t, "setMaxParallelism", [2]);
      let error: unknown;
      try {
        await t.mutation(anyApi.pool.callComponent, {
          fn: "config.setMaxParallelism",
          args: { maxParallelism: bad },
        });
      } catch (e) {
        error = e;
      }
      expect(isInvalidArgumentError(error)).toBe(true);
      expect((error as any).data.argument).toBe("maxParallelism");
      expect(await poolStats(t)).toMatchObject({ maxParallelism: 2, operatorMaxParallelism: 2 });
    });
  }
});

describe("the admin API and the operator's value", () => {
  it("setMaxParallelism sets it and null clears it", async () => {
    const t = setup();
    const as = t.withIdentity(ADMIN);
    await enqueue(t, "mutation", [{ key: "a" }], { poolOptions: CLIENT });
    await as.mutation(admin.setMaxParallelism, { maxParallelism: 1 });
    expect((await as.query(admin.overview, {})).stats).toMatchObject({
      maxParallelism: 1,
      operatorMaxParallelism: 1,
    });
    await as.mutation(admin.setMaxParallelism, { maxParallelism: null });
    expect((await as.query(admin.overview, {})).stats).toMatchObject({
      maxParallelism: 5,
      operatorMaxParallelism: null,
    });
  });

  it("cancel and retry leave the clients' settings as another client left them", async () => {
    const t = setup();
    const as = t.withIdentity(ADMIN);
    // A client of the same pool passes other options than the pool the admin API was made from.
    const other = {
      maxParallelism: 7,
      keyParallelism: 2,
      rateLimit: { starts: 9, periodMs: 1000 },
    };
    const [failed] = await enqueue(t, "mutation", [{ key: "f", failTimes: 1 }], {
      poolOptions: other,
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const [later] = await enqueue(t, "mutation", [{ key: "later" }], {
      poolOptions: other,
      options: { runAfter: 600_000 },
    });
    const before = await inComponent(t, async (ctx) => await ctx.db.query("config").first());
    await as.mutation(admin.cancel, { id: later });
    await as.mutation(admin.retry, { id: failed });
    const after = await inComponent(t, async (ctx) => await ctx.db.query("config").first());
    expect(before).toMatchObject({
      maxParallelism: 7,
      keyParallelism: 2,
      rateLimit: other.rateLimit,
    });
    expect(after).toEqual(before);
  });
});
