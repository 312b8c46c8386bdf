/**
 * One budget for every stage of a loop pass (mainLoop/passBudget.ts): each stage, driven over one
 * of Convex's count limits, stops within the pass's budget and goes on in the next pass, and the
 * pool finishes every job — nothing lost, nothing stuck, no pass rolled back.
 *
 * The limits are tightened for the whole test (convex-test's `transactionLimits`, through
 * `setupDeployment({ limits })`), so that a small load meets them: the budget is a share of the
 * limits the platform reports, so it tightens with them, while each stage's own batch (100 starts,
 * 100 cancels, a page of 100 running jobs, 50 rows of 50 callbacks, a sweep of 50 rows) does not.
 * Each spec also checks that the budget did stop the stage it drives (the pass's DEBUG line names
 * it), so that it cannot pass without meeting the limit.
 */
import { anyApi } from "convex/server";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadModules } from "../src/test.js";
import { setupDeployment, type Deployment } from "./deployment.js";
import {
  appModules,
  completions,
  enqueue,
  inComponent,
  interceptSyscalls,
  type T,
  type TransactionLimits,
} from "./helpers.js";

beforeAll(async () => await loadModules(appModules));

/** The stages the budget stopped, one entry per pass that stopped (from the pass's DEBUG line). */
function budgetStops(): string[] {
  const stops: string[] = [];
  vi.spyOn(console, "debug").mockImplementation((line: string) => {
    const parsed = JSON.parse(line);
    if (parsed.event === "pass" && parsed.budgetStop) stops.push(parsed.budgetStop.stage);
  });
  vi.spyOn(console, "info").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  return stops;
}

async function start(limits: TransactionLimits, seed: number) {
  const stops = budgetStops();
  const { t, deployment } = await setupDeployment({ seed, maxStartDelayMs: 0, limits });
  return { t, deployment, stops };
}

/** Enqueues `n` jobs of `kind` in calls of `chunk` (each call within the tightened limits). */
async function enqueueMany(
  t: T,
  kind: "mutation" | "action",
  n: number,
  chunk: number,
  extra: {
    poolOptions?: object;
    options?: object;
    arg?: (i: number) => object;
    /** One enqueue per job instead of enqueueBatch (whose jobs share start rows). */
    oneByOne?: boolean;
  } = {},
): Promise<string[]> {
  const ids: string[] = [];
  for (let from = 0; from < n; from += chunk) {
    const argsList = Array.from({ length: Math.min(chunk, n - from) }, (_, i) => ({
      key: `j${from + i}`,
      ...extra.arg?.(from + i),
    }));
    ids.push(
      ...(await enqueue(t, kind, argsList, {
        batch: !extra.oneByOne,
        poolOptions: { logLevel: "DEBUG", ...extra.poolOptions },
        options: extra.options,
      })),
    );
  }
  return ids;
}

/** Asserts that every job's onComplete came exactly once, and that no pool transaction of
 * `fns` rolled back (the loop's passes, by default). */
async function expectAllDelivered(
  t: T,
  deployment: Deployment,
  ids: string[],
  fns = /main/,
): Promise<Array<{ workId: string; result: any }>> {
  const done = await completions(t);
  const byId = new Map<string, number>();
  for (const c of done) byId.set(c.workId, (byId.get(c.workId) ?? 0) + 1);
  expect(ids.filter((id) => byId.get(id) !== 1)).toEqual([]);
  expect(deployment.failures.filter((f) => fns.test(f.fn))).toEqual([]);
  expect(deployment.stats.limitErrors.scheduled).toBe(0);
  return done;
}

