/**
 * Specifications of jobs that wait for the world (API-EXTENSIONS section 11, `manualCompletion`):
 * an attempt ends with the app's `pool.complete`, not when its function returns, holds its slots
 * while it waits, times out under the retry policy, and can be canceled while waiting. Through the
 * client, on convex-test with the virtual clock (test/helpers.ts).
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { REPORT_LOST_AFTER_MS } from "../src/component/mainLoop/recovery.js";
import { validateEnqueueItem } from "../src/component/api/enqueue.js";
import {
  completions,
  enqueue,
  failReports,
  inComponent,
  info,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

const WAIT = { manualCompletion: { timeoutMs: 60_000 } };

async function complete(t: T, id: string, outcome: unknown, options?: object): Promise<boolean> {
  return await t.mutation(anyApi.pool.callClient, {
    method: "complete",
    args: options === undefined ? [id, outcome] : [id, outcome, options],
  });
}

async function resultOf(t: T, id: string) {
  return (await completions(t)).find((c) => c.workId === id)?.result;
}

async function finished(t: T, id: string) {
  return (await info(t, id))?.state === "finished";
}

describe("manual completion", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("keeps an attempt running, holding its pool slot, until complete is called", async () => {
    const t = setup();
    const [first, second] = await enqueue(t, "action", [{ key: "a" }, { key: "b" }], {
      poolOptions: { maxParallelism: 1 },
      options: WAIT,
    });
    await runUntil(t, async () => (await info(t, first))?.awaiting !== undefined);
    const waiting = await info(t, first);
    expect(waiting.state).toBe("running");
    expect(waiting.awaiting.deadline).toBe(waiting.startedAt + 60_000);
    expect(waiting.awaiting.since).toBeGreaterThanOrEqual(waiting.startedAt);
    await runFor(t, 2000);
    // The function returned long ago; the job still holds the only slot.
    expect((await info(t, first)).state).toBe("running");
    expect((await info(t, second)).state).toBe("pending");
    expect(await complete(t, first, { kind: "success", returnValue: { rendered: 3 } })).toBe(true);
    await runUntil(t, () => finished(t, first));
    expect(await resultOf(t, first)).toEqual({ kind: "success", returnValue: { rendered: 3 } });
    expect((await info(t, first)).awaiting).toBeUndefined();
    await runUntil(t, async () => (await info(t, second))?.state === "running");
  });

  it("keeps a completion that arrives before the function returned", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "slow", ms: 2000 }], { options: WAIT });
    await runUntil(t, () => probe.running === 1);
    expect(await complete(t, id, { kind: "success", returnValue: "early" })).toBe(true);
    await runFor(t, 500);
    expect((await info(t, id)).state).toBe("running");
    expect((await info(t, id)).awaiting).toBeUndefined();
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: "early" });
  });

  it("lets a function that throws decide its attempt, dropping a kept completion", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "bad", ms: 1000, failTimes: 1 }], {
      options: WAIT,
    });
    await runUntil(t, () => probe.running === 1);
    expect(await complete(t, id, { kind: "success" })).toBe(true);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({
      kind: "failed",
      error: expect.stringContaining("job bad failed attempt 1"),
    });
  });

  it("returns false for a duplicate, a late, a wrong attempt's or an unknown completion", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "w" }], { options: WAIT });
    const [unwaited] = await enqueue(t, "action", [{ key: "plain", ms: 5000 }]);
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    expect(await complete(t, id, { kind: "success" }, { attempt: 1 })).toBe(false);
    expect(await complete(t, unwaited, { kind: "success" })).toBe(false);
    expect(await complete(t, id, { kind: "success", returnValue: 1 }, { attempt: 0 })).toBe(true);
    expect(await complete(t, id, { kind: "success", returnValue: 2 })).toBe(false);
    await runUntil(t, () => finished(t, id));
    expect(await complete(t, id, { kind: "failed", error: "late" })).toBe(false);
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: 1 });
    // A well-formed id the pool does not know (its job was deleted).
    await inComponent(t, async (ctx) => await ctx.db.delete(id));
    expect(await complete(t, id, { kind: "success" })).toBe(false);
  });

  it("retries a failed completion under the retry policy; the next attempt waits for its own", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "r" }], {
      options: { ...WAIT, retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    expect(await complete(t, id, { kind: "failed", error: "render farm said no" })).toBe(true);
    await runUntil(t, async () => {
      const now = await info(t, id);
      return now.previousAttempts === 1 && now.awaiting !== undefined;
    });
    expect(probe.attempts.get("r")).toBe(2);
    expect(await complete(t, id, { kind: "success", returnValue: "ok" })).toBe(true);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: "ok" });
  });

  it("does not retry a completion that says nonRetryable", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "n" }], {
      options: { ...WAIT, retry: { maxAttempts: 5, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    expect(
      await complete(t, id, { kind: "failed", error: "card declined", nonRetryable: true }),
    ).toBe(true);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "failed", error: "card declined" });
    expect(probe.attempts.get("n")).toBe(1);
  });

  it("times out an attempt with no completion, retries it, and fails the last one", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "silent" }], {
      options: {
        manualCompletion: { timeoutMs: 5000 },
        retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 },
      },
    });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    const { startedAt } = await info(t, id);
    await runUntil(t, async () => (await info(t, id)).previousAttempts === 1, 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(startedAt + 5000);
    expect(Date.now()).toBeLessThanOrEqual(startedAt + 5000 + 1000);
    // The timed-out attempt takes no completion.
    expect(await complete(t, id, { kind: "success" }, { attempt: 0 })).toBe(false);
    await runUntil(t, () => finished(t, id), 20_000);
    expect(probe.attempts.get("silent")).toBe(2);
    expect(await resultOf(t, id)).toEqual({
      kind: "failed",
      error: expect.stringContaining("manualCompletion.timeoutMs (5000 ms)"),
    });
  });

  it("times out an attempt whose function outlives its deadline, once the function returns", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "long", ms: 4000 }], {
      options: { manualCompletion: { timeoutMs: 1000 } },
    });
    await runUntil(t, () => probe.running === 1);
    await runFor(t, 2000);
    // Past the deadline, the function still runs and holds its slot; no completion is taken.
    expect(probe.running).toBe(1);
    expect((await info(t, id)).state).toBe("running");
    expect(await complete(t, id, { kind: "success" })).toBe(false);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({
      kind: "failed",
      error: expect.stringContaining("no completion came"),
    });
  });

  it("cancels a waiting job at once, freeing its pool and key slots", async () => {
    const t = setup();
    const [waiting, next] = await enqueue(t, "action", [{ key: "c1" }, { key: "c2" }], {
      poolOptions: { maxParallelism: 1 },
      options: { ...WAIT, key: "customer-7" },
    });
    await runUntil(t, async () => (await info(t, waiting))?.awaiting !== undefined);
    expect((await info(t, next)).state).toBe("pending");
    // Counted as running while it waits, by the pool and by its key.
    expect((await t.query(anyApi.pool.statsAt, {})).stats.running).toBe(1);
    const keyStatus = await t.query(anyApi.pool.callClientQuery, {
      method: "keyStatus",
      args: ["customer-7"],
    });
    expect(keyStatus).toMatchObject({ running: 1, pending: 1 });
    await t.mutation(anyApi.pool.cancel, { id: waiting });
    await runUntil(t, () => finished(t, waiting), 2000);
    expect(await resultOf(t, waiting)).toEqual({ kind: "canceled" });
    await runUntil(t, async () => (await info(t, next)).state === "running", 2000);
    expect(await complete(t, waiting, { kind: "success" })).toBe(false);
  });

  it("ends canceled a job canceled while its function runs, when the function returns", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "cr", ms: 1000 }], { options: WAIT });
    await runUntil(t, () => probe.running === 1);
    await t.mutation(anyApi.pool.cancel, { id });
    await runFor(t, 100);
    expect(await complete(t, id, { kind: "success" })).toBe(false);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "canceled" });
  });

  it("is not ruled dead by recovery while it waits after its function returned", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "patient" }], {
      options: { manualCompletion: { timeoutMs: 10 * 60_000 } },
    });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    await runFor(t, REPORT_LOST_AFTER_MS + 30_000, 500);
    expect((await info(t, id)).state).toBe("running");
    expect(await completions(t)).toEqual([]);
    expect(await complete(t, id, { kind: "success", returnValue: "finally" })).toBe(true);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: "finally" });
  });

  it("takes manualCompletion in batches: each job of the batch waits for its own completion", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", [{ key: "b1" }, { key: "b2" }], {
      batch: true,
      options: WAIT,
    });
    for (const id of ids) {
      await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    }
    expect(await complete(t, ids[1], { kind: "success", returnValue: "second" })).toBe(true);
    await runUntil(t, () => finished(t, ids[1]));
    expect((await info(t, ids[0])).state).toBe("running");
    expect(await complete(t, ids[0], { kind: "success", returnValue: "first" })).toBe(true);
    await runUntil(t, () => finished(t, ids[0]));
    expect(await resultOf(t, ids[0])).toEqual({ kind: "success", returnValue: "first" });
  });

  it("drops a kept completion (and its payload) when recovery finds the runner dead", async () => {
    const t = setup();
    // The worker's own report fails, so its mutation rolls back and its runner is dead.
    failReports({ inserts: (row: any) => row.from === undefined });
    const [id] = await enqueue(t, "mutation", [{ key: "dies" }], { options: WAIT });
    await runUntil(t, async () => (await info(t, id))?.state === "running");
    await runFor(t, 200);
    const big = "r".repeat(20_000);
    expect(await complete(t, id, { kind: "success", returnValue: big })).toBe(true);
    await runUntil(t, async () => (await resultOf(t, id)) !== undefined, 30_000, 100);
    expect(await resultOf(t, id)).toEqual({
      kind: "failed",
      error: expect.stringContaining("runner died"),
    });
    const payloads = await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    expect(payloads.filter((row: any) => row.returnValue !== undefined)).toEqual([]);
  });

  it("waits for mutations too, and a completion from an action counts", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "m" }], { options: WAIT });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    const taken = await t.action(anyApi.waits.completeFromAction, {
      id,
      outcome: { kind: "success", returnValue: "from an action" },
    });
    expect(taken).toBe(true);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: "from an action" });
  });

  it("commits the completion with the webhook's own writes, or neither", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "hook" }], { options: WAIT });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    const webhookRows = async () =>
      await t.run(
        async (ctx: any) =>
          await ctx.db
            .query("effects")
            .filter((q: any) => q.eq(q.field("key"), "webhook"))
            .collect(),
      );
    await expect(
      t.mutation(anyApi.waits.webhook, {
        id,
        outcome: { kind: "success", returnValue: "lost" },
        note: "rolled back",
        throwAfter: true,
      }),
    ).rejects.toThrow(/the webhook failed/);
    expect(await webhookRows()).toEqual([]);
    await runFor(t, 1000);
    expect((await info(t, id)).state).toBe("running");
    const taken = await t.mutation(anyApi.waits.webhook, {
      id,
      outcome: { kind: "success", returnValue: "kept" },
      note: "render done",
    });
    expect(taken).toBe(true);
    expect((await webhookRows()).map((row: any) => row.value)).toEqual(["render done"]);
    await runUntil(t, () => finished(t, id));
    expect(await resultOf(t, id)).toEqual({ kind: "success", returnValue: "kept" });
  });

  it("keeps manualCompletion when a failed job is run again with retry", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "again" }], { options: WAIT });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    expect(await complete(t, id, { kind: "failed", error: "no" })).toBe(true);
    await runUntil(t, () => finished(t, id));
    const rerun = await t.mutation(anyApi.pool.callClient, { method: "retry", args: [id] });
    await runUntil(t, async () => (await info(t, rerun))?.awaiting !== undefined);
    expect(await complete(t, rerun, { kind: "success", returnValue: "second time" })).toBe(true);
    await runUntil(t, () => finished(t, rerun));
    expect(await resultOf(t, rerun)).toEqual({ kind: "success", returnValue: "second time" });
  });
});

describe("manual completion: bad input", () => {
  const invalid = (argument: string) => new RegExp(`invalid ${argument.replace(".", "\\.")}:`);

  it("rejects manualCompletion on queries and tasks, and a timeout out of range", async () => {
    const t = setup();
    await expect(enqueue(t, "query", [{ key: "q" }], { options: WAIT })).rejects.toThrow(
      invalid("manualCompletion"),
    );
    for (const timeoutMs of [999, 7 * 24 * 3600_000 + 1, 1500.5, Number.NaN]) {
      await expect(
        enqueue(t, "action", [{ key: "x" }], { options: { manualCompletion: { timeoutMs } } }),
      ).rejects.toThrow(invalid("manualCompletion.timeoutMs"));
    }
    expect(await inComponent(t, async (ctx) => await ctx.db.query("work").collect())).toEqual([]);
    const task = {
      fnHandle: "function://executor",
      fnName: "summarize",
      fnArgs: {},
      fnType: "action" as const,
      task: "summarize",
    };
    expect(() => validateEnqueueItem(task, Date.now())).not.toThrow();
    expect(() =>
      validateEnqueueItem({ ...task, manualCompletion: { timeoutMs: 5000 } }, Date.now()),
    ).toThrow(invalid("manualCompletion"));
  });

  it("rejects a malformed id, outcome or return value, writing nothing", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "b" }], { options: WAIT });
    await runUntil(t, async () => (await info(t, id))?.awaiting !== undefined);
    await expect(complete(t, "not-an-id", { kind: "success" })).rejects.toThrow(invalid("id"));
    await expect(complete(t, id, { kind: "done" })).rejects.toThrow(invalid("outcome"));
    await expect(complete(t, id, { kind: "failed" })).rejects.toThrow(invalid("outcome"));
    await expect(
      complete(t, id, { kind: "success", returnValue: "x".repeat(1_100_000) }),
    ).rejects.toThrow(invalid("returnValue"));
    await expect(complete(t, id, { kind: "success" }, { attempt: -1 })).rejects.toThrow(
      invalid("options.attempt"),
    );
    expect(
      await inComponent(t, async (ctx) => await ctx.db.query("pendingCompletion").collect()),
    ).toEqual([]);
    expect(await complete(t, id, { kind: "success" })).toBe(true);
  });
});
