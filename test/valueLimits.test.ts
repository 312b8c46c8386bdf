/**
 * Values as Convex counts them (model/valueMeasure.ts): the pool embeds a user value one to three
 * levels deeper in its own rows than the value's own top (a return value in
 * `deliveries.items[i].result.returnValue`, a task's args in `handovers.tasks[i].fnArgs`), and
 * counts sizes as Convex does (9 bytes a number). On the deployment-like backend, which refuses
 * any write past Convex's document limits (1 MiB, 16 levels, 1,024 fields, 8,192 elements), no
 * value a caller can give makes a loop pass fail: a value too deep or too large for the rows goes
 * to a payload row, and one no document can hold is refused at enqueue (args, context) or fails its
 * own attempt with the reason (return values).
 *
 * The first three cases and the delivery-row case are the review of 2026-11-26's H1 and H2
 * reproductions (rev3NestedResultWedge, rev3DeliveryRow): on 7683cb6 each wedged the loop.
 */
import { getConvexSize } from "convex/values";
import { anyApi } from "convex/server";
import { beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadModules } from "../src/test.js";
import { nestedArrays } from "./app/jobs.js";
import { setupDeployment, type Deployment } from "./deployment.js";
import { appModules, completions, enqueue, info, type T } from "./helpers.js";

beforeAll(async () => await loadModules(appModules));
beforeEach(() => {
  vi.spyOn(console, "error").mockImplementation(() => {});
  vi.spyOn(console, "warn").mockImplementation(() => {});
});

/** The loop passes (and their restarts) the backend saw fail. */
function failedPasses(deployment: Deployment): string[] {
  return deployment.failures.filter((f) => /main/.test(f.fn)).map((f) => f.error ?? "");
}

/** Runs `deep`'s job for a while, then a plain job enqueued after it; returns both outcomes. */
async function thenAnother(
  t: T,
  deployment: Deployment,
  deep: string,
): Promise<{ deep: any; later: any }> {
  await deployment.run(5_000, 100);
  const [later] = await enqueue(t, "mutation", [{ key: "later" }]);
  await deployment.run(60_000, 100);
  const byId = new Map((await completions(t)).map((c) => [c.workId, c]));
  return { deep: byId.get(deep), later: byId.get(later) };
}

describe("a deeply nested value", () => {
  it("a return value 14 arrays deep is delivered whole, and the pool goes on", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    const [deep] = await enqueue(t, "query", [{ key: "deep", returnDepth: 14 }]);
    const { deep: done, later } = await thenAnother(t, deployment, deep);
    expect(done?.result).toEqual({ kind: "success", returnValue: nestedArrays(14) });
    expect(later?.result.kind).toBe("success");
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("a return value 16 arrays deep (the most a document holds) is kept whole", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    // (The test app's onComplete cannot store it in its own row, one level down: that is the
    // app's failure, recorded by delivery, not the pool's.)
    const [deep] = await enqueue(t, "action", [{ key: "deep", returnDepth: 16 }]);
    const { later } = await thenAnother(t, deployment, deep);
    expect((await info(t, deep)).result).toEqual({
      kind: "success",
      returnValue: nestedArrays(16),
    });
    expect(later?.result.kind).toBe("success");
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("a return value 17 arrays deep fails its own attempt, saying why, and the pool goes on", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    const [deep] = await enqueue(t, "action", [{ key: "deep", returnDepth: 17 }]);
    const { deep: done, later } = await thenAnother(t, deployment, deep);
    expect(done?.result).toEqual({
      kind: "failed",
      error: "workpool: the return value nests 17 levels deep, over the limit of 16",
    });
    expect(later?.result.kind).toBe("success");
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("an onComplete context 15 arrays deep (accepted at enqueue) reaches onComplete whole", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    const context = nestedArrays(15);
    const [deep] = await enqueue(t, "mutation", [{ key: "ctx" }], { options: { context } });
    const { deep: done, later } = await thenAnother(t, deployment, deep);
    expect(done?.context).toEqual(context);
    expect(done?.result.kind).toBe("success");
    expect(later?.result.kind).toBe("success");
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("a task whose args hold a value 14 arrays deep runs with those args, and the pool goes on", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    const value = nestedArrays(14);
    const [deep] = await t.mutation(anyApi.tasks.enqueueIo, { argsList: [{ key: "deep", value }] });
    const { deep: done, later } = await thenAnother(t, deployment, deep);
    expect(done?.result.kind).toBe("success");
    expect(later?.result.kind).toBe("success");
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("args 16 levels deep (as deep as the peer keeps them) run, and are kept for retry", async () => {
    const { t, deployment } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    const value = nestedArrays(15); // inside the args object: 16 levels
    const [deep] = await enqueue(t, "action", [{ key: "deep", value, failTimes: 1 }], {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 1 } },
    });
    const { deep: done } = await thenAnother(t, deployment, deep);
    expect(done?.result).toEqual({ kind: "success", returnValue: value });
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("args or a context no document can hold are refused at enqueue, naming the argument", async () => {
    const { t } = await setupDeployment({ seed: 4, maxStartDelayMs: 0 });
    await expect(
      enqueue(t, "mutation", [{ key: "deep", value: nestedArrays(16) }]),
    ).rejects.toThrow(/invalid fnArgs: must nest at most 16 levels deep.*\(got 17 levels\)/);
    await expect(
      enqueue(t, "mutation", [{ key: "deep" }], { options: { context: nestedArrays(17) } }),
    ).rejects.toThrow(
      /invalid onComplete\.context: must nest at most 16 levels deep.*\(got 17 levels\)/,
    );
    const wide = Object.fromEntries(Array.from({ length: 1025 }, (_, i) => [`f${i}`, i]));
    await expect(
      enqueue(t, "mutation", [{ key: "wide" }], { options: { context: wide } }),
    ).rejects.toThrow(
      /invalid onComplete\.context: must have at most 1024 fields in any object \(got 1025 fields\)/,
    );
  }, 60_000);
});

describe("sizes as Convex counts them", () => {
  it("40 small numeric results finishing together: every onComplete arrives", async () => {
    const { t, deployment } = await setupDeployment({ seed: 5, maxStartDelayMs: 0 });
    // 7.8 KB as JSON, 35 KB as Convex counts it (9 bytes a number): inline by the old JSON measure.
    const value = new Array(3_900).fill(0);
    expect(JSON.stringify(value).length).toBeLessThan(8 * 1024);
    expect(getConvexSize(value)).toBeGreaterThan(30_000);
    const argsList = Array.from({ length: 40 }, (_, i) => ({ key: `q${i}`, value }));
    await enqueue(t, "query", argsList, { batch: true, poolOptions: { maxParallelism: 50 } });
    await deployment.run(60_000, 100);
    const done = await completions(t);
    expect(done.length).toBe(40);
    expect(done.every((c) => c.result.kind === "success")).toBe(true);
    expect(failedPasses(deployment)).toEqual([]);
  }, 60_000);

  it("args of 120,000 numbers (1.08 MB as Convex counts them) are refused at enqueue", async () => {
    const { t } = await setupDeployment({ seed: 5, maxStartDelayMs: 0 });
    const value = Array.from({ length: 15 }, () => new Array(8_000).fill(0));
    expect(JSON.stringify(value).length).toBeLessThan(1_000_000);
    await expect(enqueue(t, "mutation", [{ key: "big", value }])).rejects.toThrow(
      /fnArgs.*args plus context must be at most 1000000 bytes/,
    );
  }, 60_000);
});
