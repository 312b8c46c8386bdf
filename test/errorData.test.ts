/**
 * `errorData` (API-COMPAT.md, the peer's 0.4.16): a failed result carries the data of the
 * ConvexError the job threw, for actions, mutations, queries and tasks — stored, delivered to
 * onComplete and shown by `info` and `list` — under the value rules every stored user value follows
 * (model/errors.ts `storableErrorData`). And the peer's non-retryable marker, recognised on a plain
 * Error too. Driven through the test app (test/app/jobs.ts, tasks.ts) on the virtual clock.
 */
import { anyApi } from "convex/server";
import { ConvexError } from "convex/values";
import { describe, expect, it } from "vitest";
import { isNonRetryableError } from "../src/client/index.js";
import {
  MAX_ERROR_DATA_BYTES,
  MAX_ERROR_DATA_NESTING,
  MAX_ERROR_MESSAGE_BYTES,
  storableErrorData,
} from "../src/component/model/errors.js";
import { attemptFailure } from "../src/component/model/outcomes.js";
import { probe } from "./app/probe.js";
import { setupDeployment } from "./deployment.js";
import { completions, enqueue, info, listJobs, runUntil, setup, type T } from "./helpers.js";

type Kind = "action" | "mutation" | "query";

/** A value `levels` objects deep: `{ d: { d: ... "end" } }`. */
function nested(levels: number): unknown {
  let value: unknown = "end";
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
}

/** Runs the pool until every listed job has called onComplete; returns what each got, by id. */
async function settle(t: T, ids: string[]) {
  await runUntil(t, async () => (await completions(t)).length >= ids.length, 120_000);
  return await delivered(t, ids);
}

/** What onComplete got for each of `ids` so far (undefined: not called yet). */
async function delivered(t: T, ids: string[]) {
  const byId = new Map((await completions(t)).map((row) => [row.workId, row.result]));
  return ids.map((id) => byId.get(id));
}

/** The one listed job with this id, as `list` shows it. */
async function listed(t: T, id: string) {
  const page = await listJobs(t, { paginationOpts: { numItems: 100, cursor: null } });
  return page.page.find((job: { id: string }) => job.id === id);
}

const data = { code: "card_declined", retryAfterMs: 30_000, tags: ["billing", false, null] };

