/**
 * Merging bench runs (results.ts, `mergeRuns`): one document from a full run and a run of the
 * opt-in 50,000-job scenario, in scenario order, with the second run's description kept.
 */
import { describe, expect, it } from "vitest";
import { compareScenarioIds, mergeRuns, type BenchRun, type RunMeta } from "./results.js";

const meta = (command: string, over: Partial<RunMeta> = {}): RunMeta => ({
  date: "2026-11-23T00:00:00.000Z",
  command,
  commit: "abc1234",
  versions: { ours: "0.1.0", peer: "0.4.12", convex: "1", convexTest: "0", node: "20" },
  machine: { cpu: "cpu", cores: 2, memoryGB: 24, os: "linux" },
  wallSeconds: 100,
  stepMs: 10,
  settleMs: 5000,
  ...over,
});

/** A run of the given scenario ids (only their ids matter here). */
const run = (command: string, ids: string[], over: Partial<RunMeta> = {}): BenchRun => ({
  meta: meta(command, over),
  scenarios: ids.map((id) => ({ scenario: { id } as any })),
});

describe("mergeRuns", () => {
  it("orders scenario ids by number, then letter", () => {
    expect(["5", "4c", "1b", "10", "4a", "1a"].sort(compareScenarioIds)).toEqual([
      "1a",
      "1b",
      "4a",
      "4c",
      "5",
      "10",
    ]);
  });

  it("adds a later run's scenarios in order, and lists that run", () => {
    const merged = mergeRuns([
      run("npm run bench", ["1a", "4a", "4b", "5"]),
      run("BENCH_ONLY=4c BENCH_LARGE=1 npm run bench", ["4c", "4b"], { wallSeconds: 900 }),
    ]);
    expect(merged.scenarios.map((s) => s.scenario.id)).toEqual(["1a", "4a", "4b", "4c", "5"]);
    expect(merged.meta.command).toBe("npm run bench");
    expect(merged.meta.also).toEqual([
      {
        command: "BENCH_ONLY=4c BENCH_LARGE=1 npm run bench",
        commit: "abc1234",
        date: "2026-11-23T00:00:00.000Z",
        wallSeconds: 900,
        ids: ["4c"],
      },
    ]);
  });

  it("keeps the first run's figures for a scenario both ran", () => {
    const first = run("a", ["4b"]);
    const second = run("b", ["4b"]);
    expect(mergeRuns([first, second]).scenarios[0]).toBe(first.scenarios[0]);
  });

  it("refuses runs made with different harness settings", () => {
    expect(() => mergeRuns([run("a", ["1a"]), run("b", ["4c"], { stepMs: 20 })])).toThrow(
      /different harness settings/,
    );
  });
});
