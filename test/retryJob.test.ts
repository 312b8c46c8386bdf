/**
 * Retrying a finished job (section 7 of the API extensions): a job that failed or was canceled keeps
 * its args and options while its status is retained, and `retry` runs it again as a new job.
 */
import { describe, expect, it } from "vitest";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  componentRows,
  enqueue,
  info,
  listJobs,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

describe("retry", () => {
  it("runs a failed job again with the same args and options; the old job keeps its one onComplete", async () => {
    const t = setup();
    const [failed] = await enqueue(t, "action", [{ key: "k:job", failTimes: 1, value: 42 }], {
      options: { key: "k", priority: "high", context: { from: "first" } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    expect(await info(t, failed)).toMatchObject({ state: "finished", result: { kind: "failed" } });
    const again = await callPool(t, "retry", [failed]);
    expect(again).not.toBe(failed);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    await runFor(t, 1000);
    const all = await completions(t);
    expect(all.map((c) => [c.workId, c.result.kind, c.context])).toEqual([
      [failed, "failed", { from: "first" }],
      [again, "success", { from: "first" }],
    ]);
    expect(all[1].result.returnValue).toBe(42);
    expect(await info(t, again)).toMatchObject({ key: "k", priority: "high", state: "finished" });
    expect(probe.attempts.get("k:job")).toBe(2);
  });

  it("runs a job canceled before it started", async () => {
    const t = setup();
    const [canceled] = await enqueue(t, "action", [{ key: "later" }], {
      options: { runAfter: 60_000 },
    });
    await callPool(t, "cancel", [canceled]);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const again = await callPool(t, "retry", [canceled]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    expect((await completions(t)).map((c) => [c.workId, c.result.kind])).toEqual([
      [canceled, "canceled"],
      [again, "success"],
    ]);
  });

  it("keeps a large job's args in their payload row until the job is forgotten", async () => {
    const t = setup();
    const big = "x".repeat(20_000);
    const [failed] = await enqueue(t, "mutation", [{ key: "big", failTimes: 1, value: big }], {
      poolOptions: { statusTtl: 5000 },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    await runFor(t, 500);
    expect((await componentRows(t)).payloads).toHaveLength(1);
    await callPool(t, "retry", [failed]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    expect((await completions(t))[1].result).toEqual({ kind: "success", returnValue: big });
    // Both rows go once their status expires: nothing is kept past statusTtl.
    await runFor(t, 30_000, 100);
    expect((await componentRows(t)).payloads).toEqual([]);
    expect((await componentRows(t)).work).toEqual([]);
  });

  it("a job whose args came back with its failure can be retried after the start dropped them", async () => {
    const t = setup();
    // No retry behavior: the start hands the args to the worker and drops them from the row.
    const [failed] = await enqueue(t, "action", [{ key: "once", failTimes: 1, value: "v" }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const again = await callPool(t, "retry", [failed]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    expect((await completions(t))[1]).toMatchObject({
      workId: again,
      result: { kind: "success", returnValue: "v" },
    });
  });

  it("retrying twice reruns once: the second call returns the first rerun's id, and info shows it", async () => {
    const t = setup();
    const [failed] = await enqueue(t, "action", [{ key: "twice", failTimes: 1 }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const first = await callPool(t, "retry", [failed]);
    const second = await callPool(t, "retry", [failed]);
    expect(second).toBe(first);
    await runUntil(t, async () => (await completions(t)).length === 2, 5000);
    await runFor(t, 1000);
    expect(await completions(t)).toHaveLength(2);
    expect(probe.attempts.get("twice")).toBe(2);
    expect(await info(t, failed)).toMatchObject({ retriedAs: first });
    // once the rerun finished, a third retry of the old job still returns it
    expect(await callPool(t, "retry", [failed])).toBe(first);
    const page = await listJobs(t, {
      outcome: "failed",
      paginationOpts: { numItems: 10, cursor: null },
    });
    expect(page.page).toEqual([expect.objectContaining({ id: failed, retriedAs: first })]);
  });

  it("keeps the job's dedupeKey: the rerun dedupes as at enqueue", async () => {
    const t = setup();
    const dedupeKey = "https://example.com/" + "p".repeat(4_000);
    const [failed] = await enqueue(t, "action", [{ key: "d1", failTimes: 1 }], {
      options: { dedupeKey },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const rerun = await callPool(t, "retry", [failed]);
    // the rerun is pending with the key: an enqueue with it dedupes into the rerun
    const [again] = await enqueue(t, "action", [{ key: "d2" }], {
      options: { dedupeKey, runAfter: 10_000 },
    });
    expect(again).toBe(rerun);
  });

  it("returns the pending job with the kept dedupeKey instead of enqueueing another", async () => {
    const t = setup();
    const [failed] = await enqueue(t, "action", [{ key: "e1", failTimes: 1 }], {
      options: { dedupeKey: "doc-9" },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    const [waiting] = await enqueue(t, "action", [{ key: "e2" }], {
      options: { dedupeKey: "doc-9", runAfter: 60_000 },
    });
    expect(await callPool(t, "retry", [failed])).toBe(waiting);
    expect(await info(t, failed)).toMatchObject({ retriedAs: waiting });
  });
});
