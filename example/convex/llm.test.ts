// Tests of llmPool's executor (llm.ts), on convex-test with the app's pools registered. The clock is
// faked (test.setup.ts) and moved with convex-workpool/test's runPool, in 50 ms steps with a real
// turn of the event loop after each, so the executor's reports and hand-overs run close to their
// times. The executor actions the pool started are counted from llmPool's scheduler records
// (convex-test's runInComponent, untyped, reads a component's system tables).
/// <reference types="vite/client" />
import type { GenericDataModel, GenericMutationCtx } from "convex/server";
import { runPool } from "convex-workpool/test";
import { describe, expect, it, vi } from "vitest";
import { api } from "./_generated/api.js";
import { SUMMARIZE_CONCURRENCY } from "./llm.js";
import { attemptFails } from "./sim.js";
import { asAdmin, setup, useExampleApp, type T } from "./test.setup.js";

useExampleApp();

/** Runs the pools for `ms` of virtual time. */
const runFor = (ms: number) => runPool(vi.advanceTimersByTimeAsync, ms);

/** `n` pages to summarize, each with its app key. */
const pagesOf = (n: number, prefix = "page") =>
  Array.from({ length: n }, (_, i) => ({
    key: `${prefix}-${i}`,
    url: `https://news.example/${prefix}/${i}`,
  }));

/** How many llm:run executor actions llmPool scheduled, from its `_scheduled_functions`. */
async function executorActions(t: T): Promise<number> {
  const withComponents = t as unknown as {
    runInComponent<R>(
      name: string,
      fn: (ctx: GenericMutationCtx<GenericDataModel>) => Promise<R>,
    ): Promise<R>;
  };
  return await withComponents.runInComponent("llmPool", async (ctx) => {
    const rows = await ctx.db.system.query("_scheduled_functions").collect();
    return rows.filter((row) => row.name.endsWith("llm:run")).length;
  });
}

const outcomes = (t: T) => asAdmin(t).query(api.jobs.listOutcomes, { pool: "llmPool" });

describe("example app: llmPool (an executor's tasks)", () => {
  it("summarizes 120 pages of ~2 s in about one summary's time, 50 at a time per executor action", async () => {
    const t = setup();
    const pages = pagesOf(120);
    const ids = await t.mutation(api.llm.summarizePages, {
      pages,
      ms: 2000,
      failRate: 0,
      seed: 1,
    });
    expect(ids).toHaveLength(120);
    // Every summary waits 1.5–2.5 s; they all wait at once (maxParallelism 200).
    await runFor(4000);
    const done = await outcomes(t);
    expect(done.map((o) => o.key).sort()).toEqual(pages.map((p) => p.key).sort());
    expect(done.every((o) => o.kind === "success")).toBe(true);
    const first = done.find((o) => o.key === "page-0");
    expect(first?.returnValue).toEqual({
      summary: "the gist of https://news.example/page/0",
      attempts: 1,
    });
    // 120 summaries in ⌈120 / 50⌉ executor actions, where ordinary actions would take one each.
    expect(await executorActions(t)).toBe(Math.ceil(120 / SUMMARIZE_CONCURRENCY));
    // A summary is a job of llmPool like any other.
    expect(
      await asAdmin(t).query(api.admin.jobInfo, { pool: "llmPool", id: ids[0] }),
    ).toMatchObject({
      name: "summarize",
      fnType: "action",
      state: "finished",
      result: { kind: "success" },
    });
    expect((await asAdmin(t).query(api.admin.stats, {})).llmPool).toMatchObject({
      pending: 0,
      running: 0,
      maxParallelism: 200,
    });
  });

  it("retries a summary whose first attempt failed, and records the second's result", async () => {
    const t = setup();
    const seed = 3;
    const failRate = 0.5;
    const page = pagesOf(50).find(
      ({ key }) => attemptFails(seed, key, 1, failRate) && !attemptFails(seed, key, 2, failRate),
    )!;
    const [id] = await t.mutation(api.llm.summarizePages, {
      pages: [page],
      ms: 500,
      failRate,
      seed,
    });
    await runFor(5000);
    const { status, outcome } = await asAdmin(t).query(api.jobs.status, {
      pool: "llmPool",
      workId: id,
    });
    expect(status.state).toBe("finished");
    expect(outcome).toMatchObject({ key: page.key, kind: "success" });
    expect(outcome?.returnValue).toMatchObject({ attempts: 2 });
    const info = await asAdmin(t).query(api.admin.jobInfo, { pool: "llmPool", id });
    expect(info?.previousAttempts).toBe(2);
  });

  it("cancels a running summary: its signal aborts, and it ends canceled long before its 20 s", async () => {
    const t = setup();
    const [slow, other] = await t.mutation(api.llm.summarizePages, {
      pages: pagesOf(2, "long"),
      ms: 20_000,
      failRate: 0,
      seed: 1,
    });
    await runFor(1000);
    expect(
      (await asAdmin(t).query(api.jobs.status, { pool: "llmPool", workId: slow })).status.state,
    ).toBe("running");
    await asAdmin(t).mutation(api.jobs.cancel, { pool: "llmPool", workId: slow });
    await runFor(3000);
    const canceled = await asAdmin(t).query(api.jobs.status, { pool: "llmPool", workId: slow });
    expect(canceled.outcome?.kind).toBe("canceled");
    // The other summary of the batch goes on waiting for its model.
    const running = await asAdmin(t).query(api.jobs.status, { pool: "llmPool", workId: other });
    expect(running.status.state).toBe("running");
    expect(running.outcome).toBeNull();
  });
});
