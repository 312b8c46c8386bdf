/**
 * A key's pause and tasks already handed to an executor (review 2026-11-27, finding L4). The loop
 * hands a task to an executor in a `handovers` row; the executor takes it at its next report. A
 * `pause({ key })` that lands between the two must hold the task back: the report gives it back
 * untaken (runners/executor.ts), the loop puts it back at its place in line, and it waits in its
 * key's queue until `resume({ key })`. Before, the report checked only the pool's pause and
 * maxParallelism, and the task started while its key was paused.
 *
 * The pause is made to land in that window by the executor action itself: as it starts (the pass
 * that handed it the task has committed), before its first report, it pauses the key.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it } from "vitest";
import { probe } from "./app/probe.js";
import { run as executor } from "./app/tasks.js";
import { callPool, completions, inComponent, runFor, runUntil, setup } from "./helpers.js";

type Handler = (ctx: any, args: any) => Promise<unknown>;
const hooked = executor as unknown as { _handler: Handler };
const original = hooked._handler;
afterEach(() => {
  hooked._handler = original;
});

describe("a key paused after its task was handed to an executor", () => {
  it("holds the task back until the key is resumed: it then runs once, with no attempt used", async () => {
    const t = setup();
    let pausesMade = 0;
    hooked._handler = async (ctx, args) => {
      if (pausesMade === 0) {
        pausesMade++;
        await ctx.runMutation(anyApi.pool.callClient, { method: "pause", args: [{ key: "k" }] });
      }
      return await original(ctx, args);
    };
    const [id] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: [{ key: "held", ms: 100 }],
      options: { key: "k" },
    });
    await runFor(t, 5_000, 50);
    expect(pausesMade).toBe(1);
    expect(probe.starts.get("held"), "handler starts while the key is paused").toBeUndefined();
    const held = await inComponent(t, async (ctx) => await ctx.db.get(id));
    expect(held.state.kind).toBe("pending");
    expect(held.attempts).toBe(0);

    await callPool(t, "resume", [{ key: "k" }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 30_000, 50);
    expect((await completions(t))[0].result).toEqual({ kind: "success", returnValue: "held" });
    expect(probe.starts.get("held")).toHaveLength(1);
  });
});
