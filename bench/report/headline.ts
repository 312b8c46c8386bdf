/**
 * "At a glance", the headline of docs/BENCHMARKS.md: for every scenario run on both sides, the
 * headline figures, ours vs the peer, and a one-line verdict (better, worse or on par, and which of
 * our modules a difference comes from). Owns the headline columns (`HEADLINES`) and what "on par"
 * means (`PAR`). It never shows a scenario the peer did not run (keys, rate limit, priority: their
 * own modules) and never renders a full table (bench/report/tables.ts).
 */
import type { Usage } from "../instrument.js";
import type { BenchRun, Measured, ScenarioRun } from "../results.js";
import {
  docsReadPerJob,
  isLoopFunction,
  docsWrittenPerJob,
  kbWrittenPerJob,
  lagP50,
  loopDocsReadPerJob,
  loopDocsWrittenPerJob,
  loopKbWrittenPerJob,
  perJob,
  poolCallsPerJob,
  utilization,
} from "./figures.js";
import { fmt, fmtMs, fmtRatio, fmtTimes, ratioOf, shortName, table, vsPeer } from "./format.js";

/** Differences smaller than this (5 %) are called on par. */
const PAR = 0.05;

export type Headline = {
  /** Column header. */
  column: string;
  get: (r: Measured) => number;
  show: (n: number) => string;
  /** Which way is better. */
  better: "lower" | "higher";
  /** A virtual time: differences within one step of the virtual clock are on par. */
  time?: boolean;
  /** How the verdict names it: "[41 % fewer] pool calls", "[1.30× the] bytes written". */
  noun: string;
  /** The words for ours below and above the peer: "fewer" / "more", "shorter" / "longer". */
  less: string;
  more: string;
  /** Per-function figures (per job, in `unit`), to say where a difference comes from. */
  byFunction?: { unit: string; get: (r: Measured) => Map<string, number> };
};

const usageByFunction = (unit: string, field: keyof Usage, scale = 1) => ({
  unit,
  get: (r: Measured) =>
    new Map(
      [...r.counters.usageByFunction].map(([k, u]) => [k, perJob(r, u[field]) / scale] as const),
    ),
});

export const HEADLINES: Headline[] = [
  {
    column: "pool function calls / job",
    get: poolCallsPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "pool function calls",
    less: "fewer",
    more: "more",
    byFunction: {
      unit: "calls",
      get: (r) => new Map([...r.counters.byFunction].map(([k, n]) => [k, perJob(r, n)])),
    },
  },
  {
    column: "documents read / job",
    get: docsReadPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "documents read",
    less: "fewer",
    more: "more",
    byFunction: usageByFunction("documents", "docsRead"),
  },
  {
    column: "documents written / job",
    get: docsWrittenPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "documents written",
    less: "fewer",
    more: "more",
    byFunction: usageByFunction("documents", "docsWritten"),
  },
  {
    column: "KB written / job",
    get: kbWrittenPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "bytes written",
    less: "fewer",
    more: "more",
    byFunction: usageByFunction("KB", "bytesWritten", 1000),
  },
  // The loop's own share (figures.ts `isLoopFunction`): what a single loop's throughput depends on.
  {
    column: "loop: documents read / job",
    get: loopDocsReadPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "documents the loop reads",
    less: "fewer",
    more: "more",
  },
  {
    column: "loop: documents written / job",
    get: loopDocsWrittenPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "documents the loop writes",
    less: "fewer",
    more: "more",
  },
  {
    column: "loop: KB written / job",
    get: loopKbWrittenPerJob,
    show: (n) => fmt(n),
    better: "lower",
    noun: "bytes the loop writes",
    less: "fewer",
    more: "more",
  },
  {
    column: "start lag p50",
    get: lagP50,
    show: fmtMs,
    better: "lower",
    time: true,
    noun: "start lag",
    less: "shorter",
    more: "longer",
  },
  {
    column: "makespan",
    get: (r) => r.makespanMs,
    show: fmtMs,
    better: "lower",
    time: true,
    noun: "makespan",
    less: "shorter",
    more: "longer",
  },
  {
    column: "utilization",
    get: utilization,
    show: (n) => fmt(n, 3),
    better: "higher",
    noun: "utilization",
    less: "lower",
    more: "higher",
  },
];

/** "3.21 vs 5.43 (0.59×)": `a` (ours) vs `b` (the peer, or our baseline run). */
export function glanceCell(h: Pick<Headline, "get" | "show">, a?: Measured, b?: Measured): string {
  const o = a && h.get(a);
  const p = b && h.get(b);
  const show = (n: number | undefined) => (n === undefined ? "not run" : h.show(n));
  if (o !== undefined && p !== undefined && Number.isNaN(o) && Number.isNaN(p)) return "—";
  return `${show(o)} vs ${show(p)} (${fmtRatio(ratioOf(o, p))}×)`;
}

