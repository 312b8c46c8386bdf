/**
 * `convex-workpool/test`, the helper apps use in their own tests: registering the pool (and the log
 * level it sets for tests), and loading an app's modules ahead of a stepped fake clock.
 */
import { convexTest, defineTestApp } from "convex-test";
import type { FunctionReturnType } from "convex/server";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";
import type { ComponentApi } from "../src/component/_generated/component.js";
import { unconfiguredLogLevel } from "../src/component/model/logging.js";
import workpoolTest, { loadModules, register, runPool } from "../src/test.js";
import { probe } from "./app/probe.js";
import schema from "./app/schema.js";
import { appModules, completions, enqueue, info, setup } from "./helpers.js";

const backend = () => convexTest(schema, appModules);

afterEach(() => {
  vi.restoreAllMocks();
});

describe("register", () => {
  it("makes pools without a configured level log warnings and errors only, by default", () => {
    register(backend(), "workpool", { logLevel: "DEBUG" });
    register(backend());
    expect(unconfiguredLogLevel()).toBe("WARN");
  });

  it("takes the level for tests that want the reports", () => {
    register(backend(), "workpool", { logLevel: "REPORT" });
    expect(unconfiguredLogLevel()).toBe("REPORT");
  });

  it("returns the pool's API under its name, whose references call the pool", async () => {
    const t = backend();
    const pool = register(t, "emailPool");
    expectTypeOf(pool).toEqualTypeOf<ComponentApi>();
    expect(await t.query(pool.inspect.stats, {})).toMatchObject({ pending: 0, running: 0 });
  });

  it("lets convex-test's defineTestApp install the pool and type its API", async () => {
    const app = defineTestApp({ schema, components: { emailPool: workpoolTest } });
    const { createTest } = app.defineModules({});
    const stats = app.components.emailPool.inspect.stats;
    expectTypeOf<FunctionReturnType<typeof stats>>().toEqualTypeOf<
      FunctionReturnType<ComponentApi["inspect"]["stats"]>
    >();
    const t = createTest();
    expect(await t.query(stats, {})).toMatchObject({ pending: 0, running: 0 });
  });

  it("rejects an unknown logLevel, naming options.logLevel, and registers nothing", () => {
    const t = backend();
    const registerComponent = vi.spyOn(t, "registerComponent");
    expect(() => register(t, "workpool", { logLevel: "LOUD" as never })).toThrow(
      /options\.logLevel.*must be one of DEBUG, TRACE, INFO, REPORT, WARN, ERROR/,
    );
    expect(registerComponent).not.toHaveBeenCalled();
  });
});

describe("loadModules", () => {
  it("imports every function module, and neither convex.config.ts nor test files", async () => {
    const imported: string[] = [];
    const module = (path: string) => async () => {
      imported.push(path);
      return {};
    };
    const paths = [
      "./emails.ts",
      "./nested/jobs.ts",
      "./_generated/api.ts",
      "./convex.config.ts",
      "./emails.test.ts",
      "./nested/jobs.spec.ts",
    ];
    await loadModules(Object.fromEntries(paths.map((path) => [path, module(path)])));
    expect(imported.sort()).toEqual(["./_generated/api.ts", "./emails.ts", "./nested/jobs.ts"]);
  });
});

describe("runPool", () => {
  const retryingPool = {
    poolOptions: {
      retryActionsByDefault: true,
      defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 1000, base: 2 },
    },
  };

  it("runs the pool for exactly the time asked: a 1 s backoff measures about 1 s, and status is kept", async () => {
    const t = setup();
    const startedAt = Date.now();
    const [id] = await enqueue(
      t,
      "action",
      [{ key: "flaky", failTimes: 1, value: 1 }],
      retryingPool,
    );
    await runPool(vi.advanceTimersByTimeAsync, 5_000);
    expect(Date.now() - startedAt).toBe(5_000);
    const [first, second] = probe.starts.get("flaky")!;
    // the backoff is 1 s with ±50 % jitter, plus at most a segment or two of start lag
    expect(second - first).toBeGreaterThanOrEqual(500);
    expect(second - first).toBeLessThan(1_800);
    expect(await completions(t)).toHaveLength(1);
    expect(await info(t, id)).toMatchObject({ state: "finished", previousAttempts: 2 });
  });

  it("leaves a job mid-backoff when the time asked ends before its retry", async () => {
    const t = setup();
    const [id] = await enqueue(t, "action", [{ key: "slow", failTimes: 2 }], {
      poolOptions: {
        retryActionsByDefault: true,
        defaultRetryBehavior: { maxAttempts: 3, initialBackoffMs: 60_000, base: 2 },
      },
    });
    await runPool(vi.advanceTimersByTimeAsync, 2_000, { stepMs: 20 });
    expect(probe.attempts.get("slow")).toBe(1);
    expect(await info(t, id)).toMatchObject({ state: "pending", previousAttempts: 1 });
  });

  it("rejects bad input, naming the argument", async () => {
    const advance = vi.fn(async () => {});
    await expect(runPool(advance, -1)).rejects.toThrow(/ms.*finite number ≥ 0/);
    await expect(runPool(advance, Number.NaN)).rejects.toThrow(/ms.*finite number ≥ 0/);
    await expect(runPool(advance, 100, { stepMs: 0 })).rejects.toThrow(/options\.stepMs/);
    await expect(runPool("soon" as never, 100)).rejects.toThrow(/advanceTimersByTime.*function/);
    expect(advance).not.toHaveBeenCalled();
  });
});
