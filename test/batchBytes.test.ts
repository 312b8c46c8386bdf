// Batch enqueues of any total size: the client splits its calls to the component by count and by
// bytes, so that each call's transaction stays below Convex's 16 MiB write limit (convex-test
// enforces it here: `transactionLimits: true`).
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { chunkBySizes, MAX_BATCH_CALL_BYTES } from "../src/client/batches.js";
import { MAX_ENQUEUE_BATCH } from "../src/component/api/enqueue.js";
import { completions, runUntil, setup, type T } from "./helpers.js";

/** Bytes of each big job's blob: 40 of them are 20 MB, more than one transaction may write. */
const BLOB_BYTES = 500_000;

/** Runs until every id got its onComplete; checks each got exactly one, in input order. */
async function expectEachCompletedOnce(t: T, ids: string[]) {
  await runUntil(t, async () => (await completions(t)).length >= ids.length, 60_000);
  const done = await completions(t);
  expect(done).toHaveLength(ids.length);
  const byId = new Map(done.map((c) => [c.workId, c]));
  expect(byId.size).toBe(ids.length);
  ids.forEach((id, i) => {
    expect(byId.get(id)).toMatchObject({
      context: { big: true },
      // `sink` returns its key: job i was enqueued with key k<i>, so ids are in input order.
      result: { kind: "success", returnValue: `k${i}` },
    });
  });
}

describe("chunkBySizes", () => {
  it("keeps order and cuts by count and by bytes", () => {
    const items = Array.from({ length: 7 }, (_, i) => i);
    expect(
      chunkBySizes(
        items,
        items.map(() => 1),
        3,
        100,
      ),
    ).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(
      chunkBySizes(
        items,
        items.map(() => 40),
        10,
        100,
      ),
    ).toEqual([[0, 1], [2, 3], [4, 5], [6]]);
    // An item over the byte budget on its own still goes, alone.
    expect(chunkBySizes([1, 2, 3], [10, 500, 10], 10, 100)).toEqual([[1], [2], [3]]);
    expect(chunkBySizes([], [], 10, 100)).toEqual([]);
  });

  it("defaults to the component's count limit and the byte budget", () => {
    const many = Array.from({ length: MAX_ENQUEUE_BATCH + 1 }, (_, i) => i);
    expect(
      chunkBySizes(
        many,
        many.map(() => 1),
      ).map((c) => c.length),
    ).toEqual([MAX_ENQUEUE_BATCH, 1]);
    const sizes = [MAX_BATCH_CALL_BYTES / 2, MAX_BATCH_CALL_BYTES / 2, 1];
    expect(chunkBySizes([0, 1, 2], sizes)).toEqual([[0, 1], [2]]);
  });
});

describe("big batches", () => {
  it("without the byte split, the same batch in one call writes too much", async () => {
    const t = setup();
    await expect(
      t.action(anyApi.bigBatch.unsplitFromAction, { n: 40, bytes: BLOB_BYTES }),
    ).rejects.toThrow(/Wrote too much data/);
  });

  it("enqueueActionBatch of 40 jobs of 500 KB from an action: all enqueued, run, completed once", async () => {
    const t = setup();
    const ids: string[] = await t.action(anyApi.bigBatch.fromAction, { n: 40, bytes: BLOB_BYTES });
    expect(ids).toHaveLength(40);
    expect(new Set(ids).size).toBe(40);
    await expectEachCompletedOnce(t, ids);
  });

  it("the standalone enqueueBatch splits the same way", async () => {
    const t = setup();
    const ids: string[] = await t.action(anyApi.bigBatch.fromAction, {
      n: 40,
      bytes: BLOB_BYTES,
      standalone: true,
    });
    expect(ids).toHaveLength(40);
    await expectEachCompletedOnce(t, ids);
  });

  // From a mutation every call shares the caller's transaction, so the whole batch must fit its
  // 16 MiB; a batch above one call's budget (here 5 MB) still goes through.
  it("from a mutation, a batch above one call's byte budget: all enqueued, run, completed once", async () => {
    const t = setup();
    const ids: string[] = await t.mutation(anyApi.bigBatch.fromMutation, {
      n: 10,
      bytes: BLOB_BYTES,
    });
    expect(ids).toHaveLength(10);
    await expectEachCompletedOnce(t, ids);
  });
});
