/**
 * Executors that fail or misbehave (API-EXTENSIONS section 8, issue 30): whatever an executor does,
 * no task is held forever, none is dropped unrun, and none holds a slot for good.
 */
import { anyApi } from "convex/server";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { TAKE_BACKS_FREE } from "../src/component/mainLoop/recovery.js";
import { HELD_ARGS_BYTES_LIMIT } from "../src/component/runners/batchRun.js";
import { brokenRuns, zerosExec } from "./app/brokenExecutors.js";
import { probe } from "./app/probe.js";
import { setupDeployment } from "./deployment.js";
import {
  completions,
  inComponent,
  enqueue,
  failSchedules,
  info,
  killRunnerAtNextReport,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

beforeEach(() => {
  vi.spyOn(console, "warn").mockImplementation(() => {});
  vi.spyOn(console, "error").mockImplementation(() => {});
  brokenRuns.count = 0;
});

describe("an executor that fails before it takes anything", () => {
  it("gives its task back free 3 times, then each failure is an attempt: the job ends within 5 minutes, naming the executor", async () => {
    const t = setup();
    const id: string = await t.mutation(anyApi.brokenExecutors.enqueueBroken, {
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5 * 60_000, 1_000);
    const [done] = await completions(t);
    expect(done.result.kind).toBe("failed");
    expect(done.result.error).toMatch(
      /^workpool: executor .*brokenExec.* failed before it started the task, 5 times/,
    );
    expect(await info(t, id)).toMatchObject({ state: "finished", previousAttempts: 2 });
    // Three free take-backs, then the attempts the retry policy allows.
    expect(brokenRuns.count).toBe(TAKE_BACKS_FREE + 2);
  });

  it("ends a task without a retry policy at the first failure past the free take-backs", async () => {
    const t = setup();
    await t.mutation(anyApi.brokenExecutors.enqueueBroken, {});
    await runUntil(t, async () => (await completions(t)).length === 1, 5 * 60_000, 1_000);
    const [done] = await completions(t);
    expect(done.result).toMatchObject({ kind: "failed" });
    expect(brokenRuns.count).toBe(TAKE_BACKS_FREE + 1);
  });
});

describe("an executor whose function cannot be scheduled (a deploy removed it)", () => {
  it("does not wedge the pass that starts it: its task ends failed, naming it, and other jobs run", async () => {
    const t = setup();
    const refused = failSchedules("tasks:run", Infinity);
    await t.mutation(anyApi.tasks.enqueueIo, { argsList: [{ key: "t0" }] });
    const [other] = await enqueue(t, "mutation", [{ key: "m0" }]);
    await runUntil(t, async () => (await completions(t)).length === 2, 5 * 60_000, 1_000);
    expect(refused.count).toBe(TAKE_BACKS_FREE + 1);
    const done = await completions(t);
    expect(done.find((c) => c.workId === other)?.result.kind).toBe("success");
    const task = done.find((c) => c.workId !== other)!;
    expect(task.result.error).toMatch(
      /^workpool: executor .*tasks:run.*could not be scheduled: injected: failure to schedule/,
    );
  });
});

describe("a report that fails", () => {
  /** The outcomes onComplete got for `ids`, in their order. */
  async function outcomesOf(t: T, ids: string[]) {
    const done = await completions(t);
    return ids.map((id) => done.find((c) => c.workId === id)?.result);
  }
  const fiveTasks = (first: Record<string, unknown>) => [
    first,
    ...Array.from({ length: 4 }, (_, i) => ({ key: `slow${i}`, ms: 3_000 })),
  ];

  for (const after of [false, true]) {
    it(`ends nothing: a transient error ${after ? "after" : "before"} the call took effect, and every task succeeds once`, async () => {
      const { t, deployment } = await setupDeployment({
        seed: 9,
        maxStartDelayMs: 0,
        gcAfterMs: false,
        actions: { executor: zerosExec },
      });
      const ids: string[] = await t.mutation(anyApi.brokenExecutors.enqueueZeros, {
        argsList: fiveTasks({ key: "quick", ms: 100 }),
      });
      // Call 1 is the first report (it takes the five); call 2 reports "quick"'s success. With
      // `after`, the first report commits, and its answer (the five tasks) is lost.
      deployment.arm({
        kind: "actionDies",
        at: after ? 1 : 2,
        after,
        mode: "throw",
        noticedAfterMs: 0,
        action: "executor",
      });
      await deployment.run(60_000, 100);
      expect(deployment.fired).toHaveLength(1);
      const results = await outcomesOf(t, ids);
      for (const result of results) expect(result?.kind).toBe("success");
      for (const key of ["quick", "slow0", "slow1", "slow2", "slow3"]) {
        expect(probe.attempts.get(key)).toBe(1);
      }
      // Nothing is left behind: no hand-over kept for a retry, no executor row.
      const left = await inComponent(t, async (ctx) => [
        ...(await ctx.db.query("handovers").collect()),
        ...(await ctx.db.query("executors").collect()),
      ]);
      expect(left).toEqual([]);
    });
  }

  it("fails only the task whose result the pool cannot store; the others of its executor succeed", async () => {
    const { t } = await setupDeployment({
      seed: 9,
      maxStartDelayMs: 0,
      gcAfterMs: false,
      actions: { executor: zerosExec },
    });
    // 200,000 zeros: 400 KB as JSON, 1.8 MB as Convex counts it.
    const ids: string[] = await t.mutation(anyApi.brokenExecutors.enqueueZeros, {
      argsList: fiveTasks({ key: "poison", ms: 500, zeros: 200_000 }),
    });
    await runUntil(t, async () => (await completions(t)).length === 5, 120_000, 100);
    const [poison, ...others] = await outcomesOf(t, ids);
    expect(poison).toMatchObject({ kind: "failed" });
    // Measured in the executor before it reports (as Convex counts it), so the report never fails.
    expect(poison?.error).toBe(
      "workpool: the return value is 1800052 bytes, over the limit of 1000000 bytes",
    );
    for (const result of others) expect(result?.kind).toBe("success");
  });
});

describe("an executor that dies at its last report", () => {
  it("leaves no executor row behind: its row goes once its action is over for certain", async () => {
    const t = setup();
    // Tasks of 50 s, one enqueued every 45 s, all handed to one executor while it is younger
    // than 4 minutes; the last ends past its window, so its row is closed (not open) by then.
    for (let i = 0; i < 6; i++) {
      await t.mutation(anyApi.tasks.enqueueIo, { argsList: [{ key: `t${i}`, ms: 50_000 }] });
      await runFor(t, 45_000, 500);
    }
    await runUntil(t, async () => (await completions(t)).length === 6, 120_000, 50);
    // Its last report (the one that says it ends) is never sent: the executor dies then.
    const killed = killRunnerAtNextReport();
    await runFor(t, 10 * 60_000, 1_000);
    expect(killed.count).toBe(1);
    const rows = await inComponent(t, async (ctx) => await ctx.db.query("executors").collect());
    // Before, the closed row stayed forever: nothing read it again.
    expect(rows).toEqual([]);
  });
});

describe("the args an executor holds", () => {
  it("stay within 16 MiB (and one task's): 20 tasks of 900 KB of args to an executor of 20 never run all at once", async () => {
    const t = setup();
    const keys = Array.from({ length: 20 }, (_, i) => `big${i}`);
    // Ten per transaction (one's writes are limited to 16 MiB).
    for (const half of [keys.slice(0, 10), keys.slice(10)]) {
      await t.mutation(anyApi.tasks.enqueueBig, { keys: half, bytes: 10, ballastBytes: 900_000 });
    }
    await runUntil(t, async () => (await completions(t)).length === 20, 60_000, 50);
    const perTask = 900_000;
    // At most what fits under the limit, plus the one a report always takes past it.
    expect(probe.maxRunning).toBeLessThanOrEqual(Math.floor(HELD_ARGS_BYTES_LIMIT / perTask) + 1);
    expect(probe.maxRunning).toBeGreaterThan(1);
    expect((await completions(t)).every((c) => c.result.kind === "success")).toBe(true);
  });
});
