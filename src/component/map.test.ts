// The map of the house (README.md in this folder) names every table of the schema and every module.
import { describe, expect, it } from "vitest";
import schema from "./schema.js";
import readme from "./README.md?raw";

const modules = Object.keys(
  import.meta.glob(["./**/*.ts", "!./**/*.test.ts", "!./_generated/**"]),
).map((path) => path.replace(/^\.\//, ""));

/** The names README.md shows as code in its table rows' first cell. */
const firstCells = new Set([...readme.matchAll(/^\| `([^`]+)`/gm)].map(([, name]) => name));

describe("src/component/README.md", () => {
  it("lists every table of schema.ts in its who-writes-what table", () => {
    const tables = Object.keys(schema.tables);
    expect(tables.length).toBeGreaterThan(10);
    expect(tables.filter((table) => !firstCells.has(table))).toEqual([]);
  });

  it("lists every module of the component in its module tables", () => {
    expect(modules).toContain("mainLoop/main.ts");
    expect(modules.filter((module) => !firstCells.has(module))).toEqual([]);
  });

  it("lists nothing that is not there", () => {
    const known = new Set([...Object.keys(schema.tables), ...modules]);
    expect([...firstCells].filter((name) => !known.has(name))).toEqual([]);
  });
});
