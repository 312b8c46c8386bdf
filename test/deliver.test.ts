/**
 * onComplete delivery (src/component/runners/deliver.ts): every callback runs in a transaction of its own
 * making, never in the loop's, so heavy, throwing or uncommittable handlers neither wedge the pool
 * nor lose or duplicate a callback. Time is virtual (helpers.ts); every loop pass is also checked
 * against the pass budget (test/passBudget.setup.ts).
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import {
  completions,
  delaySchedules,
  enqueue,
  inComponent,
  info,
  interceptSyscalls,
  jobStates,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

/** Silences the report and info lines; returns the ERROR lines logged, parsed. */
function captureErrors() {
  vi.spyOn(console, "info").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
  const errors: any[] = [];
  vi.spyOn(console, "error").mockImplementation((line: string) => {
    errors.push(JSON.parse(line));
  });
  return errors;
}

/** Enqueues `n` quick mutation jobs whose onComplete is `heavy.onComplete` with `context`. */
async function enqueueHeavy(t: T, n: number, context: object, prefix = "h") {
  const argsList = Array.from({ length: n }, (_, i) => ({ key: `${prefix}${i}` }));
  return await enqueue(t, "mutation", argsList, {
    batch: true,
    onComplete: "heavy.onComplete",
    options: { context },
    poolOptions: { maxParallelism: 20 },
  });
}

async function deliveryFailures(t: T) {
  return await inComponent(t, async (ctx) => await ctx.db.query("deliveryStats").first());
}

/** Every enqueued job got exactly one onComplete. */
async function expectOneCallbackEach(t: T, ids: string[]) {
  const got = (await completions(t)).map((c) => c.workId).sort();
  expect(got).toEqual([...ids].sort());
}

describe("onComplete delivery", () => {
  it("heavy handlers (700 reads each, 60 jobs) neither wedge the loop nor lose a callback", async () => {
    const t = setup();
    captureErrors();
    await t.mutation(anyApi.heavy.seedFiller, { n: 700 });
    const ids = await enqueueHeavy(t, 60, { reads: 700 });
    await runFor(t, 3000, 50);
    const [later] = await enqueue(t, "action", [{ key: "later" }]);
    await runUntil(t, async () => (await completions(t)).length === 61);
    await expectOneCallbackEach(t, [...ids, later]);
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 61 });
    expect(await deliveryFailures(t)).toBeNull();
  });

  it("heavy handlers (400 writes each, 60 jobs) all commit, each once", async () => {
    const t = setup();
    captureErrors();
    const ids = await enqueueHeavy(t, 60, { writes: 400 });
    await runFor(t, 3000, 50);
    await expectOneCallbackEach(t, ids);
    const written = await t.run(
      async (ctx: any) => (await ctx.db.query("effects").collect()).length,
    );
    // 60 job effects + 400 handler writes per job, none rolled back or repeated.
    expect(written).toBe(60 + 60 * 400);
    expect(await deliveryFailures(t)).toBeNull();
  });

  it("a throwing handler is rolled back, recorded with its workId, and the others are delivered", async () => {
    const t = setup();
    const errors = captureErrors();
    const ok = await enqueueHeavy(t, 4, {});
    const [bad] = await enqueueHeavy(t, 1, { throws: true }, "bad");
    await runFor(t, 2000, 50);
    await expectOneCallbackEach(t, ok); // the thrower's insert was rolled back
    expect(errors.filter((e) => e.event === "onCompleteFailed")).toEqual([
      expect.objectContaining({ workId: bad, error: expect.stringContaining("throws") }),
    ]);
    expect(await deliveryFailures(t)).toMatchObject({
      failures: 1,
      lastFailure: { workId: bad },
    });
    expect(await info(t, bad)).toMatchObject({ state: "finished", result: { kind: "success" } });
  });

  it("a handler too big to commit even alone is recorded as failed and blocks no one", async () => {
    const t = setup();
    const errors = captureErrors();
    const before = await enqueueHeavy(t, 3, {}, "before");
    const [huge] = await enqueueHeavy(t, 1, { writes: 16_500 }, "huge");
    const after = await enqueueHeavy(t, 3, {}, "after");
    await runFor(t, 3000, 50);
    const [later] = await enqueue(t, "action", [{ key: "later" }]);
    await runFor(t, 2000, 50);
    await expectOneCallbackEach(t, [...before, ...after, later]);
    expect(errors.filter((e) => e.event === "onCompleteFailed")).toEqual([
      expect.objectContaining({ workId: huge, error: expect.stringMatching(/too many/i) }),
    ]);
    expect(await deliveryFailures(t)).toMatchObject({ failures: 1 });
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 8 });
    const left = await inComponent(t, async (ctx) => await ctx.db.query("deliveries").collect());
    expect(left).toEqual([]);
  });

  it("names a row's shared handler once, and still calls it for each of the row's callbacks", async () => {
    const t = setup();
    // The deliverer runs a second late, so the row it reads can be looked at first.
    delaySchedules("deliver", 1_000);
    const argsList = ["a", "b", "c"].map((key) => ({ key }));
    const ids = await enqueue(t, "mutation", argsList, { batch: true, options: { context: 7 } });
    const rows = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("deliveries").collect());
    await runUntil(t, async () => (await rows()).length > 0, 1_000);
    const [row, ...others] = await rows();
    expect(others).toEqual([]);
    expect(row.fnHandle).toMatch(/onComplete/);
    expect(row.items.map((item: any) => item.fnHandle)).toEqual([undefined, undefined, undefined]);
    await runUntil(t, async () => (await completions(t)).length === 3, 5_000);
    const done = await completions(t);
    expect(done.map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(done.every((c) => c.context === 7 && c.result.kind === "success")).toBe(true);
  });

  it("calls no handler for the kinds in onCompleteExcludeKinds", async () => {
    const t = setup();
    captureErrors();
    const [ok] = await enqueue(t, "mutation", [{ key: "ok" }], {
      options: { onCompleteExcludeKinds: ["success"] },
    });
    const [bad] = await enqueue(t, "mutation", [{ key: "bad", failTimes: 1 }], {
      options: { onCompleteExcludeKinds: ["success"] },
    });
    await runFor(t, 1000);
    expect((await completions(t)).map((c) => c.workId)).toEqual([bad]);
    expect(await info(t, ok)).toMatchObject({ result: { kind: "success" } });
  });
});