describe("every stage of a pass stays within one budget of counts", () => {
  it("start: 200 due jobs under a limit of 40 schedules start over several passes", async () => {
    const { t, deployment, stops } = await start({ functionsScheduled: 40 }, 1);
    const ids = await enqueueMany(t, "mutation", 200, 100, {
      poolOptions: { maxParallelism: 200 },
    });
    await deployment.run(20_000, 50);
    await expectAllDelivered(t, deployment, ids);
    expect(stops).toContain("start");
  });

  it("refile: 300 jobs filed early under a limit of 200 writes are each moved and started on time", async () => {
    const { t, deployment, stops } = await start({ documentsWritten: 200 }, 8);
    // Due 5 s out: each enqueue (one by one, so that each job has a start row of its own) files
    // its job early, into the next segment (api/kick.ts), and the refile stage moves each row
    // (two writes) to its due segment, 200 a batch at most.
    const runAfter = 5_000;
    const enqueuedAt = Date.now();
    const ids = await enqueueMany(t, "mutation", 300, 40, {
      poolOptions: { maxParallelism: 300 },
      options: { runAfter },
      oneByOne: true,
    });
    await deployment.run(30_000, 50);
    await expectAllDelivered(t, deployment, ids);
    expect(stops).toContain("refile");
    const startedAt: number[] = await inComponent(t, async (ctx) =>
      (await ctx.db.query("work").collect()).map((w: any) => w.state.startedAt),
    );
    expect(startedAt).toHaveLength(300);
    expect(startedAt.filter((at) => !(at >= enqueuedAt + runAfter))).toEqual([]);
  });

  it("hand-over: 150 tasks to executors of 5 under a limit of 30 schedules all run", async () => {
    const { t, deployment, stops } = await start({ functionsScheduled: 30 }, 2);
    const ids: string[] = await t.mutation(anyApi.tasks.enqueueIo, {
      argsList: Array.from({ length: 150 }, (_, i) => ({ key: `t${i}`, ms: 200 })),
      batch: true,
      poolOptions: { maxParallelism: 150, logLevel: "DEBUG" },
    });
    await deployment.run(60_000, 50);
    const done = await expectAllDelivered(t, deployment, ids);
    expect(done.every((c) => c.result.kind === "success")).toBe(true);
    expect(stops).toContain("start");
  });

  it("cancels: cancelAll of 300 waiting jobs under a limit of 250 writes cancels every one", async () => {
    const { t, deployment, stops } = await start({ documentsWritten: 250 }, 3);
    const ids = await enqueueMany(t, "mutation", 300, 50, {
      options: { runAfter: 60_000 },
    });
    await deployment.run(2_000, 50);
    await t.mutation(anyApi.pool.cancelAll, { limit: 100 });
    await deployment.run(20_000, 50);
    const done = await expectAllDelivered(t, deployment, ids);
    expect(done.every((c) => c.result.kind === "canceled")).toBe(true);
    expect(stops).toContain("cancels");
  });

  it("deliveries: 150 large jobs finishing together under a limit of 60 schedules are each delivered", async () => {
    const { t, deployment, stops } = await start({ functionsScheduled: 60 }, 4);
    // Arguments over the inline limit: each job is large, and its delivery has a row to itself.
    const ids = await enqueueMany(t, "mutation", 150, 30, {
      poolOptions: { maxParallelism: 150 },
      arg: () => ({ pad: "p".repeat(10_000) }),
    });
    await deployment.run(30_000, 50);
    const done = await expectAllDelivered(t, deployment, ids);
    expect(done.every((c) => c.result.kind === "success")).toBe(true);
    expect(stops.length).toBeGreaterThan(0);
    const large = await inComponent(t, async (ctx) => await ctx.db.query("payloads").collect());
    expect(large).toEqual([]);
  });

  it("delivery check: 300 callbacks whose deliveries failed are split within a limit of 120 schedules", async () => {
    const { t, deployment, stops } = await start({ functionsScheduled: 120 }, 5);
    let failing = true;
    interceptSyscalls(async (op, jsonArgs, next) => {
      const fn: string | undefined = (deployment as any).currentTx()?.fn;
      if (failing && fn !== undefined && /deliver:deliver$/.test(fn) && op.startsWith("1.0/")) {
        throw new Error("injected: the delivery transaction failed");
      }
      return await next(op, jsonArgs);
    });
    const ids = await enqueueMany(t, "mutation", 300, 100, {
      poolOptions: { maxParallelism: 100 },
    });
    await deployment.run(3_000, 50);
    failing = false;
    await deployment.run(60_000, 100);
    await expectAllDelivered(t, deployment, ids);
    expect(stops).toContain("deliveryCheck");
  });

  it("recovery: 200 jobs whose workers died are each found and finished under a limit of 200 index ranges", async () => {
    const { t, deployment, stops } = await start({ databaseQueries: 200 }, 6);
    let failing = true;
    interceptSyscalls(async (op, jsonArgs, next) => {
      const fn: string | undefined = (deployment as any).currentTx()?.fn;
      if (failing && fn !== undefined && /worker:runMutationOrQuery$/.test(fn)) {
        throw new Error("injected: the worker died");
      }
      return await next(op, jsonArgs);
    });
    const ids = await enqueueMany(t, "mutation", 200, 100, {
      poolOptions: { maxParallelism: 200 },
    });
    await deployment.run(3_000, 50);
    failing = false;
    await deployment.run(90_000, 100);
    const done = await expectAllDelivered(t, deployment, ids);
    // A mutation is not retried: recovery finishes each as failed, saying why.
    for (const { result } of done) {
      expect(result).toEqual({ kind: "failed", error: expect.stringMatching(/runner died/) });
    }
    expect(stops).toContain("recovery");
  });

  it("sweep: 150 expired large jobs are all swept under a limit of 90 writes", async () => {
    const { t, deployment } = await start({ documentsWritten: 90 }, 7);
    // Finished jobs whose status has expired, each with its return value in a payload: two
    // deletes each, so a sweep of its batch (50 rows) would write 100.
    const expired: string[] = [];
    for (let chunk = 0; chunk < 150 / 20; chunk++) {
      expired.push(
        ...(await inComponent(t, async (ctx) => {
          const ids: string[] = [];
          for (let i = 0; i < 20; i++) {
            const now = Date.now();
            const resultPayloadId = await ctx.db.insert("payloads", { returnValue: "r" });
            const id = await ctx.db.insert("work", {
              fnType: "mutation",
              fnHandle: "function://none",
              fnName: "jobs:mutation",
              attempts: 1,
              state: {
                kind: "finished",
                result: { kind: "success", returnValue: null },
                finishedAt: now - 2_000,
              },
              listAt: now - 2_000,
              resultPayloadId,
              expiresAt: now - 1_000,
            });
            ids.push(id);
          }
          return ids;
        })),
      );
    }
    // A job wakes the loop, which schedules the sweeper for what expired.
    const ids = await enqueueMany(t, "mutation", 1, 1);
    await deployment.run(30_000, 100);
    await expectAllDelivered(t, deployment, ids, /main|sweep/);
    const left = await inComponent(t, async (ctx) => ({
      work: (await ctx.db.query("work").collect()).filter((w: any) => expired.includes(w._id))
        .length,
      payloads: (await ctx.db.query("payloads").collect()).length,
    }));
    expect(left).toEqual({ work: 0, payloads: 0 });
  });
});
