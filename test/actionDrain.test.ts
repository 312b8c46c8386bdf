/**
 * Draining a pool of action jobs in tests: no timer of the pool decides an action job's outcome,
 * so `t.finishAllScheduledFunctions(vi.runAllTimers)` — which fires every timer at once, the
 * pool's and the actions' own — and the `/test` helper's `runPool` both run actions that await
 * timers, started together (one action runner), to success.
 */
import { describe, expect, it, vi } from "vitest";
import { runPool } from "../src/test.js";
import { completions, enqueue, setup } from "./helpers.js";

/** `n` actions that each await a 100 ms timer, enqueued together. */
const timedActions = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ key: `t${i}`, ms: 100, value: i }));

async function expectAllSucceeded(t: ReturnType<typeof setup>, n: number): Promise<void> {
  const done = await completions(t);
  expect(done).toHaveLength(n);
  for (const { result } of done) expect(result.kind).toBe("success");
  expect(done.map(({ result }) => result.returnValue).sort((a, b) => a - b)).toEqual(
    Array.from({ length: n }, (_, i) => i),
  );
}

describe("draining action jobs that await timers", () => {
  for (const n of [2, 40]) {
    it(`finishAllScheduledFunctions(vi.runAllTimers) runs ${n} started together to success`, async () => {
      const t = setup();
      await enqueue(t, "action", timedActions(n), { batch: true });
      await t.finishAllScheduledFunctions(vi.runAllTimers, 1_000);
      await expectAllSucceeded(t, n);
    });
  }

  it("runPool runs them to success too", async () => {
    const t = setup();
    await enqueue(t, "action", timedActions(10), { batch: true });
    await runPool(vi.advanceTimersByTimeAsync, 2_000);
    await expectAllSucceeded(t, 10);
  });
});
