// Catches drift between the hand-written `_generated/` files and the real modules and exports.
import { describe, expect, it } from "vitest";
import type { ApiFromModules, FilterApi, FunctionReference } from "convex/server";
import type { ComponentApi } from "./_generated/component.js";
import type * as config from "./config.js";
import type * as groups from "./groups.js";
import type * as inspect from "./inspect.js";
import type * as keys from "./keys.js";
import type * as lib from "./lib.js";
import type * as runners_executor from "./runners/executor.js";
import type * as schedules from "./schedules.js";
import apiSource from "./_generated/api.ts?raw";

const modules = import.meta.glob(["./**/*.ts", "!./**/*.test.ts", "!./_generated/**"], {
  eager: true,
}) as Record<string, Record<string, any>>;
const NOT_FUNCTION_MODULES = ["schema", "convex.config"];
const moduleNames = Object.keys(modules)
  .map((path) => path.replace(/^\.\//, "").replace(/\.ts$/, ""))
  .filter((name) => !name.endsWith(".test") && !NOT_FUNCTION_MODULES.includes(name))
  .sort();

describe("_generated/api.ts", () => {
  it("imports exactly the component's modules", () => {
    // codegen names a module `a/b` `a_b`, and quotes the key of a path with a slash
    const identifier = (name: string) => name.replaceAll("/", "_");
    const imported = [...apiSource.matchAll(/import type \* as (\w+) from "\.\.\/([\w/]+)\.js";/g)];
    expect(imported.map((m) => m[2]).sort()).toEqual(moduleNames);
    for (const [, ident, name] of imported) expect(ident).toBe(identifier(name));
    const listed = [...apiSource.matchAll(/^ {2}"?([\w/]+)"?: typeof (\w+);$/gm)];
    expect(listed.map((m) => m[1]).sort()).toEqual(moduleNames);
    for (const [line, name, ident] of listed) {
      expect(ident).toBe(identifier(name));
      expect(line.includes('"')).toBe(name.includes("/"));
    }
  });
});

describe("_generated/component.ts", () => {
  it("lists exactly the public functions", () => {
    const publicFns: string[] = [];
    for (const [path, exports] of Object.entries(modules)) {
      for (const [name, value] of Object.entries(exports)) {
        if (value && typeof value === "function" && value.isPublic) {
          publicFns.push(`${path.replace(/^\.\//, "").replace(/\.ts$/, "")}.${name}`);
        }
      }
    }
    expect(publicFns.sort()).toEqual([
      "config.setMaxParallelism",
      "config.update",
      "groups.cancelGroup",
      "groups.closeGroup",
      "groups.createGroup",
      "groups.groupStatus",
      "inspect.list",
      "inspect.overview",
      "inspect.stats",
      "keys.keyStatus",
      "keys.pause",
      "keys.resume",
      "keys.setKeyParallelism",
      "keys.setKeyRateLimit",
      "keys.setKeyShare",
      "lib.cancel",
      "lib.cancelAll",
      "lib.complete",
      "lib.enqueue",
      "lib.enqueueBatch",
      "lib.info",
      "lib.retry",
      "lib.status",
      "lib.statusBatch",
      "runners/executor.report",
      "schedules.get",
      "schedules.list",
      "schedules.pause",
      "schedules.resume",
      "schedules.runNow",
      "schedules.schedule",
      "schedules.unschedule",
    ]);
  });

  it("has the argument and return types of the real functions (checked by tsc)", () => {
    type Shape<T> =
      T extends FunctionReference<infer Kind, any, infer Args, infer Returns, any>
        ? { kind: Kind; args: Args; returns: Returns }
        : never;
    type Shapes<Api> = { [M in keyof Api]: { [F in keyof Api[M]]: Shape<Api[M][F]> } };
    type Real = FilterApi<
      ApiFromModules<{
        config: typeof config;
        groups: typeof groups;
        inspect: typeof inspect;
        keys: typeof keys;
        lib: typeof lib;
        "runners/executor": typeof runners_executor;
        schedules: typeof schedules;
      }>,
      FunctionReference<any, "public">
    >;
    type Equal<X, Y> =
      (<V>() => V extends X ? 1 : 2) extends <V>() => V extends Y ? 1 : 2 ? true : false;
    const same: Equal<Shapes<Real>, Shapes<ComponentApi>> = true;
    expect(same).toBe(true);
  });
});