describe("errorData", () => {
  it.each(["action", "mutation", "query"] as const)(
    "is the data of the ConvexError a %s threw: given to onComplete, shown by info and list",
    async (kind: Kind) => {
      const t = setup();
      const [id] = await enqueue(t, kind, [{ key: "a", failTimes: 1, errorData: data }]);
      const [result] = await settle(t, [id]);
      const expected = { kind: "failed", error: expect.any(String), errorData: data };
      expect(result).toEqual(expected);
      expect((await info(t, id)).result).toEqual(expected);
      expect((await listed(t, id)).result).toEqual(expected);
    },
  );

  it.each([
    ["a string", "just a string"],
    ["false", false],
    ["null", null],
    ["a bigint", 3n],
  ])("keeps data that is %s", async (_name, value) => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "a", failTimes: 1, errorData: value }]);
    const [result] = await settle(t, [id]);
    expect(result).toMatchObject({ kind: "failed", errorData: value });
  });

  it("is absent when the job threw anything but a ConvexError", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", [{ key: "plain", failTimes: 1 }]);
    const [result] = await settle(t, ids);
    expect(result).toEqual({ kind: "failed", error: "job plain failed attempt 1" });
    expect((await info(t, ids[0])).result).not.toHaveProperty("errorData");
  });

  it("of a NonRetryableError is its wire form, and the job is not retried", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", [{ key: "n", failTimes: 5, nonRetryable: true }], {
      options: { retry: { maxAttempts: 3, initialBackoffMs: 10, base: 2 } },
    });
    const [result] = await settle(t, ids);
    expect(result).toEqual({
      kind: "failed",
      error: "job n failed attempt 1",
      errorData: { __convexWorkpoolNonRetryable: true, message: "job n failed attempt 1" },
    });
    expect(probe.attempts.get("n")).toBe(1);
  });

  it("of a task's ConvexError reaches onComplete", async () => {
    const t = setup();
    const ids: string[] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: [{ key: "task", failTimes: 1, errorData: data }],
    });
    const [result] = await settle(t, ids);
    expect(result).toEqual({ kind: "failed", error: expect.any(String), errorData: data });
  });

  describe("under the value rules", () => {
    it("data over the size limit is stored as null, the error says why, and retries go on", async () => {
      const t = setup();
      const big = { body: "x".repeat(MAX_ERROR_DATA_BYTES) };
      const ids = await enqueue(t, "action", [{ key: "big", failTimes: 9, errorData: big }], {
        options: { retry: { maxAttempts: 3, initialBackoffMs: 10, base: 2 } },
      });
      const [result] = await settle(t, ids);
      expect(result.errorData).toBeNull();
      expect(result.error).toMatch(
        /\[workpool: errorData not kept: \d+ bytes, over the limit of 8192\]$/,
      );
      expect(probe.attempts.get("big")).toBe(3);
    });

    it("data nested deeper than the limit is stored as null, and the pool goes on", async () => {
      // The deployment-like backend refuses a row nested over 16 levels: every row the data is
      // embedded in must fit, or a loop pass fails.
      const { t, deployment } = await setupDeployment({ seed: 5 });
      const ids = await enqueue(t, "mutation", [
        { key: "deepest", failTimes: 1, errorData: nested(MAX_ERROR_DATA_NESTING) },
        { key: "too deep", failTimes: 1, errorData: nested(MAX_ERROR_DATA_NESTING + 1) },
      ]);
      await deployment.run(10_000);
      const [deepest, tooDeep] = await delivered(t, ids);
      expect(deepest).toEqual({
        kind: "failed",
        error: expect.any(String),
        errorData: nested(MAX_ERROR_DATA_NESTING),
      });
      expect(tooDeep.errorData).toBeNull();
      expect(tooDeep.error).toMatch(/errorData not kept: nested over 12 levels deep/);
      expect(deployment.stats.limitErrors.nesting).toBe(0);
      const [later] = await enqueue(t, "mutation", [{ key: "later" }]);
      await deployment.run(5_000);
      expect(await delivered(t, [later])).toEqual([{ kind: "success", returnValue: "later" }]);
    });

    it("data that is not a Convex value is stored as null", () => {
      const outcome = attemptFailure(new ConvexError({ when: new Map() } as never), undefined);
      expect(outcome).toMatchObject({ kind: "failed", errorData: null });
      expect(outcome.kind === "failed" && outcome.error).toMatch(
        /errorData not kept: not a Convex value/,
      );
    });

    it("keeps the note whole when the message is at its own cap", () => {
      const error = new ConvexError({ body: "x".repeat(MAX_ERROR_DATA_BYTES) });
      error.message = "m".repeat(MAX_ERROR_MESSAGE_BYTES);
      const outcome = attemptFailure(error, undefined);
      if (outcome.kind !== "failed") throw new Error("expected a failure");
      expect(new TextEncoder().encode(outcome.error).length).toBeLessThanOrEqual(
        MAX_ERROR_MESSAGE_BYTES,
      );
      expect(outcome.error).toMatch(/bytes cut\] \[workpool: errorData not kept: .*\]$/);
    });

    it("keeps data at the limits as it is", () => {
      expect(storableErrorData(nested(MAX_ERROR_DATA_NESTING))).toEqual({
        errorData: nested(MAX_ERROR_DATA_NESTING),
      });
      const fits = "x".repeat(MAX_ERROR_DATA_BYTES - 2); // JSON adds the two quotes
      expect(storableErrorData(fits)).toEqual({ errorData: fits });
      expect(storableErrorData(`${fits}x`).errorData).toBeNull();
    });

    it("drops data whose field names or array entries Convex refuses, saying why", () => {
      for (const data of [{ größe: 1 }, { $kind: 1 }, { ok: [1, undefined] }]) {
        const stored = storableErrorData(data);
        expect(stored.errorData, JSON.stringify(Object.keys(data))).toBeNull();
        expect(stored.note).toMatch(/^\[workpool: errorData not kept: not a Convex value/);
      }
    });
  });
});

describe("the non-retryable marker on a plain Error", () => {
  const marked = () => Object.assign(new Error("stop"), { __convexWorkpoolNonRetryable: true });

  it("is recognised by isNonRetryableError, with the error's own message", () => {
    expect(isNonRetryableError(marked())).toBe(true);
    expect(attemptFailure(marked(), undefined)).toMatchObject({
      kind: "failed",
      error: "stop",
      nonRetryable: true,
    });
    expect(attemptFailure(marked(), undefined)).not.toHaveProperty("errorData");
  });

  // (Mutations and queries are never retried.) convex-test hands the action's own error object
  // to the pool; a deployment sends only its message across, so there it holds for tasks alone.
  it("stops the retries of an action that throws it (in convex-test)", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", [{ key: "m", failTimes: 5, markedError: true }], {
      options: { retry: { maxAttempts: 4, initialBackoffMs: 10, base: 2 } },
    });
    const [result] = await settle(t, ids);
    expect(result).toEqual({ kind: "failed", error: "job m failed attempt 1" });
    expect(probe.attempts.get("m")).toBe(1);
  });

  it("stops the retries of a task that throws it", async () => {
    const t = setup();
    const ids: string[] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: [{ key: "tm", failTimes: 5, markedError: true }],
      options: { retry: { maxAttempts: 4, initialBackoffMs: 10, base: 2 } },
    });
    const [result] = await settle(t, ids);
    expect(result).toEqual({ kind: "failed", error: "task tm failed attempt 1" });
    expect(probe.attempts.get("tm")).toBe(1);
  });
});
