// Runtime parity with @convex-dev/workpool 0.4.16: the same runtime exports, the same validators, and
// a fixture app written against the peer's API (test/app/parity.ts, parityJobs.ts) running on this
// package. test/parityTypes.test.ts checks that the same fixture compiles against the peer.
import * as peer from "@convex-dev/workpool";
import { anyApi } from "convex/server";
import { v } from "convex/values";
import { describe, expect, it } from "vitest";
import * as ours from "../src/client/index.js";
import { completions, inComponent, runUntil, setup, type T } from "./helpers.js";

/** A validator's JSON form (what Convex checks values against; not in the public types). */
function json(validator: unknown): unknown {
  const form = (validator as { json?: unknown }).json;
  if (form === undefined) throw new Error("not a validator");
  return form;
}

describe("runtime exports", () => {
  it("has every runtime export of @convex-dev/workpool, with the same typeof", () => {
    const names = Object.keys(peer).sort();
    expect(names.length).toBeGreaterThan(15);
    const mismatched = names.filter(
      (name) => typeof (ours as Record<string, unknown>)[name] !== typeof (peer as any)[name],
    );
    expect(mismatched).toEqual([]);
  });

  it("has the peer's constants and validators", () => {
    expect(ours.DEFAULT_RETRY_BEHAVIOR).toEqual(peer.DEFAULT_RETRY_BEHAVIOR);
    for (const name of [
      "vWorkId",
      "vWorkIdValidator",
      "workIdValidator",
      "vResult",
      "vResultValidator",
      "resultValidator",
      "vLogLevel",
    ] as const) {
      expect(json(ours[name]), name).toEqual(json(peer[name]));
    }
    // The peer's retry behavior plus the optional backoff cap (API-EXTENSIONS section 6): every
    // value the peer's validator accepts, ours accepts.
    const peerRetry = json(peer.vRetryBehavior) as { value: Record<string, unknown> };
    expect(json(ours.vRetryBehavior)).toEqual({
      ...peerRetry,
      value: {
        ...peerRetry.value,
        maxBackoffMs: { fieldType: { type: "number" }, optional: true },
      },
    });
    expect(json(ours.vRunResult(v.number()))).toEqual(json(peer.vRunResult(v.number())));
    expect(json(ours.vOnCompleteArgs(v.string(), v.number()))).toEqual(
      json(peer.vOnCompleteArgs(v.string(), v.number())),
    );
    expect(json(ours.vOnCompleteArgs())).toEqual(json(peer.vOnCompleteArgs()));
    expect(json(ours.vOnCompleteValidator(v.id("users")))).toEqual(
      json(peer.vOnCompleteValidator(v.id("users"))),
    );
  });
});

/** The rows onComplete handlers wrote, by workId (each id must have at most one). */
async function completionsById(t: T) {
  const rows = await completions(t);
  const byId = new Map(rows.map((row) => [row.workId, row]));
  expect(byId.size).toBe(rows.length);
  return byId;
}

