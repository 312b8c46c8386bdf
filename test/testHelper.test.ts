/**
 * `convex-workpool/test`, the helper apps use in their own tests: registering the pool (and the log
 * level it sets for tests), and loading an app's modules ahead of a stepped fake clock.
 */
import { convexTest } from "convex-test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { unconfiguredLogLevel } from "../src/component/model/logging.js";
import { loadModules, register } from "../src/test.js";
import schema from "./app/schema.js";
import { appModules } from "./helpers.js";

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
