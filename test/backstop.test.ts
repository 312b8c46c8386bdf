/**
 * The backstop (mainLoop/watchdog.ts `restartPass`, main.ts `narrowPass`): a loop pass that fails
 * at commit whatever it does — a write over a Convex limit cannot be caught inside the pass — must
 * not stop the pool. The watchdog restarts the loop with narrow passes, one outcome each; when the
 * same outcome fails its narrow pass twice, the next one sets its job aside as failed, with the
 * error, and the loop goes on.
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
import { appModules, completions, enqueue, inComponent, info } from "./helpers.js";

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
        // (The reason is the error the scheduler recorded for the failed pass; convex-test keeps
        // none, so the backend's is generic here.)
        /^workpool: set aside: the loop failed twice on this job's outcome \(success\): /,
      ),
    });
    expect(byId.get(other)?.result).toEqual({ kind: "success", returnValue: "other" });
    expect(byId.get(later)?.result).toEqual({ kind: "success", returnValue: "later" });
    // Set aside once: the action's own report, when it comes, is stale.
    expect([...byId.values()].filter((c) => c.workId === poisoned)).toHaveLength(1);
  }, 60_000);
});