/**
 * The pool module (`lib`, `complete`, ...) that accounts for most of a difference, when one
 * does: "mostly our `lib` module: 0.80 vs the peer's 0.27 KB / job". Modules are compared by
 * name (functions are keyed `component:module:function (type)`), except the loops, compared as
 * one (figures.ts `isLoopFunction`: ours `mainLoop/main`, the peer's `loop` and batch worker);
 * the app's functions are the same on both sides and left out.
 */
function mostOfDifference(h: Headline, ours: Measured, peer: Measured): string {
  const by = h.byFunction;
  if (!by) return "";
  const byModule = (r: Measured) => {
    const m = new Map<string, number>();
    for (const [key, n] of by.get(r)) {
      const [component, name] = key.split(":");
      const module = isLoopFunction(key) ? LOOP : name;
      if (component !== "app") m.set(module, (m.get(module) ?? 0) + n);
    }
    return m;
  };
  const o = byModule(ours);
  const p = byModule(peer);
  const excess = h.get(ours) - h.get(peer);
  let top: { module: string; diff: number } | undefined;
  for (const module of new Set([...o.keys(), ...p.keys()])) {
    const diff = (o.get(module) ?? 0) - (p.get(module) ?? 0);
    if (!top || diff > top.diff) top = { module, diff };
  }
  if (!top || excess <= 0 || top.diff < excess / 2) return "";
  const theirs = p.get(top.module);
  const what = top.module === LOOP ? "loop" : `\`${top.module}\` module`;
  const mine = `mostly our ${what}: ${fmt(o.get(top.module) ?? 0)}`;
  return theirs === undefined
    ? ` (${mine} ${by.unit} / job, a module the peer does not have)`
    : ` (${mine} vs the peer's ${fmt(theirs)} ${by.unit} / job)`;
}

/** The name the loops' functions are compared under (see `mostOfDifference`). */
const LOOP = "(loop)";

/** How ours compares, ratio `x` = ours / peer: "43 % fewer ...", "2.6× fewer ...", "1.30× the ...". */
function change(h: Headline, x: number): string {
  const pct = `${Math.round(Math.abs(x - 1) * 100)} %`;
  if (x > 1)
    return x < 1.2
      ? `${pct} ${h.more} ${h.noun}`
      : `${x >= 2 ? fmtTimes(x) : fmt(x)}× the ${h.noun}`;
  return x > 0.5 ? `${pct} ${h.less} ${h.noun}` : `${fmtTimes(1 / x)}× ${h.less} ${h.noun}`;
}

/** A plain one-line verdict from the headline ratios (`stepMs`: the virtual clock's step). */
export function verdict(run: ScenarioRun, stepMs: number): string {
  const { ours, peer } = run;
  if (!ours || !peer) return "one side not run";
  const better: string[] = [];
  const worse: string[] = [];
  const par: string[] = [];
  for (const h of HEADLINES) {
    const [o, p] = [h.get(ours), h.get(peer)];
    const x = ratioOf(o, p);
    if (x === undefined) continue;
    if (Math.abs(x - 1) < PAR || (h.time && Math.abs(o - p) <= stepMs)) par.push(h.noun);
    else if (x < 1 === (h.better === "lower")) better.push(change(h, x));
    else worse.push(change(h, x) + mostOfDifference(h, ours, peer));
  }
  const lead =
    worse.length === 0
      ? better.length
        ? "**Ours better**"
        : "**On par**"
      : better.length
        ? "**Mixed**"
        : "**Ours worse**";
  const parts = [
    better.length ? better.join(", ") : "",
    worse.length ? `worse: ${worse.join(", ")}` : "",
    par.length ? `on par: ${par.join(", ")}` : "",
  ].filter(Boolean);
  return `${lead}: ${parts.join("; ")}.`;
}

export function glanceTable(run: BenchRun): string {
  if (!run.scenarios.some((s) => vsPeer(s.scenario))) return "No scenario ran on both sides.";
  return table(
    ["scenario", ...HEADLINES.map((h) => h.column), "verdict"],
    ["---", ...HEADLINES.map(() => "---:"), "---"],
    run.scenarios
      .filter((s) => vsPeer(s.scenario))
      .map((s) => [
        shortName(s.scenario),
        ...HEADLINES.map((h) => glanceCell(h, s.ours, s.peer)),
        verdict(s, run.meta.stepMs),
      ]),
  );
}

export function glanceKey(run: BenchRun, whereItGoes: string): string {
  return `Each cell is **ours vs peer (ours ÷ peer)**. Below 1 is better for us, except utilization,
where higher is better. Costs are per job and include the app's own share (the same on both
sides), except the loop's columns: the loop's own functions alone (ours \`mainLoop/main:main\`;
the peer's \`loop\` module and its batch worker, \`peer/batchWorker\`, which runs it). Differences
under ${PAR * 100} %, or for times within one ${run.meta.stepMs} ms step of the virtual clock, are
called on par. Where ours costs more, the verdict names the pool module most of the difference
comes from; ${whereItGoes} breaks both pools down per function.`;
}
