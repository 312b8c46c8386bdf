/**
 * Executors that fail or misbehave (API-EXTENSIONS section 8, issue 30): whatever an executor does,
 * no task is held forever, none is dropped unrun, and none holds a slot for good.
 */
import { anyApi } from "convex/server";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { TAKE_BACKS_FREE } from "../src/component/mainLoop/recovery.js";
import { brokenRuns } from "./app/brokenExecutors.js";
import { completions, enqueue, failSchedules, info, runUntil, setup } from "./helpers.js";

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
