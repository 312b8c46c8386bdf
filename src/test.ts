/**
 * For apps' own tests on convex-test: registers the component with a `convexTest` instance,
 * `import workpool from "convex-workpool/test"; workpool.register(t, "emailPool");`, and loads the
 * app's modules ahead for tests that step a fake clock. Owns nothing else; never used by a
 * deployment.
 */
/// <reference types="vite/client" />
import type { TestConvex } from "convex-test";
import type { GenericSchema, SchemaDefinition } from "convex/server";
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
 * @param t the test instance, from `convexTest(...)`.
 * @param name the name the app installs the component under (default "workpool").
 * @param options `logLevel`: see RegisterOptions.
 */
export function register(
  t: TestConvex<SchemaDefinition<GenericSchema, boolean>>,
  name: string = "workpool",
  options: RegisterOptions = {},
): void {
  const levels = vLogLevel.members.map((member) => member.value);
  const level = options.logLevel ?? TEST_LOG_LEVEL;
  if (!levels.includes(level)) {
    invalidArgument("options.logLevel", `must be one of ${levels.join(", ")}`, level);
  }
  setUnconfiguredLogLevel(level);
  t.registerComponent(name, schema, modules);
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

export default { register, loadModules, schema, modules };
