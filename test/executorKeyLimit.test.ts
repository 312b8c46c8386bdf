/**
 * A key's lowered parallelism and tasks already handed to an executor (review 2026-11-27, finding
 * L4, its second half; the first is test/executorKeyPause.test.ts). The loop admits a key's tasks
 * within its limit and hands them to an executor in a `handovers` row; the executor takes them at
 * its next report. A `setKeyParallelism` that lowers the key's limit between the two must hold
 * back what the new limit does not allow: the report gives the key's untaken tasks back, the loop
 * puts each back at its place in its key's line (ahead of the key's jobs due after it), with its
 * rate-limit start refunded, and starts them within the new limit. Before, the report checked
 * only pauses and the pool's maxParallelism, and every task handed over started at once.
 *
 * The lowering is made to land in that window by the executor action itself: as it starts (the
 * pass that handed it the tasks has committed), before its first report, it lowers the limit.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it } from "vitest";
import { probe } from "./app/probe.js";
import { run as executor } from "./app/tasks.js";
import { callPool, completions, enqueue, inComponent, runUntil, setup } from "./helpers.js";

type Handler = (ctx: any, args: any) => Promise<unknown>;
const hooked = executor as unknown as { _handler: Handler };
const original = hooked._handler;
afterEach(() => {
  hooked._handler = original;
});

/** A rate limit that the test's starts stay within, over a window longer than the test: every
 * start it charges is still in the log at the end. */
const RATE = { starts: 10, periodMs: 10 * 60_000 };

describe("a key's parallelism lowered after its tasks were handed to an executor", () => {
  it("runs them within the new limit, in the key's order, each charged to the rate limit once", async () => {
    const t = setup();
    await callPool(t, "setKeyParallelism", ["k", 2]);
    let lowerings = 0;
    hooked._handler = async (ctx, args) => {
      if (lowerings === 0) {
        lowerings++;
        await ctx.runMutation(anyApi.pool.callClient, {
          method: "setKeyParallelism",
          args: ["k", 1],
        });
      }
      return await original(ctx, args);
    };
    // Two tasks within the key's limit of 2 (handed to one executor together), then a third,
    // due after them, that waits in the key's line.
    const ids: string[] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: ["k:a", "k:b", "k:c"].map((key) => ({ key, ms: 1_000 })),
      options: { key: "k" },
      poolOptions: { rateLimit: RATE },
    });
    await runUntil(t, async () => (await completions(t)).length === 3, 60_000, 50);
    expect(lowerings).toBe(1);

    expect(probe.groupMax.get("k"), "tasks of the key running at once").toBe(1);
    expect(probe.groupStarts.get("k"), "the key's start order").toEqual(["k:a", "k:b", "k:c"]);
    const results = (await completions(t)).map((c) => c.result.kind);
    expect(results).toEqual(["success", "success", "success"]);
    // No attempt used by a task held back: each handler ran once, on its first attempt.
    const attempts = await inComponent(t, async (ctx) =>
      Promise.all(ids.map(async (id) => (await ctx.db.get(id)).attempts)),
    );
    expect(attempts).toEqual([1, 1, 1]);
    expect(["k:a", "k:b", "k:c"].map((key) => probe.starts.get(key)?.length)).toEqual([1, 1, 1]);
    // The rate limit's log counts three starts: one per handler run, none for a hand-over that
    // was given back.
    const charged = await inComponent(t, async (ctx) => {
      const state = await ctx.db.query("loopState").first();
      return (state?.startLog ?? []).reduce((sum: number, b: { n: number }) => sum + b.n, 0);
    });
    expect(charged, "starts charged to the rate limit").toBe(3);
  });

  it("a retry after the lowering (a job holding its key's slot) runs within the new limit too", async () => {
    const t = setup();
    await callPool(t, "setKeyParallelism", ["r", 2]);
    // Both start at once; "r:a" fails quickly and backs off while "r:b" still runs.
    await enqueue(
      t,
      "action",
      [
        { key: "r:a", ms: 100, failTimes: 1 },
        { key: "r:b", ms: 3_000 },
      ],
      { options: { key: "r", retry: { maxAttempts: 2, initialBackoffMs: 300, base: 2 } } },
    );
    await runUntil(t, () => probe.attempts.get("r:a") === 1 && probe.groupRunning.get("r") === 1);
    await callPool(t, "setKeyParallelism", ["r", 1]);
    // From here on, at most one of the key's attempts at once: the retry waits for "r:b".
    probe.groupMax.set("r", 1);
    await runUntil(t, async () => (await completions(t)).length === 2, 30_000, 50);
    expect(probe.groupMax.get("r"), "attempts of the key at once after the lowering").toBe(1);
    expect(probe.groupStarts.get("r")).toEqual(["r:a", "r:b", "r:a"]);
    expect((await completions(t)).map((c) => c.result.kind)).toEqual(["success", "success"]);
  });
});
