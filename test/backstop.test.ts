/**
 * The backstop (mainLoop/watchdog.ts `restartPass`, main.ts `narrowPass`): a loop pass that fails
 * at commit whatever it does — a write over a Convex limit cannot be caught inside the pass — must
 * not stop the pool. The watchdog restarts the loop with narrow passes, one stage each, the stage
 * that failed split (completions: one outcome each); when the same outcome fails its narrow pass
 * twice with a limit error, the next one sets its job aside as failed, with the error, and the
 * loop goes on; any other stage failing so is skipped, and the other stages go on.
 *
 * The poisoned outcome is a `pendingCompletion` row as a worker of 7683cb6 filed it: a return value
 * 15 arrays deep kept inline, which the loop's patch of the job's `work` row (two levels further
 * down) cannot commit on the deployment-like backend, which refuses writes past 16 levels as Convex
 * does. (Workers now file such a value in a payload row: model/valueMeasure.ts.)
 */
import { beforeAll, describe, expect, it, vi } from "vitest";
import { loadModules } from "../src/test.js";
import { segmentOf } from "../src/component/model/segments.js";
import { nestedArrays } from "./app/jobs.js";
import { setupDeployment } from "./deployment.js";
import {
  appModules,
  completions,
  enqueue,
  inComponent,
  info,
  interceptSyscalls,
} from "./helpers.js";

beforeAll(async () => await loadModules(appModules));

describe("the backstop for a pass that fails at commit", () => {
  it("sets aside the job whose outcome failed the passes twice, with the reason, and goes on", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const { t, deployment } = await setupDeployment({ seed: 11, maxStartDelayMs: 0 });
    // Two long actions, running when the poisoned outcome arrives for the first.
    const [poisoned, other] = await enqueue(t, "action", [
      { key: "poisoned", ms: 120_000 },
      { key: "other", ms: 10_000 },
    ]);
    await deployment.run(2_000, 100);
    expect((await info(t, poisoned)).state).toBe("running");
    await inComponent(t, async (ctx) => {
      await ctx.db.insert("pendingCompletion", {
        workId: poisoned,
        attempt: 1,
        result: { kind: "success", returnValue: nestedArrays(15) },
        segment: segmentOf(Date.now()) + 1,
      });
    });
    // The loop meets it at its next pass (the other action's report wakes it, at 10 s).
    await deployment.run(15_000, 100);
    const failed = deployment.failures.filter((f) => /main/.test(f.fn));
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0].error).toMatch(/too nested.*"work"/);

    await deployment.run(180_000, 100);
    const [later] = await enqueue(t, "mutation", [{ key: "later" }]);
    await deployment.run(10_000, 100);
    const byId = new Map((await completions(t)).map((c) => [c.workId, c]));
    expect(byId.get(poisoned)?.result).toEqual({
      kind: "failed",
      error: expect.stringMatching(
        // The reason is the error the scheduler recorded for the failed pass: a limit.
        /^workpool: set aside: the loop failed twice on this job's outcome \(success\): .*too nested/,
      ),
    });
    expect(byId.get(other)?.result).toEqual({ kind: "success", returnValue: "other" });
    expect(byId.get(later)?.result).toEqual({ kind: "success", returnValue: "later" });
    // Set aside once: the action's own report, when it comes, is stale.
    expect([...byId.values()].filter((c) => c.workId === poisoned)).toHaveLength(1);
  }, 60_000);

  it("skips a stage that fails every pass with a limit error, and every job still finishes", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const narrowPasses: Array<{ stage: string; failed?: string; skip: boolean }> = [];
    vi.spyOn(console, "warn").mockImplementation((line: string) => {
      const parsed = JSON.parse(line);
      if (parsed.event === "narrowPass") narrowPasses.push(parsed);
    });
    const { t, deployment } = await setupDeployment({ seed: 12, maxStartDelayMs: 0 });
    // Every schedule of the sweeper by the loop meets a limit (as if the pass had scheduled too
    // many functions already): the sweep stage fails every pass it has something to sweep in.
    let refused = 0;
    interceptSyscalls(async (op, jsonArgs, next) => {
      const fn: string | undefined = (deployment as any).currentTx()?.fn;
      if (
        op === "1.0/schedule" &&
        /main:main$/.test(fn ?? "") &&
        /sweep(\.js)?:sweep/.test(jsonArgs)
      ) {
        refused++;
        throw new Error(
          "Scheduled too many functions in a single function execution (limit: 1000). " +
            "This is a Convex limit: https://docs.convex.dev/production/state/limits",
        );
      }
      return await next(op, jsonArgs);
    });
    const poolOptions = { statusTtl: 1_000 };
    const first = await enqueue(
      t,
      "mutation",
      Array.from({ length: 20 }, (_, i) => ({ key: `a${i}` })),
      { batch: true, poolOptions },
    );
    await deployment.run(20_000, 100);
    const later = await enqueue(
      t,
      "mutation",
      Array.from({ length: 20 }, (_, i) => ({ key: `b${i}` })),
      { batch: true, poolOptions },
    );
    await deployment.run(240_000, 200);
    const failedInSweep = deployment.failures.filter((f) => /main/.test(f.fn));
    expect(refused).toBeGreaterThan(0);
    expect(failedInSweep.length).toBeGreaterThan(0);
    // The watchdog read the stage from the failed pass's error: the chain split the sweep stage
    // alone, which failed twice with a limit error and was skipped.
    expect(narrowPasses).toContainEqual(
      expect.objectContaining({ stage: "completions", failed: "sweep" }),
    );
    expect(narrowPasses).toContainEqual(expect.objectContaining({ stage: "sweep", skip: true }));
    const delivered = new Map((await completions(t)).map((c) => [c.workId, c.result]));
    for (const id of [...first, ...later]) {
      expect(delivered.get(id)).toEqual({ kind: "success", returnValue: expect.any(String) });
    }
  }, 120_000);
});