describe("large payloads", () => {
  const bigContext = { blob: "c".repeat(100_000) };

  it("delivers a large context even with statusTtl 0, among 60 small jobs", async () => {
    const t = setup();
    captureErrors();
    const poolOptions = { statusTtl: 0 };
    const small = await enqueue(
      t,
      "mutation",
      Array.from({ length: 60 }, (_, i) => ({ key: `s${i}` })),
      { batch: true, poolOptions },
    );
    const [large] = await enqueue(t, "mutation", [{ key: "large" }], {
      poolOptions,
      options: { context: bigContext },
    });
    await runFor(t, 30_000, 100);
    await expectOneCallbackEach(t, [...small, large]);
    const delivered = (await completions(t)).find((c) => c.workId === large)!;
    expect(delivered.context).toEqual(bigContext);
    // Swept: nothing is left of any job.
    expect(await jobStates(t)).toEqual({ pending: 0, running: 0, finished: 0 });
    const payloads = await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    expect(payloads).toEqual([]);
  });

  it("drops a finished job's large args, with or without onComplete, and keeps its status", async () => {
    const t = setup();
    captureErrors();
    const bigArgs = { key: "bigargs", value: "ok", pad: "a".repeat(100_000) };
    const [withCallback] = await enqueue(t, "action", [bigArgs]);
    const [without] = await enqueue(t, "action", [{ ...bigArgs, key: "bigargs2" }], {
      onComplete: undefined,
    });
    await runFor(t, 2000);
    const payloads = await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    expect(payloads).toEqual([]);
    for (const id of [withCallback, without]) {
      expect(await info(t, id)).toMatchObject({
        state: "finished",
        result: { kind: "success", returnValue: "ok" },
      });
    }
    expect(probe.attempts.get("bigargs")).toBe(1);
  });

  it("fails an attempt whose return value is over the limit once, naming the size, and never reruns it", async () => {
    const t = setup();
    captureErrors();
    const [id] = await enqueue(t, "action", [{ key: "huge-return", returnBytes: 1_100_000 }], {
      options: { retry: true },
    });
    await runFor(t, 10_000, 50);
    expect(probe.attempts.get("huge-return")).toBe(1);
    expect((await completions(t)).map((c) => [c.workId, c.result])).toEqual([
      [id, { kind: "failed", error: expect.stringMatching(/return value is \d+ bytes.*limit/) }],
    ]);
  });

  it("retries a callback whose own delivery transaction failed (as after OCC retries): one onComplete", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    // The first delivery transaction fails as it commits (its delete of the row is its last write).
    let failed = 0;
    interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
      if (failed === 0 && op === "1.0/remove" && jsonArgs.includes("deliveries")) {
        failed++;
        throw new Error("injected: the delivery transaction gave up");
      }
      return await asyncSyscall(op, jsonArgs);
    });
    const [id] = await enqueue(t, "mutation", [{ key: "once" }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 30_000, 100);
    expect(failed).toBe(1);
    await runFor(t, 20_000, 500);
    expect((await completions(t)).map((c) => c.workId)).toEqual([id]);
  });
});