describe("a peer app on this package", () => {
  it("enqueueAction with a defineOnComplete handler: onComplete args, status and info", async () => {
    const t = setup();
    const id: string = await t.mutation(anyApi.parity.start, { n: 21, label: "first" });
    expect(await t.query(anyApi.parity.status, { id })).toEqual({
      state: "pending",
      previousAttempts: 0,
    });
    expect(await t.query(anyApi.pool.info, { id })).toMatchObject({
      id,
      name: "parity double",
      fnType: "action",
      state: "pending",
      previousAttempts: 0,
    });
    await runUntil(t, async () => (await completions(t)).length === 1);
    expect(await completions(t)).toMatchObject([
      {
        workId: id,
        context: { via: "defineOnComplete", label: "first", returned: 42 },
        result: { kind: "success", returnValue: 42 },
      },
    ]);
    expect(await t.query(anyApi.parity.status, { id })).toEqual({ state: "finished" });
    expect(await t.query(anyApi.parity.statusBatch, { ids: [id] })).toEqual([
      { state: "finished" },
    ]);
    expect(await t.query(anyApi.parity.recorded, { id })).toEqual({
      kind: "success",
      returnValue: 42,
    });
    const info = await t.query(anyApi.pool.info, { id });
    expect(info).toMatchObject({
      id,
      name: "parity double",
      fnType: "action",
      state: "finished",
      previousAttempts: 1,
      result: { kind: "success", returnValue: 42 },
    });
    expect(info.enqueuedAt).toBeLessThanOrEqual(info.startedAt);
    expect(info.startedAt).toBeLessThanOrEqual(info.finishedAt);
  });

  it("every other enqueue form, the standalone enqueue and enqueueBatch included", async () => {
    const t = setup();
    const ids = await t.mutation(anyApi.parity.startAll, {
      retryBehavior: { maxAttempts: 2, initialBackoffMs: 10, base: 2 },
      logLevel: "WARN",
    });
    const all: string[] = [
      ids.mutation,
      ids.query,
      ...ids.actionBatch,
      ...ids.mutationBatch,
      ...ids.queryBatch,
      ids.standalone,
      ...ids.standaloneBatch,
    ];
    expect(new Set(all).size).toBe(9);
    // Every job but the query batch's (no onComplete) reports once.
    await runUntil(t, async () => (await completions(t)).length === 8);
    const byId = await completionsById(t);
    expect(byId.get(ids.mutation)).toMatchObject({
      context: { via: "vOnCompleteArgs", context: "m" },
      result: { kind: "success", returnValue: "n=3" },
    });
    expect(byId.get(ids.query)).toMatchObject({
      context: { via: "vOnComplete", context: { q: 4 } },
      result: { kind: "success", returnValue: { n: 4, half: 2 } },
    });
    ids.actionBatch.forEach((id: string, i: number) =>
      expect(byId.get(id)).toMatchObject({
        context: { via: "vRunResult", context: "batch" },
        result: { kind: "success", returnValue: (5 + i) * 2 },
      }),
    );
    expect(byId.get(ids.mutationBatch[0])).toMatchObject({
      context: { via: "vOnCompleteArgs", context: "mb" },
      result: { kind: "success", returnValue: "n=7" },
    });
    expect(byId.has(ids.queryBatch[0])).toBe(false);
    expect(byId.get(ids.standalone)).toMatchObject({
      context: { via: "defineOnComplete", label: "standalone", returned: 18 },
      result: { kind: "success", returnValue: 18 },
    });
    ids.standaloneBatch.forEach((id: string, i: number) =>
      expect(byId.get(id)).toMatchObject({
        context: { via: "vOnCompleteValidator", context: 10 },
        result: { kind: "success", returnValue: `n=${10 + i}` },
      }),
    );
    expect(await t.query(anyApi.parity.statusBatch, { ids: all })).toEqual(
      all.map(() => ({ state: "finished" })),
    );
    expect(await t.query(anyApi.pool.info, { id: ids.queryBatch[0] })).toMatchObject({
      state: "finished",
      fnType: "query",
      result: { kind: "success", returnValue: { n: 8, half: 4 } },
    });
    // The standalone calls' maxParallelism and logLevel reached the component's config.
    const [config] = await inComponent(t, async (ctx) => await ctx.db.query("config").collect());
    expect(config).toMatchObject({ maxParallelism: 4, logLevel: "WARN" });
  });

  it("NonRetryableError with retry on: failed once, onComplete gets the error", async () => {
    const t = setup();
    const id: string = await t.mutation(anyApi.parity.start, { n: -1, label: "bad", retry: true });
    await runUntil(t, async () => (await completions(t)).length === 1);
    const [done] = await completions(t);
    expect(done).toMatchObject({ workId: id, result: { kind: "failed" } });
    expect(done.result.error).toMatch(/negative: -1/);
    expect(await t.query(anyApi.parity.recordedLegacy, { id })).toEqual({
      a: done.result,
      b: done.result,
    });
    expect(await t.query(anyApi.parity.status, { id })).toEqual({ state: "finished" });
    expect(await t.query(anyApi.pool.info, { id })).toMatchObject({
      state: "finished",
      previousAttempts: 1,
      result: { kind: "failed", error: done.result.error },
    });
  });

  it("cancel and cancelAll: onComplete gets canceled", async () => {
    const t = setup();
    const one: string = await t.mutation(anyApi.parity.start, { n: 1, label: "one" });
    const two: string = await t.mutation(anyApi.parity.start, { n: 2, label: "two" });
    await t.mutation(anyApi.parity.cancel, { id: one });
    await t.mutation(anyApi.parity.cancel, {});
    await runUntil(t, async () => (await completions(t)).length === 2);
    const byId = await completionsById(t);
    expect(byId.get(one)?.result).toEqual({ kind: "canceled" });
    expect(byId.get(two)?.result).toEqual({ kind: "canceled" });
    expect(await t.query(anyApi.parity.status, { id: one })).toEqual({ state: "finished" });
    expect(await t.query(anyApi.pool.info, { id: two })).toMatchObject({
      state: "finished",
      result: { kind: "canceled" },
    });
  });

  it("onCompleteExcludeKinds: no onComplete for the excluded kind, the others get theirs", async () => {
    const t = setup();
    const [ok, bad]: string[] = await t.mutation(anyApi.parity.startExcludingFailed, {
      ns: [4, -4],
    });
    await runUntil(t, async () =>
      (await t.query(anyApi.parity.statusBatch, { ids: [ok, bad] })).every(
        (s: { state: string }) => s.state === "finished",
      ),
    );
    await runUntil(t, async () => (await completions(t)).length >= 1);
    const byId = await completionsById(t);
    expect(byId.get(ok)?.result).toEqual({ kind: "success", returnValue: 8 });
    expect(byId.has(bad)).toBe(false);
    expect((await t.query(anyApi.pool.info, { id: bad })).result).toMatchObject({
      kind: "failed",
    });
  });
});

describe("onCompleteExcludeKinds is checked", () => {
  it.each([
    [["failed", "done"], /invalid onCompleteExcludeKinds\[1\]/],
    ["failed", /invalid onCompleteExcludeKinds(?!\[)/],
  ])("%j is rejected, naming the argument", async (kinds, message) => {
    const t = setup();
    await expect(
      t.mutation(anyApi.pool.enqueue, {
        kind: "action",
        argsList: [{ key: "a" }],
        onComplete: "onComplete",
        options: { onCompleteExcludeKinds: kinds },
      }),
    ).rejects.toThrow(message);
  });

  // The peer's 0.4.16 client test expects Convex's "Validator error" here; we name the argument
  // (scripts/peer-client-test.mjs lists those two cases as accepted differences).
  it.each([false, true])(
    "a kind that is not a final result is rejected by name, and nothing is enqueued (batch: %s)",
    async (batch) => {
      const t = setup();
      await expect(
        t.mutation(anyApi.pool.enqueue, {
          kind: "mutation",
          argsList: [{ key: "a" }],
          batch,
          onComplete: "onComplete",
          options: { onCompleteExcludeKinds: ["running"] },
        }),
      ).rejects.toThrow(/workpool: invalid onCompleteExcludeKinds\[0\]/);
      expect(await inComponent(t, (ctx) => ctx.db.query("work").collect())).toEqual([]);
    },
  );
});
