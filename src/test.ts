/**
 * For apps' own tests on convex-test: registers the component with a `convexTest` instance,
 * `import workpool from "convex-workpool/test"; workpool.register(t, "emailPool");`, loads the
 * app's modules ahead for tests that step a fake clock, and runs the pool for a stretch of virtual
 * time (`runPool`). Owns nothing else; never used by a deployment, and imports no test runner (the
 * app passes its own timer-advance function).
 */
/// <reference types="vite/client" />
import type { TestConvex } from "convex-test";
import { componentsGeneric, type GenericSchema, type SchemaDefinition } from "convex/server";
import type { ComponentApi } from "./component/_generated/component.js";
import { setUnconfiguredLogLevel } from "./component/model/logging.js";
import { invalidArgument } from "./component/model/errors.js";
import { vLogLevel, type LogLevel } from "./component/model/validators.js";
import schema from "./component/schema.js";

// Loaded eagerly, so that a test whose clock is stepped with fake timers alone (no real I/O between
// steps) still runs the pool's functions: a lazy import would wait for a real event-loop turn.
const loaded = import.meta.glob(["./component/**/*.ts", "!./component/**/*.test.ts"], {
  eager: true,
});
const modules: Record<string, () => Promise<unknown>> = Object.fromEntries(
  Object.entries(loaded).map(([path, mod]) => [path, () => Promise.resolve(mod)]),
);

export type RegisterOptions = {
  /**
   * The level pools log at in this test file when their options set no `logLevel` (default
   * "WARN": warnings and errors only, no periodic reports). A pool whose options set one uses it.
   */
  logLevel?: LogLevel;
};

/** Where tests log by default: only what needs a look. */
const TEST_LOG_LEVEL: LogLevel = "WARN";

/**
 * Registers the pool with a test instance, synchronously, and returns its API (what
 * `components.<name>` is in the app), so that convex-test's `defineTestApp({ schema, components:
 * { workpool } })` types `app.components.workpool`.
 * @param t the test instance, from `convexTest(...)` (or an app's `createTest()`).
 * @param name the name the app installs the component under (default "workpool").
 * @param options `logLevel`: see RegisterOptions.
 */
export function register<Schema extends SchemaDefinition<GenericSchema, boolean>>(
  t: TestConvex<Schema>,
  name: string = "workpool",
  options: RegisterOptions = {},
): ComponentApi {
  const levels = vLogLevel.members.map((member) => member.value);
  const level = options.logLevel ?? TEST_LOG_LEVEL;
  if (!levels.includes(level)) {
    invalidArgument("options.logLevel", `must be one of ${levels.join(", ")}`, level);
  }
  setUnconfiguredLogLevel(level);
  // convex-test before 0.0.70 returns nothing here; the references are the same either way.
  t.registerComponent(name, schema, modules);
  return (componentsGeneric() as Record<string, unknown>)[name] as ComponentApi;
}

/** Convex's rule for what is not a function module: a file name with more than one dot
 * (`convex.config.ts`, which only runs in a deployment, and test files, which would register their
 * tests again). */
const NOT_A_FUNCTION_MODULE = /[^/]*\.[^/]*\.[^/]*$/;

/**
 * Imports the app's function modules now (all but `convex.config.ts` and test files). convex-test
 * imports a module the first time one of its functions runs, and that import needs a real turn of
 * the event loop — which a clock stepped only with `vi.advanceTimersByTimeAsync` never gives, so a
 * job whose module was not loaded yet would wait until the test ends. Call once per test file (in
 * `beforeAll`) when stepping the clock that way; `finishAllScheduledFunctions` does not need it.
 * The pool's own modules are always loaded.
 * @param modules the same map given to `convexTest`, from `import.meta.glob`.
 */
export async function loadModules(modules: Record<string, () => Promise<unknown>>): Promise<void> {
  const load = Object.entries(modules).filter(([path]) => !NOT_A_FUNCTION_MODULE.test(path));
  await Promise.all(load.map(([, importModule]) => importModule()));
}

/** The real `setTimeout`, kept at import (before a test fakes timers): one real turn of the event
 * loop after each step lets convex-test import a module a scheduled function needs. */
const realSetTimeout = globalThis.setTimeout;

/** How far `runPool` moves the clock per step unless told: half a segment of the loop (100 ms), so
 * that each pass, worker and report runs close to its time and a 1 s backoff measures 1 s. */
export const RUN_POOL_STEP_MS = 50;

export type RunPoolOptions = {
  /** The clock moves this far per step (default RUN_POOL_STEP_MS): smaller is more exact, slower. */
  stepMs?: number;
};

/**
 * Runs the pool (and everything else scheduled) for `ms` of virtual time, in small steps, so that
 * jobs start, run, retry and report as they would in that time — and no further. Unlike
 * `t.finishAllScheduledFunctions(vi.runAllTimers)`, which jumps the clock past every timer (a day
 * and more: past the statusTtl sweep, after which `info` is null and `retry` is refused), the clock
 * ends exactly `ms` later.
 *
 * ```ts
 * await workpool.runPool(vi.advanceTimersByTimeAsync, 5_000); // five seconds of the pool's life
 * ```
 * @param advanceTimersByTime your test runner's async timer advance (vitest:
 *   `vi.advanceTimersByTimeAsync`); fake timers must be on.
 * @param ms how much virtual time to run, in milliseconds (a finite number ≥ 0).
 */
export async function runPool(
  advanceTimersByTime: (ms: number) => Promise<unknown>,
  ms: number,
  options: RunPoolOptions = {},
): Promise<void> {
  if (typeof advanceTimersByTime !== "function") {
    invalidArgument(
      "advanceTimersByTime",
      "must be a function such as vi.advanceTimersByTimeAsync",
      advanceTimersByTime,
    );
  }
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    invalidArgument("ms", "must be a finite number ≥ 0", ms);
  }
  const stepMs = options.stepMs ?? RUN_POOL_STEP_MS;
  if (typeof stepMs !== "number" || !Number.isFinite(stepMs) || stepMs < 1) {
    invalidArgument("options.stepMs", "must be a finite number ≥ 1", stepMs);
  }
  for (let done = 0; done < ms;) {
    const step = Math.min(stepMs, ms - done);
    await advanceTimersByTime(step);
    await new Promise<void>((resolve) => realSetTimeout(resolve, 0));
    done += step;
  }
}

export default { register, loadModules, runPool, schema, modules };
