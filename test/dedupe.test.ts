/**
 * Dedupe (section 4 of the API extensions): while a job enqueued with a `dedupeKey` waits for its
 * first start, another enqueue with that key creates nothing and returns it ("keep"), or gives it
 * the new args, and the new context, onComplete and due time when given ("replace").
 */
import { describe, expect, it } from "vitest";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  componentRows,
  enqueue,
  inComponent,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

/** Enqueues one action with `dedupeKey` "doc-1" and the given options; returns its id. */
async function enqueueDeduped(
  t: T,
  args: Record<string, unknown>,
  options: object = {},
): Promise<string> {
  const [id] = await enqueue(t, "action", [args], {
    options: { dedupeKey: "doc-1", ...options },
  });
  return id;
}

describe("dedupe", () => {
  it("returns the waiting job and creates nothing (keep)", async () => {
    const t = setup();
    const first = await enqueueDeduped(t, { key: "a", value: 1 }, { runAfter: 1000 });
    const again = await enqueueDeduped(t, { key: "a", value: 2 });
    expect(again).toBe(first);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    await runFor(t, 2000);
    const all = await completions(t);
    expect(all.map((c) => [c.workId, c.result.returnValue])).toEqual([[first, 1]]);
    expect(probe.attempts.get("a")).toBe(1);
  });

  it("replace gives the waiting job the new args, and the new due time when given", async () => {
    const t = setup();
    const first = await enqueueDeduped(t, { key: "a", value: 1 }, { runAfter: 60_000 });
    const again = await enqueueDeduped(
      t,
      { key: "a", value: 2 },
      { onDuplicate: "replace", runAfter: 100 },
    );
    expect(again).toBe(first);
    await runFor(t, 1000);
    const all = await completions(t);
    expect(all.map((c) => [c.workId, c.result.returnValue])).toEqual([[first, 2]]);
  });

  it("replace keeps the context and due time the new enqueue does not give", async () => {
    const t = setup();
    await enqueueDeduped(t, { key: "a", value: 1 }, { runAfter: 2000, context: { n: 1 } });
    await enqueueDeduped(t, { key: "a", value: 2 }, { onDuplicate: "replace" });
    await runFor(t, 1500);
    expect(await completions(t)).toEqual([]);
    await runFor(t, 1000);
    const [done] = await completions(t);
    expect(done.context).toEqual({ n: 1 });
    expect(done.result.returnValue).toBe(2);
    // And takes a new one when given.
    await enqueueDeduped(t, { key: "b" }, { runAfter: 500, context: { n: 1 } });
    await enqueueDeduped(t, { key: "b" }, { onDuplicate: "replace", context: { n: 2 } });
    await runFor(t, 1000);
    expect((await completions(t)).map((c) => c.context)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("replace gives the waiting job the new manualCompletion, and keeps its own when not given", async () => {
    const t = setup();
    const wait = { manualCompletion: { timeoutMs: 60_000 } };
    // A job enqueued to end when its function returns, replaced by one that waits for the world.
    const id = await enqueueDeduped(t, { key: "a", value: 1 }, { runAfter: 1000 });
    await enqueueDeduped(t, { key: "a", value: 2 }, { onDuplicate: "replace", ...wait });
    // And a waiting one, replaced by an enqueue that says nothing of it: it still waits.
    const kept = await enqueueDeduped(t, { key: "b" }, { dedupeKey: "doc-2", ...wait });
    await enqueueDeduped(t, { key: "b", value: 3 }, { dedupeKey: "doc-2", onDuplicate: "replace" });
    await runUntil(t, async () => {
      const [a, b] = [await callPool(t, "info", [id]), await callPool(t, "info", [kept])];
      return a?.awaiting !== undefined && b?.awaiting !== undefined;
    });
    await runFor(t, 2000);
    // Both functions returned long ago; both jobs wait for their completion.
    expect(await completions(t)).toEqual([]);
    expect((await callPool(t, "info", [id])).state).toBe("running");
    const done = { kind: "success", returnValue: "world" };
    expect(await callPool(t, "complete", [id, done])).toBe(true);
    await runUntil(t, async () => (await completions(t)).length === 1);
    expect((await completions(t))[0]).toMatchObject({ workId: id, result: done });
  });

  it("replace moves large args into and out of a payload row", async () => {
    const t = setup();
    const big = "x".repeat(20_000);
    await enqueueDeduped(t, { key: "a", value: big }, { runAfter: 1000 });
    expect((await componentRows(t)).payloads).toHaveLength(1);
    await enqueueDeduped(t, { key: "a", value: "small" }, { onDuplicate: "replace" });
    expect((await componentRows(t)).payloads).toHaveLength(0);
    await runFor(t, 2000);
    expect((await completions(t))[0].result.returnValue).toBe("small");
  });

  it("once the job has started, the next enqueue creates a new job", async () => {
    const t = setup();
    const first = await enqueueDeduped(t, { key: "a", ms: 1000 });
    await runUntil(t, () => probe.running === 1);
    const second = await enqueueDeduped(t, { key: "b" });
    expect(second).not.toBe(first);
    await runFor(t, 3000);
    expect((await completions(t)).map((c) => c.workId).sort()).toEqual([first, second].sort());
  });

  it("a job asked to cancel is not deduped into: the enqueue creates a job", async () => {
    const t = setup();
    const first = await enqueueDeduped(t, { key: "a" }, { runAfter: 5000 });
    await callPool(t, "cancel", [first]);
    const second = await enqueueDeduped(t, { key: "b" });
    expect(second).not.toBe(first);
    await runFor(t, 1000);
    const kinds = Object.fromEntries((await completions(t)).map((c) => [c.workId, c.result.kind]));
    expect(kinds).toEqual({ [first]: "canceled", [second]: "success" });
  });

  it("forgets the key with its job: no dedupe row outlives the job's status", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "a" }], {
      options: { dedupeKey: "doc-1" },
      poolOptions: { statusTtl: 1000 },
    });
    await runFor(t, 500);
    expect(
      await inComponent(t, async (ctx) => await ctx.db.query("dedupe").collect()),
    ).toHaveLength(1);
    await runFor(t, 30_000, 100);
    expect(await inComponent(t, async (ctx) => await ctx.db.query("dedupe").collect())).toEqual([]);
  });

  it("takes keys of up to 4,096 characters (URLs as they are), and tells them apart", async () => {
    const t = setup();
    const url = (page: string) => `https://example.com/search?q=${"x".repeat(4_000)}&page=${page}`;
    const one = await enqueueDeduped(t, { key: "u1" }, { dedupeKey: url("1"), runAfter: 1000 });
    const same = await enqueueDeduped(t, { key: "u1b" }, { dedupeKey: url("1") });
    const other = await enqueueDeduped(t, { key: "u2" }, { dedupeKey: url("2"), runAfter: 1000 });
    expect(url("1").length).toBeLessThanOrEqual(4_096);
    expect(same).toBe(one);
    expect(other).not.toBe(one);
    await expect(
      enqueueDeduped(t, { key: "u3" }, { dedupeKey: "y".repeat(4_097) }),
    ).rejects.toThrow(/dedupeKey.*1 to 4096 characters/);
  });

  it("rejects a duplicate that runs another function, and writes nothing", async () => {
    const t = setup();
    await enqueueDeduped(t, { key: "a" }, { runAfter: 1000 });
    const before = await componentRows(t);
    await expect(
      enqueue(t, "mutation", [{ key: "b" }], { options: { dedupeKey: "doc-1" } }),
    ).rejects.toThrow(/dedupeKey.*runs another function/);
    expect(await componentRows(t)).toEqual(before);
  });

  it("finds a key stored before 0.2.0 (unhashed), and moves it to the hashed form", async () => {
    const t = setup();
    const first = await enqueueDeduped(t, { key: "old" }, { runAfter: 1000 });
    // Rewrite the key's row as 0.1.x stored it.
    await inComponent(t, async (ctx) => {
      const row = await ctx.db.query("dedupe").first();
      await ctx.db.replace("dedupe", row._id, { dedupeKey: "doc-1", workId: row.workId });
    });
    expect(await enqueueDeduped(t, { key: "old2" })).toBe(first);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const second = await enqueueDeduped(t, { key: "new" }, { runAfter: 1000 });
    expect(second).not.toBe(first);
    const rows = await inComponent(t, async (ctx) => await ctx.db.query("dedupe").collect());
    expect(rows).toEqual([expect.objectContaining({ fullKey: "doc-1", workId: second })]);
    expect(rows[0].dedupeKey).toBeUndefined();
  });

  it("replace rejects new args that, with the context the job keeps, pass the size limit", async () => {
    const t = setup();
    const big = "c".repeat(600_000);
    await enqueueDeduped(t, { key: "a" }, { runAfter: 1000, context: { big } });
    const before = await componentRows(t);
    await expect(
      enqueueDeduped(t, { key: "a", value: "v".repeat(600_000) }, { onDuplicate: "replace" }),
    ).rejects.toThrow(/fnArgs.*context the waiting job keeps must be at most 1000000 bytes/);
    expect(await componentRows(t)).toEqual(before);
  });
});
