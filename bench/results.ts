/**
 * The record of one `npm run bench`: what was compared, on what (the commit included), and every
 * scenario's measurements on both pools (the key, rate-limit and priority scenarios on ours only),
 * the checks of keys, rate limit and priority included. docs/BENCHMARKS.md is
 * rendered from it (bench/report/), and it is saved as JSON (bench-out/latest.json) so that the
 * document can be rendered again without rerunning: `BENCH_FROM_JSON=bench-out/latest.json npm run
 * bench`.
 */
import { execSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, arch, release, totalmem, type } from "node:os";
import { dirname } from "node:path";
import type { Result, Scenario } from "./harness.js";
import type { ScheduleBenchResult } from "./schedules.js";

/** One side's measurements of one scenario: a harness result without its backend. */
export type Measured = Omit<Result, "backend">;

/** One scenario, as run on each side (a side is missing when `BENCH_SIDES` left it out, or the
 * scenario runs on ours only). */
export type ScenarioRun = { scenario: Scenario; ours?: Measured; peer?: Measured };

export type RunMeta = {
  /** When the run ended (ISO 8601). */
  date: string;
  /** The command line that made the run, `BENCH_*` variables included. */
  command: string;
  /** The commit whose component was measured, as the run started (absent in older runs). */
  commit?: string;
  versions: { ours: string; peer: string; convex: string; convexTest: string; node: string };
  machine: { cpu: string; cores: number; memoryGB: number; os: string };
  /** Wall-clock time of the whole run. */
  wallSeconds: number;
  /** The harness's virtual clock step and settle time (bench/harness.ts). */
  stepMs: number;
  settleMs: number;
  /** Other runs whose scenarios this document also shows (`mergeRuns`): one that takes long
   * (4c) may be run on its own. */
  also?: Array<{
    command: string;
    commit?: string;
    date: string;
    wallSeconds: number;
    ids: string[];
  }>;
};

/** `schedules`: scenario 10's result (bench/schedules.ts), when the run had it. */
export type BenchRun = { meta: RunMeta; scenarios: ScenarioRun[]; schedules?: ScheduleBenchResult };

/** Where `npm run bench` saves its run. */
export const RUN_JSON = "bench-out/latest.json";

/** Drops the backend (kept by the harness for inspection; not data, and large). */
export function measured(r: Result): Measured {
  const { backend, ...rest } = r;
  void backend;
  return rest;
}

function versionOf(pkg: string): string {
  const path = pkg === "." ? "package.json" : `node_modules/${pkg}/package.json`;
  return JSON.parse(readFileSync(path, "utf8")).version;
}

/** The current commit, noting uncommitted changes in src/; undefined outside a git checkout. Read
 * as a run starts: the component's modules are loaded then, whatever is committed later. */
export function sourceCommit(): string | undefined {
  const git = (args: string) =>
    execSync(`git ${args}`, { stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  try {
    const commit = git("rev-parse --short HEAD");
    return git("status --porcelain -- src") ? `${commit} with uncommitted changes in src/` : commit;
  } catch {
    return undefined;
  }
}

/** Describes this run: versions, machine, command, and `commit` (from `sourceCommit()`). */
export function runMeta(
  wallSeconds: number,
  stepMs: number,
  settleMs: number,
  commit: string | undefined,
): RunMeta {
  const env = Object.entries(process.env)
    .filter(([k]) => k.startsWith("BENCH_"))
    .map(([k, v]) => `${k}=${v} `)
    .join("");
  return {
    date: new Date().toISOString(),
    command: `${env}npm run bench`,
    commit,
    versions: {
      ours: versionOf("."),
      peer: versionOf("@convex-dev/workpool"),
      convex: versionOf("convex"),
      convexTest: versionOf("convex-test"),
      node: process.version,
    },
    machine: {
      cpu: cpus()[0]?.model.trim() ?? "unknown",
      cores: cpus().length,
      memoryGB: Math.round(totalmem() / 2 ** 30),
      os: `${type()} ${release()} ${arch()}`,
    },
    wallSeconds,
    stepMs,
    settleMs,
  };
}

// Counters hold Maps (calls and usage per function): JSON has no Maps, so they are written as
// `{ "$map": [[key, value], ...] }` and read back as Maps.
const replacer = (_key: string, value: unknown) =>
  value instanceof Map ? { $map: [...value] } : value;
const reviver = (_key: string, value: any) =>
  value !== null && typeof value === "object" && Array.isArray(value.$map)
    ? new Map(value.$map)
    : value;

export function saveRun(path: string, run: BenchRun): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(run, replacer) + "\n");
}

export function loadRun(path: string): BenchRun {
  return JSON.parse(readFileSync(path, "utf8"), reviver) as BenchRun;
}

/** "1a" < "1b" < "2" < "4b" < "4c" < "10": scenario ids by number, then by letter. */
export function compareScenarioIds(a: string, b: string): number {
  const [na, nb] = [parseInt(a, 10), parseInt(b, 10)];
  return na !== nb ? na - nb : a.localeCompare(b);
}

/**
 * One document from several runs (`BENCH_FROM_JSON=a.json,b.json`): every scenario of the first,
 * then those of each later run that no earlier one has, in scenario order; the first run's
 * description, with each later one's listed under `also`. The runs must share the harness's
 * settings (step, settle), or their figures would not compare.
 */
export function mergeRuns(runs: BenchRun[]): BenchRun {
  const [first, ...rest] = runs;
  const scenarios = [...first.scenarios];
  const also: NonNullable<RunMeta["also"]> = [...(first.meta.also ?? [])];
  for (const run of rest) {
    if (run.meta.stepMs !== first.meta.stepMs || run.meta.settleMs !== first.meta.settleMs) {
      throw new Error(`runs with different harness settings cannot be merged: ${run.meta.command}`);
    }
    const added = run.scenarios.filter(
      (s) => !scenarios.some((t) => t.scenario.id === s.scenario.id),
    );
    scenarios.push(...added);
    const { command, commit, date, wallSeconds } = run.meta;
    also.push({ command, commit, date, wallSeconds, ids: added.map((s) => s.scenario.id) });
  }
  scenarios.sort((a, b) => compareScenarioIds(a.scenario.id, b.scenario.id));
  // Scenario 10 from the first run that has it.
  const schedules = runs.find((run) => run.schedules !== undefined)?.schedules;
  return {
    meta: { ...first.meta, ...(also.length ? { also } : {}) },
    scenarios,
    ...(schedules !== undefined ? { schedules } : {}),
  };
}
