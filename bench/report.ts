/**
 * Renders a bench run (bench/results.ts) as docs/BENCHMARKS.md and as the text `npm run bench`
 * prints: pure functions from measurements to markdown, no I/O. The document is written for someone
 * choosing between the two packages: what was compared, a summary table with a verdict per
 * scenario, each scenario's full table, how it is measured and what it does not show. Scenarios
 * the peer cannot run are in sections of their own: keys, compared with our own run of a baseline
 * scenario against a cost tolerance (`KEY_COST_TOLERANCE`); rate limit and priority, against the
 * checks of bench/checks.ts, the rate limit's cost compared with our own run without one. Potential
 * OCC conflicts have a section of their own (bench/conflictsReport.ts).
 */
import { highLagLimitMs, MIN_ACHIEVED_RATE, PRIORITY_GRACE_MS } from "./checks.js";
import { conflictsSection } from "./conflictsReport.js";
import type { Scenario } from "./harness.js";
import type { Usage } from "./instrument.js";
import type { BenchRun, Measured, ScenarioRun } from "./results.js";

/** The least achieved rate, as the document writes it ("0.90"). */
const MIN_RATE = MIN_ACHIEVED_RATE.toFixed(2);

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

const perJob = (r: Measured, n: number) => n / r.scenario.jobs;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Start lag percentiles (virtual ms); NaN when no job started (e.g. all canceled). */
export function lagStats(lags: number[]) {
  const s = [...lags].sort((a, b) => a - b);
  return { p50: percentile(s, 50), p95: percentile(s, 95), max: s.length ? s[s.length - 1] : NaN };
}

export function poolCallsPerJob(r: Measured) {
  const i = r.counters.invocations.pool;
  return perJob(r, i.query + i.mutation + i.action);
}
export function appCallsPerJob(r: Measured) {
  const i = r.counters.invocations.app;
  return perJob(r, i.query + i.mutation + i.action);
}
/** Usage per job, app and pool together (the app's share is the same on both sides). */
const usagePerJob = (r: Measured, field: keyof Usage) =>
  perJob(r, r.counters.usage.app[field] + r.counters.usage.pool[field]);
export const docsReadPerJob = (r: Measured) => usagePerJob(r, "docsRead");
export const docsWrittenPerJob = (r: Measured) => usagePerJob(r, "docsWritten");
export const kbReadPerJob = (r: Measured) => usagePerJob(r, "bytesRead") / 1000;
export const kbWrittenPerJob = (r: Measured) => usagePerJob(r, "bytesWritten") / 1000;
/** Σ attempt busy time / (maxParallelism × makespan), for action scenarios that run their jobs. */
export const utilization = (r: Measured) =>
  r.scenario.kind === "action" && r.scenario.expectKind !== "canceled"
    ? r.busyMs / (r.scenario.maxParallelism * Math.max(1, r.makespanMs))
    : NaN;
const lagP50 = (r: Measured) => lagStats(r.lags).p50;

// ---------------------------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------------------------

function fmt(n: number | undefined, digits = 2): string {
  if (n === undefined || Number.isNaN(n)) return "—";
  if (!Number.isFinite(n)) return String(n);
  return Math.abs(n) >= 1000 ? n.toFixed(0) : n.toFixed(digits);
}

function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** ours / peer, or undefined when either is missing or not a number. */
function ratioOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b)) return undefined;
  if (b === 0) return a === 0 ? 1 : Infinity;
  return a / b;
}

function fmtRatio(x: number | undefined): string {
  if (x === undefined) return "—";
  if (!Number.isFinite(x)) return "∞";
  if (x >= 100) return x.toFixed(0);
  if (x > 0 && x < 0.1) return String(Number(x.toPrecision(2)));
  return x.toFixed(2);
}

const fmtTimes = (x: number) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));

function table(header: string[], align: string[], rows: string[][]): string {
  return [header, align, ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

// ---------------------------------------------------------------------------------------------
// "At a glance": headline figures and a verdict per scenario
// ---------------------------------------------------------------------------------------------

/** Differences smaller than this (5 %) are called on par. */
const PAR = 0.05;

type Headline = {
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

const HEADLINES: Headline[] = [
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
function glanceCell(h: Pick<Headline, "get" | "show">, a?: Measured, b?: Measured): string {
  const o = a && h.get(a);
  const p = b && h.get(b);
  const show = (n: number | undefined) => (n === undefined ? "not run" : h.show(n));
  if (o !== undefined && p !== undefined && Number.isNaN(o) && Number.isNaN(p)) return "—";
  return `${show(o)} vs ${show(p)} (${fmtRatio(ratioOf(o, p))}×)`;
}

/**
 * The pool module (`loop`, `lib`, `complete`, ...) that accounts for most of a difference, when one
 * does: "mostly our `loop` module: 0.80 vs the peer's 0.27 KB / job". Modules are compared by
 * name (functions are keyed `component:module:function (type)`, the peer's batch worker included);
 * the app's functions are the same on both sides and left out.
 */
function mostOfDifference(h: Headline, ours: Measured, peer: Measured): string {
  const by = h.byFunction;
  if (!by) return "";
  const byModule = (r: Measured) => {
    const m = new Map<string, number>();
    for (const [key, n] of by.get(r)) {
      const [component, module] = key.split(":");
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
  const mine = `mostly our \`${top.module}\` module: ${fmt(o.get(top.module) ?? 0)}`;
  return theirs === undefined
    ? ` (${mine} ${by.unit} / job, a module the peer does not have)`
    : ` (${mine} vs the peer's ${fmt(theirs)} ${by.unit} / job)`;
}

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

const shortName = (sc: Scenario) => `${sc.id}. ${sc.short ?? sc.title}`;

/** A scenario's description, as a paragraph (or nothing). */
const aboutOf = (sc: Scenario) => (sc.about ? `${sc.about}\n\n` : "");

/** Whether the scenario is one the peer runs too (older runs did not record `sides`: all were). */
const vsPeer = (sc: Scenario) => (sc.sides ?? ["ours", "peer"]).includes("peer");

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

// ---------------------------------------------------------------------------------------------
// Full tables
// ---------------------------------------------------------------------------------------------

type Row = {
  label: string;
  get: (r: Measured) => number;
  digits?: number;
  noRatio?: boolean;
  text?: (r: Measured) => string;
  /** A cost per job, named as the key verdict names it ("documents read"): held to
   * `KEY_COST_TOLERANCE` in the key scenarios. */
  cost?: string;
  /** Only in the tables of scenarios with this feature (its checks). */
  only?: Feature;
};

/** What a scenario uses beyond the peer's features, each with rows of its own. */
type Feature = "keys" | "rateLimit" | "priority";

const hasFeature = (sc: Scenario, feature: Feature) =>
  ({ keys: sc.keys, rateLimit: sc.rateLimit, priority: sc.priorityMix })[feature] !== undefined;

/** The rows of a table of `sc`: every general row, and those of the features it uses. */
const rowsFor = (sc: Scenario) => ROWS.filter((row) => !row.only || hasFeature(sc, row.only));

/** The high-priority jobs' start lags, p50 and max. */
const highLag = (r: Measured) => lagStats(r.priorityChecks?.highLags ?? []);

const callsByType = (r: Measured, side: "app" | "pool") => {
  const i = r.counters.invocations[side];
  return `${fmt(perJob(r, i.query))} / ${fmt(perJob(r, i.mutation))} / ${fmt(perJob(r, i.action))}`;
};

const ROWS: Row[] = [
  {
    label: "pool function calls / job (query / mutation / action)",
    get: poolCallsPerJob,
    text: (r) => `${fmt(poolCallsPerJob(r))} (${callsByType(r, "pool")})`,
    cost: "pool function calls",
  },
  {
    label: "app function calls / job (query / mutation / action)",
    get: appCallsPerJob,
    text: (r) => `${fmt(appCallsPerJob(r))} (${callsByType(r, "app")})`,
  },
  {
    label: "function calls / job, total",
    get: (r) => poolCallsPerJob(r) + appCallsPerJob(r),
    cost: "function calls in all",
  },
  {
    label: "documents read / job (of which the pool's)",
    get: docsReadPerJob,
    text: (r) => `${fmt(docsReadPerJob(r))} (${fmt(perJob(r, r.counters.usage.pool.docsRead))})`,
    cost: "documents read",
  },
  {
    label: "documents written / job (of which the pool's)",
    get: docsWrittenPerJob,
    text: (r) =>
      `${fmt(docsWrittenPerJob(r))} (${fmt(perJob(r, r.counters.usage.pool.docsWritten))})`,
    cost: "documents written",
  },
  { label: "KB read / job", get: kbReadPerJob, cost: "KB read" },
  { label: "KB written / job", get: kbWrittenPerJob, cost: "KB written" },
  {
    label: "largest single transaction: documents read",
    get: (r) => r.counters.maxTxDocsRead,
    digits: 0,
  },
  {
    label: "largest single transaction: KB read",
    get: (r) => r.counters.maxTxBytesRead / 1000,
    digits: 1,
  },
  { label: "start lag p50 (virtual ms)", get: lagP50, digits: 0 },
  { label: "start lag p95 (virtual ms)", get: (r) => lagStats(r.lags).p95, digits: 0 },
  { label: "start lag max (virtual ms)", get: (r) => lagStats(r.lags).max, digits: 0 },
  { label: "makespan (virtual s)", get: (r) => r.makespanMs / 1000 },
  { label: "utilization (higher is better)", get: utilization, digits: 3 },
  {
    label: "highest concurrency (limit)",
    get: (r) => r.maxConcurrency,
    noRatio: true,
    text: (r) => `${r.maxConcurrency} (${r.scenario.maxParallelism})`,
  },
  {
    label: "keys (jobs per key)",
    get: () => NaN,
    noRatio: true,
    only: "keys",
    text: (r) =>
      r.keyChecks ? `${r.keyChecks.keys} (${fmt(r.scenario.jobs / r.keyChecks.keys)})` : "—",
  },
  {
    label: "highest concurrency of one key (keyParallelism)",
    get: () => NaN,
    noRatio: true,
    only: "keys",
    text: (r) =>
      r.keyChecks ? `${r.keyChecks.maxConcurrency} (${r.scenario.keyParallelism ?? 1})` : "—",
  },
  {
    label: "jobs started out of their key's order",
    get: () => NaN,
    noRatio: true,
    only: "keys",
    text: (r) => (r.keyChecks ? String(r.keyChecks.outOfOrder) : "—"),
  },
  {
    label: "rate limit (starts / period)",
    get: () => NaN,
    noRatio: true,
    only: "rateLimit",
    text: (r) =>
      r.scenario.rateLimit
        ? `${r.scenario.rateLimit.starts} / ${fmtMs(r.scenario.rateLimit.periodMs)}`
        : "—",
  },
  {
    label: "first to last start, virtual s (least the limit allows)",
    get: () => NaN,
    noRatio: true,
    only: "rateLimit",
    text: (r) =>
      r.rateChecks
        ? `${fmt(r.rateChecks.spanMs / 1000)} (${fmt(r.rateChecks.minSpanMs / 1000)})`
        : "—",
  },
  {
    label: `achieved rate (of the limit; at least ${MIN_RATE})`,
    get: () => NaN,
    noRatio: true,
    only: "rateLimit",
    text: (r) => (r.rateChecks ? fmt(r.rateChecks.achieved, 3) : "—"),
  },
  {
    label: "busiest window (starts; limit)",
    get: () => NaN,
    noRatio: true,
    only: "rateLimit",
    text: (r) =>
      r.rateChecks && r.scenario.rateLimit
        ? `${r.rateChecks.busiest} (${r.scenario.rateLimit.starts})`
        : "—",
  },
  {
    label: "high-priority start lag p50 / max, virtual ms (p50 limit)",
    get: () => NaN,
    noRatio: true,
    only: "priority",
    text: (r) =>
      r.priorityChecks
        ? `${fmt(highLag(r).p50, 0)} / ${fmt(highLag(r).max, 0)} (${highLagLimitMs(r.scenario.ms)})`
        : "—",
  },
  {
    label: "low-priority start lag p50 (virtual ms)",
    get: () => NaN,
    noRatio: true,
    only: "priority",
    text: (r) => (r.priorityChecks ? fmt(lagStats(r.priorityChecks.lowLags).p50, 0) : "—"),
  },
  {
    label: "priority inversions (low starts ahead of a waiting high job)",
    get: () => NaN,
    noRatio: true,
    only: "priority",
    text: (r) => (r.priorityChecks ? String(r.priorityChecks.inversions) : "—"),
  },
  {
    label: "onComplete calls: success / failed / canceled",
    get: () => NaN,
    noRatio: true,
    text: (r) => `${r.completions.success} / ${r.completions.failed} / ${r.completions.canceled}`,
  },
  {
    label: "onComplete calls: lost / duplicate / wrong result",
    get: () => NaN,
    noRatio: true,
    text: (r) =>
      `${r.lost} / ${r.duplicates} / ${r.wrongKind}${r.finished ? "" : " (deadline hit)"}`,
  },
  { label: "harness wall-clock (real s)", get: (r) => r.wallSeconds, digits: 1 },
];

/** Every row for `a` and `b`, with a / b; `extra` adds a last column, per row. */
function compareTable(
  header: [a: string, b: string, ratio: string],
  a: Measured | undefined,
  b: Measured | undefined,
  rows: Row[],
  extra?: { header: string; cell: (row: Row) => string },
): string {
  return table(
    ["metric", ...header, ...(extra ? [extra.header] : [])],
    ["---", "---:", "---:", "---:", ...(extra ? ["---"] : [])],
    rows.map((row) => {
      const x = row.noRatio ? "" : fmtRatio(ratioOf(a && row.get(a), b && row.get(b)));
      return [row.label, cell(row, a), cell(row, b), x, ...(extra ? [extra.cell(row)] : [])];
    }),
  );
}

/** One row's figure for `r`. */
const cell = (row: Row, r?: Measured) =>
  r ? (row.text ? row.text(r) : fmt(row.get(r), row.digits)) : "not run";

export function scenarioTable(run: ScenarioRun): string {
  return compareTable(["ours", "peer", "ours / peer"], run.ours, run.peer, rowsFor(run.scenario));
}

/** Every row of a run on ours alone. */
function oursTable(r: Measured): string {
  return table(
    ["metric", "ours"],
    ["---", "---:"],
    rowsFor(r.scenario).map((row) => [row.label, cell(row, r)]),
  );
}

/** Calls and usage per function and per job, most called first. */
export function breakdown(r: Measured): string {
  const keys = new Set([...r.counters.byFunction.keys(), ...r.counters.usageByFunction.keys()]);
  const none: Usage = { docsRead: 0, docsWritten: 0, bytesRead: 0, bytesWritten: 0 };
  const entries = [...keys].map((k) => ({
    k,
    calls: r.counters.byFunction.get(k) ?? 0,
    u: r.counters.usageByFunction.get(k) ?? none,
  }));
  entries.sort((a, b) => b.calls - a.calls || b.u.docsWritten - a.u.docsWritten);
  return table(
    [
      `function (${r.side})`,
      "calls / job",
      "docs read / job",
      "docs written / job",
      "KB written / job",
    ],
    ["---", "---:", "---:", "---:", "---:"],
    entries.map((e) => [
      `\`${e.k}\``,
      fmt(perJob(r, e.calls), 3),
      fmt(perJob(r, e.u.docsRead)),
      fmt(perJob(r, e.u.docsWritten)),
      fmt(perJob(r, e.u.bytesWritten) / 1000, 3),
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// Keys: ours keyed vs ours unkeyed (the peer has no keys)
// ---------------------------------------------------------------------------------------------

/** How much more a keyed job may cost than an unkeyed one, on each cost row (issue 10: 10 %). */
export const KEY_COST_TOLERANCE = 0.1;

/** "+45 %", "−3 %": how far a ratio is from 1. */
const signedPct = (x: number) => `${x >= 1 ? "+" : "−"}${Math.round(Math.abs(x - 1) * 100)} %`;

/** Each cost row's name and ratio of `a` to its baseline `base` (undefined when either run is
 * missing). */
export function costRatios(a?: Measured, base?: Measured) {
  return ROWS.flatMap((row) =>
    row.cost ? [{ name: row.cost, ratio: ratioOf(a && row.get(a), base && row.get(base)) }] : [],
  );
}

/** "pool function calls +3 %, documents read −1 %": cost ratios in words. */
const showCosts = (costs: Array<{ name: string; ratio: number }>) =>
  costs.map((c) => `${c.name} ${signedPct(c.ratio)}`).join(", ");

/** The cost ratios of `a` to `base` that both runs have. */
const knownCostRatios = (a: Measured, base: Measured) =>
  costRatios(a, base).flatMap((c) => (c.ratio === undefined ? [] : [{ ...c, ratio: c.ratio }]));

const withinTolerance = (x: number) => x <= 1 + KEY_COST_TOLERANCE;

/** Whether a keyed run's cost per job is within `KEY_COST_TOLERANCE` of its baseline, row by row,
 * in plain words. */
export function keyVerdict(keyed?: Measured, base?: Measured): string {
  return toleranceVerdict(keyed, base, "its unkeyed baseline");
}

/** Whether `a`'s cost per job is within the tolerance (10 %) of `base`'s, row by row, in plain
 * words; `baseName` names the baseline when it did not run. */
function toleranceVerdict(a: Measured | undefined, base: Measured | undefined, baseName: string) {
  if (!a) return "not run";
  if (!base) return `not compared: ${baseName} was not run`;
  const costs = knownCostRatios(a, base);
  const tolerance = `${KEY_COST_TOLERANCE * 100} %`;
  const over = costs.filter((c) => !withinTolerance(c.ratio));
  const within = costs.filter((c) => withinTolerance(c.ratio));
  if (over.length === 0)
    return `**Within ${tolerance}** on every cost row: ${showCosts(within)} per job.`;
  return (
    `**Not within ${tolerance}**: ${showCosts(over)} per job` +
    (within.length ? `; within ${tolerance}: ${showCosts(within)}.` : ".")
  );
}

/** The "within 10 %" column of a keyed table: for cost rows, "yes (+3 %)" or "**no: +45 %**". */
function withinCell(keyed?: Measured, base?: Measured) {
  return (row: Row) => {
    const x = row.cost ? ratioOf(keyed && row.get(keyed), base && row.get(base)) : undefined;
    if (x === undefined) return "";
    return withinTolerance(x) ? `yes (${signedPct(x)})` : `**no: ${signedPct(x)}**`;
  };
}

/** Every row of a keyed run against its baseline, with the tolerance column. */
export function keyedTable(keyed?: Measured, base?: Measured): string {
  const rows = keyed ? rowsFor(keyed.scenario) : ROWS;
  return compareTable(["ours keyed", "ours unkeyed", "keyed / unkeyed"], keyed, base, rows, {
    header: `cost within ${KEY_COST_TOLERANCE * 100} %`,
    cell: withinCell(keyed, base),
  });
}

/** Where a run's extra documents over its baseline's come from (a keyed run's, a rate-limited
 * one's): per function, the documents read and written per job beyond the baseline's, most first
 * ("documents read: `ours:loop:main (mutation)` +3.80"). */
export function extraByFunction(keyed: Measured, base: Measured): string {
  const fields: Array<[keyof Usage, string]> = [
    ["docsRead", "documents read"],
    ["docsWritten", "documents written"],
  ];
  return fields
    .flatMap(([field, name]) => {
      const grew = [...keyed.counters.usageByFunction]
        .map(([fn, u]) => ({
          fn,
          extra:
            perJob(keyed, u[field]) -
            perJob(base, base.counters.usageByFunction.get(fn)?.[field] ?? 0),
        }))
        .filter((d) => d.extra >= 0.005)
        .sort((a, b) => b.extra - a.extra);
      return grew.length
        ? [`${name}: ${grew.map((d) => `\`${d.fn}\` +${fmt(d.extra)}`).join(", ")}`]
        : [];
    })
    .join("; ");
}

/** Each keyed scenario's run, with our run of its baseline scenario when there is one. */
function keyedPairs(run: BenchRun) {
  return run.scenarios
    .filter((s) => s.scenario.keys && s.scenario.baseline !== undefined)
    .map((s) => ({
      scenario: s.scenario,
      keyed: s.ours,
      base: run.scenarios.find((b) => b.scenario.id === s.scenario.baseline)?.ours,
    }));
}

const LARGEST_TX: Pick<Headline, "column" | "get" | "show"> = {
  column: "largest transaction: documents read",
  get: (r) => r.counters.maxTxDocsRead,
  show: (n) => fmt(n, 0),
};

/** The keyed runs at a glance: headline figures keyed vs unkeyed, and the tolerance verdict. */
export function keyedGlanceTable(run: BenchRun): string {
  const columns = [...HEADLINES, LARGEST_TX];
  return table(
    [
      "scenario",
      ...columns.map((h) => h.column),
      `cost per job within ${KEY_COST_TOLERANCE * 100} % of unkeyed`,
    ],
    ["---", ...columns.map(() => "---:"), "---"],
    keyedPairs(run).map(({ scenario, keyed, base }) => [
      shortName(scenario),
      ...columns.map((h) => glanceCell(h, keyed, base)),
      keyVerdict(keyed, base),
    ]),
  );
}

/** One line per keyed run for "At a glance". */
function keyedGlanceLines(run: BenchRun): string {
  return keyedPairs(run)
    .map(({ scenario, keyed, base }) => `- ${shortName(scenario)}: ${keyVerdict(keyed, base)}`)
    .join("\n");
}

/** The keys section: the baseline, each keyed run against it, and where their costs go. */
function keysSection(run: BenchRun, level: number): string {
  const pairs = keyedPairs(run);
  if (pairs.length === 0) return "";
  const h = "#".repeat(level);
  const baselines = run.scenarios.filter((s) =>
    pairs.some((p) => p.scenario.baseline === s.scenario.id),
  );
  const tolerance = `${KEY_COST_TOLERANCE * 100} %`;
  const details = [...baselines.map((s) => s.ours), ...pairs.map((p) => p.keyed)].flatMap((r) =>
    r ? [`${h}## ${r.scenario.id}. ${r.scenario.title}\n\n${breakdown(r)}`] : [],
  );
  return `${h} Keys: ours keyed vs ours unkeyed

The peer has no keys (jobs sharing a \`key\` form their own queue: at most \`keyParallelism\` of
them run at once, and they start in order), so these runs are ours only, and each keyed run is
compared with our own run of the same workload without keys. Each cell is **keyed vs unkeyed
(keyed ÷ unkeyed)**. A keyed job should cost at most ${tolerance} more than an unkeyed one on every
cost row: function calls (the pool's, and in all), documents read and written, KB read and written,
per job, the app's share included as above. The figures are reported as measured, within ${tolerance}
or not. "Harness wall-clock" is convex-test's time: it answers each index lookup by scanning the
table, so the lookups keys add cost it far more than they would cost a deployment.

${keyedGlanceTable(run)}

${baselines.map((s) => `${h}# ${s.scenario.id}. ${s.scenario.title}\n\n${aboutOf(s.scenario)}Its figures are the "ours unkeyed" column below.`).join("\n\n")}

${pairs
  .map(
    ({ scenario, keyed, base }) =>
      `${h}# ${scenario.id}. ${scenario.title}\n\n${aboutOf(scenario)}${keyVerdict(keyed, base)}` +
      (keyed && base ? ` Extra per job, by function: ${extraByFunction(keyed, base)}.` : "") +
      `\n\n${keyedTable(keyed, base)}`,
  )
  .join("\n\n")}

${h}# Where the keyed runs' calls and writes go

Per function and per job, without keys and with them.

${details.join("\n\n")}

`;
}

// ---------------------------------------------------------------------------------------------
// Scale: the same backlog at 1,000, 10,000 and (opt-in) 50,000 jobs
// ---------------------------------------------------------------------------------------------

/** "a", "a and b", "a, b and c". */
const listed = (items: string[]) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

/** The backlog scenarios, smallest first: the first is the others' baseline. */
const SCALE_IDS = ["4a", "4b", "4c"];

/** Each side's backlog runs, smallest first (only those that ran). */
function scaleRuns(run: BenchRun, side: "ours" | "peer"): Measured[] {
  return SCALE_IDS.flatMap((id) => {
    const r = run.scenarios.find((s) => s.scenario.id === id)?.[side];
    return r ? [r] : [];
  });
}

/** Cost per job of each backlog size against the smallest, per side, and the largest transaction:
 * a pool whose cost per job or largest transaction grew with its backlog would show it here. */
function scaleSection(run: BenchRun, level: number): string {
  const sides = (["ours", "peer"] as const).filter((side) => scaleRuns(run, side).length > 1);
  if (sides.length === 0) return "";
  const costs = ROWS.filter((row) => row.cost !== undefined);
  const tolerance = `${KEY_COST_TOLERANCE * 100} %`;
  const rows = sides.flatMap((side) => {
    const [base, ...larger] = scaleRuns(run, side);
    return [base, ...larger].map((r) => [
      r === base ? side : "",
      r.scenario.jobs.toLocaleString("en-US"),
      ...costs.map((row) => fmt(row.get(r))),
      fmt(r.counters.maxTxDocsRead, 0),
      r === base
        ? "(the baseline)"
        : toleranceVerdict(r, base, `the ${base.scenario.jobs}-job run`),
    ]);
  });
  const all = sides.flatMap((side) => scaleRuns(run, side));
  const ran = [...new Map(all.map((r) => [r.scenario.id, r.scenario])).values()];
  const { ms, maxParallelism } = ran[0];
  const ranLarge = ran.some((sc) => sc.id === "4c");
  return `${"#".repeat(level)} Scale: the same backlog at every size

Scenarios ${listed(ran.map((sc) => sc.id))} are the same backlog of ${ms} ms actions at maxParallelism
${maxParallelism}, at ${listed(ran.map((sc) => sc.jobs.toLocaleString("en-US")))} jobs${ranLarge ? "" : " (the opt-in 4c, at 50,000, was not run here)"}. A pool
whose work per job grew with its backlog (a scan of the queue, a document that grows with it) would
cost more per job in the larger runs, and its largest transaction would grow; each run is held to
${tolerance} of the smallest on every cost row, the app's share included, per side.

${table(
  [
    "pool",
    "jobs",
    ...costs.map((row) => `${row.cost} / job`),
    "largest transaction: documents read",
    `cost per job within ${tolerance} of the smallest run`,
  ],
  ["---", "---:", ...costs.map(() => "---:"), "---:", "---"],
  rows,
)}

`;
}

// ---------------------------------------------------------------------------------------------
// Rate limit and priority: ours only (the peer has neither)
// ---------------------------------------------------------------------------------------------

/** How a rate-limited run broke its limit or fell short of it, if it did ("" if neither). */
function rateFailure(r: Measured): string {
  const c = r.rateChecks;
  const limit = r.scenario.rateLimit;
  if (!c || !limit) return "";
  const attempts = r.scenario.jobs * (r.scenario.failTimes + 1);
  const logged =
    c.starts === attempts ? "" : `, ${c.starts} starts logged by the pool for ${attempts} attempts`;
  const over =
    c.busiest > limit.starts
      ? `, ${c.busiest} starts in the ${fmtMs(limit.periodMs)} from ${fmtMs(c.busiestAt)} after ` +
        `the first (limit ${limit.starts})`
      : "";
  const slow = !(c.achieved >= MIN_ACHIEVED_RATE)
    ? `, started at ${fmt(c.achieved, 3)} of the limit (at least ${MIN_RATE})`
    : "";
  return logged + over + slow;
}

/** How a priority mix started its high-priority jobs late or after low ones, if it did. */
function priorityFailure(r: Measured): string {
  const c = r.priorityChecks;
  if (!c) return "";
  const p50 = lagStats(c.highLags).p50;
  const limit = highLagLimitMs(r.scenario.ms);
  const slow = !(p50 <= limit)
    ? `, high-priority start lag p50 ${fmtMs(p50)} (at most ${limit} ms)`
    : "";
  const inverted = c.inversions
    ? `, ${c.inversions} priority inversions (first: ${c.firstInversion})`
    : "";
  return slow + inverted;
}

/** A rate-limited run's checks and, against `base` (the same run without a limit), its cost per
 * job, in plain words. */
export function rateVerdict(r?: Measured, base?: Measured): string {
  const c = r?.rateChecks;
  const limit = r?.scenario.rateLimit;
  if (!r || !c || !limit) return "not run";
  const checks =
    `busiest window ${c.busiest} starts (limit ${limit.starts}), achieved ` +
    `${fmt(c.achieved, 3)} of the limit (at least ${MIN_RATE})`;
  const cost = base
    ? `per job against no limit (${base.scenario.id}): ${showCosts(knownCostRatios(r, base))}`
    : "cost not compared: its run without a limit was not run";
  return `${rateFailure(r) ? "**Failed**" : "**Passed**"}: ${checks}; ${cost}.`;
}

/** A priority mix's checks, in plain words. */
export function priorityVerdict(r?: Measured): string {
  const c = r?.priorityChecks;
  if (!r || !c) return "not run";
  const high = lagStats(c.highLags);
  return (
    `${priorityFailure(r) ? "**Failed**" : "**Passed**"}: high-priority start lag p50 ` +
    `${fmtMs(high.p50)} (at most ${highLagLimitMs(r.scenario.ms)} ms), max ${fmtMs(high.max)}; ` +
    `low-priority p50 ${fmtMs(lagStats(c.lowLags).p50)}; ${c.inversions} priority inversions.`
  );
}

/** The rate-limit and priority runs, each with our run of its baseline scenario when it has one
 * and it ran. */
function featureRuns(run: BenchRun) {
  return run.scenarios
    .filter((s) => s.scenario.rateLimit || s.scenario.priorityMix)
    .map((s) => ({
      scenario: s.scenario,
      ours: s.ours,
      base: run.scenarios.find((b) => b.scenario.id === s.scenario.baseline)?.ours,
    }));
}

const featureVerdict = ({ scenario, ours, base }: ReturnType<typeof featureRuns>[number]) =>
  scenario.rateLimit ? rateVerdict(ours, base) : priorityVerdict(ours);

/** The rate-limit and priority runs' verdicts for "At a glance", pointing to their section. */
function featuresGlance(run: BenchRun): string {
  const lines = featureRuns(run)
    .map((f) => `- ${shortName(f.scenario)}: ${featureVerdict(f)}`)
    .join("\n");
  return lines
    ? `**Rate limit and priority** (ours only, checked against what each promises: the peer has neither; see [Rate limit and priority](#rate-limit-and-priority-ours-only)):\n\n${lines}\n\n`
    : "";
}

/** The rate-limit and priority section: the baseline, each run with its checks, and its table
 * (the rate-limited run's against its baseline). */
function featuresSection(run: BenchRun, level: number): string {
  const runs = featureRuns(run);
  if (runs.length === 0) return "";
  const h = "#".repeat(level);
  const baselines = run.scenarios.filter((s) =>
    runs.some((f) => f.scenario.baseline === s.scenario.id),
  );
  const tableOf = ({ scenario, ours, base }: (typeof runs)[number]) =>
    scenario.baseline
      ? compareTable(
          ["ours, rate limit", "ours, no limit", "rate limit / no limit"],
          ours,
          base,
          rowsFor(scenario),
        )
      : ours
        ? oursTable(ours)
        : "Not run.";
  return `${h} Rate limit and priority: ours only

The peer has neither a rate limit (\`rateLimit\`: at most \`starts\` attempts start in any
\`periodMs\`) nor priorities (the \`priority\` enqueue option: "high", "normal" or "low"), so these
runs are ours only, each checked against what the feature promises (each run's description says
what is checked and why; the bench fails when a check does). The rate-limited run's cost per job
is compared with our own run of the same jobs without a limit: each cell of its table is **rate
limit vs no limit (rate limit ÷ no limit)**, reported as measured (no tolerance is set for it). The
priority mix's cost per job is reported alone.

${runs.map((f) => `- ${shortName(f.scenario)}: ${featureVerdict(f)}`).join("\n")}

${baselines.map((s) => `${h}# ${s.scenario.id}. ${s.scenario.title}\n\n${aboutOf(s.scenario)}Its figures are the "ours, no limit" column below.`).join("\n\n")}

${runs
  .map(
    (f) =>
      `${h}# ${f.scenario.id}. ${f.scenario.title}\n\n${aboutOf(f.scenario)}${featureVerdict(f)}` +
      (f.ours && f.base ? ` Extra per job, by function: ${extraByFunction(f.ours, f.base)}.` : "") +
      `\n\n${tableOf(f)}`,
  )
  .join("\n\n")}

`;
}

// ---------------------------------------------------------------------------------------------
// The document and the console report
// ---------------------------------------------------------------------------------------------

/** How a keyed run broke its keys' limit or order, if it did. */
function keyFailure(r: Measured): string {
  const k = r.keyChecks;
  if (!k) return "";
  const limit = r.scenario.keyParallelism ?? 1;
  const over =
    k.maxConcurrency > limit
      ? `, key ${k.maxConcurrencyKey} had ${k.maxConcurrency} attempts at once (keyParallelism ${limit})`
      : "";
  const order = k.outOfOrder
    ? `, ${k.outOfOrder} jobs started out of their key's order (first: ${k.firstOutOfOrder})`
    : "";
  return over + order;
}

/** The runs that failed a correctness check, one line each. */
function failures(run: BenchRun): string[] {
  const out: string[] = [];
  for (const s of run.scenarios)
    for (const r of [s.ours, s.peer])
      if (
        r &&
        (!r.finished ||
          r.lost ||
          r.duplicates ||
          r.wrongKind ||
          r.maxConcurrency > r.scenario.maxParallelism ||
          keyFailure(r) ||
          rateFailure(r) ||
          priorityFailure(r))
      )
        out.push(
          `${s.scenario.id} ${r.side}: ${r.lost} lost, ${r.duplicates} duplicate, ${r.wrongKind} wrong-result onComplete calls, ` +
            `at most ${r.maxConcurrency} attempts at once (limit ${r.scenario.maxParallelism})` +
            `${keyFailure(r)}${rateFailure(r)}${priorityFailure(r)}${r.finished ? "" : ", deadline hit"}`,
        );
  return out;
}

function compared(run: BenchRun): string {
  const { meta } = run;
  const v = meta.versions;
  const m = meta.machine;
  return `- **Ours**: convex-workpool ${v.ours} (this repository${meta.commit ? `, commit ${meta.commit}` : ""}).
- **Peer**: @convex-dev/workpool ${v.peer}.
- **Backend**: convex-test ${v.convexTest}, Convex's embedded test backend, with a virtual clock;
  convex ${v.convex}.
- **Machine**: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB, ${m.os}; Node ${v.node}.
- **Command**: \`${meta.command}\`, on ${meta.date.slice(0, 10)}, ${meta.wallSeconds.toFixed(0)} s wall-clock for the whole run.${(
    meta.also ?? []
  )
    .map(
      (a) =>
        `\n- **Also**: scenario${a.ids.length === 1 ? "" : "s"} ${a.ids.join(", ")} from \`${a.command}\`` +
        `${a.commit ? ` (commit ${a.commit})` : ""}, on ${a.date.slice(0, 10)}, ${a.wallSeconds.toFixed(0)} s.`,
    )
    .join("")}`;
}

function howMeasured(run: BenchRun): string {
  const { stepMs, settleMs } = run.meta;
  return `- **Same workload, same app code, both sides.** Each scenario runs twice, each time on a
  fresh convex-test backend with one pool installed (as component \`ours\` or \`peer\`), driven by the
  same app code (\`bench/app/pools.ts\`) through each package's public client: one
  \`enqueueAction\` / \`enqueueMutation\` call per job, 100 jobs per app mutation (one in the
  trickle), every job with an \`onComplete\` mutation that inserts one row.
- **Keys, ours against ours.** The key scenarios (7) run once, on ours (the peer has no keys): the
  same app code, with the \`key\` enqueue option set on the keyed runs only; everything else,
  pool options included, is the same as in their unkeyed baseline.
- **Rate limit and priority, ours only.** The rate-limited run (8a) sets the pool's \`rateLimit\`
  and \`logLevel: "DEBUG"\`; the harness records the virtual time of each DEBUG \`"started"\` line,
  which the pool logs in the loop pass that starts an attempt, and prints none of them: the
  limit is checked on the pool's own starts, not on the functions' (the scheduler runs a
  function a little after the pool starts it, which can bunch them). Its baseline (8) is the same
  run without \`rateLimit\` (or \`logLevel\`). In the priority mix (8b) the low jobs are enqueued
  100 per app mutation, then each high job in an app mutation of its own; start lags are the jobs'
  own, as above.
- **Virtual clock.** Timers and \`Date\` are faked and advanced ${stepMs} ms at a time, with one real
  tick between steps. After the last onComplete the run continues for ${settleMs / 1000} s of virtual
  time: the pool winding down is part of its cost, and a late duplicate onComplete would show.
- **Function calls, documents and bytes** are counted inside convex-test (\`bench/instrument.ts\`):
  calls from its execution contexts (component, function, type), documents and bytes from its
  per-transaction metrics, attributed to the function that did the reading or writing (a nested
  call's usage belongs to the callee). convex-test's own helpers (\`t.run\`, scheduled-function
  bookkeeping) are not counted, and scheduling a function does not count as a write. Per-job
  figures are totals divided by the number of jobs. Pool function calls are the pool's own;
  documents and bytes also include the app's enqueue mutations, the jobs themselves and their
  onComplete (identical on both sides, so their ratios slightly understate the difference between
  the pools): the full tables give the pool's share separately.
- **Start lag**: from enqueue to the start of the job's first attempt, as the job recorded it.
  **Makespan**: from the first enqueue to the last onComplete. **Utilization** (action scenarios):
  the attempts' total busy time / (maxParallelism × makespan); 1 means every slot was busy all the
  time. **Concurrency**: attempts running at once, as the jobs saw it.
- **Largest single transaction**: the most documents (and bytes) any one transaction read, to set
  against Convex's per-transaction limits (32,000 documents and 16 MiB, as convex-test enforces
  them): a pool whose transactions grow with its backlog would approach them.
- **Correctness is checked on every run**: the bench fails (non-zero exit) on a lost or duplicate
  onComplete, an onComplete with the wrong result kind, or more attempts running at once than
  maxParallelism; in the keyed runs also on a key with more attempts running at once than
  keyParallelism, or a job whose first attempt started after that of a later-enqueued job of its
  key (all are due at once, so a key's jobs must start in enqueue order), as the jobs saw it; in
  the rate-limited run on more starts than the limit in a window of one period beginning at a
  start, or an achieved rate under ${MIN_RATE} of the limit; in the priority mix on a high-priority
  start lag p50 over its limit, or a low job starting while a high one enqueued over
  ${PRIORITY_GRACE_MS} ms before still waits.`;
}

function notShown(run: BenchRun): string {
  const wallsOf = (id: string) => {
    const s = run.scenarios.find((s) => s.scenario.id === id);
    const walls = [s?.ours, s?.peer].flatMap((r) => (r ? [r.wallSeconds.toFixed(0)] : []));
    return walls.length ? `scenario ${id} took ${walls.join(" and ")} s (ours and peer) here` : "";
  };
  const walls = ["4b", "4c"].map(wallsOf).filter((w) => w !== "");
  const ran4c = run.scenarios.some((s) => s.scenario.id === "4c");
  return `- **Not a live deployment.** convex-test runs every transaction in-process, one at a time:
  there are no optimistic-concurrency conflicts (and so no retried mutations), no network, no
  function cold starts and no real scheduler latency. Latency figures are the pools' own scheduling
  decisions (timers, polling intervals, batching) on a virtual clock, not end-to-end latency on a
  Convex deployment. Contention between transactions is counted from their read and write sets
  in "Potential OCC conflicts" (a model, stated there), not measured.
- **Not Convex's bill.** Documents and bytes are convex-test's accounting of reads and writes,
  which approximates but is not Convex's database bandwidth billing; scheduled functions, index
  entries and storage are not counted.
- **One run per scenario.** With a virtual clock the figures barely vary between runs, but no spread
  is measured. "Harness wall-clock" is how long convex-test took, not how fast a pool is.
- **Only these workloads.** No large arguments or results, no jobs that fail for good, no app with
  several pools, no status queries while jobs run, no keyed jobs that retry or keys that are paused,
  no rate limit with retries or keys, no "normal" jobs among the priorities.
- **The 50,000-job backlog** (scenario 4c) is opt-in and ${ran4c ? "was run here" : "was not run here"}: \`BENCH_LARGE=1 npm run bench\`
  (or \`BENCH_ONLY=4c BENCH_LARGE=1 npm run bench\`). convex-test answers every query by scanning a
  whole table and sorting what matches, so a run's time still grows faster than its size (the bench
  scans only the queried table, or the rows an equality picks, \`bench/fastTables.ts\`; stock
  convex-test scans every table of the component, and a 10,000-job run took 280 s instead of 40)${walls.length ? `: ${walls.join("; ")}` : ""}.`;
}

function rerunning(): string {
  return `\`npm run bench\` runs every scenario but the opt-in 4c (about 12 minutes on two cores, 5 of
them in the key scenarios 7a to 7c, whose lookups convex-test answers by scanning: \`BENCH_ONLY\` can
leave them out; 4c takes about 15 minutes a side), prints the tables, writes this file and saves the
raw measurements to \`bench-out/latest.json\`;
\`BENCH_FROM_JSON=bench-out/latest.json npm run bench\` renders this file again from that JSON
without running anything (several files, comma-separated, are merged into one document: a full
run and a 4c run). \`BENCH_ONLY=1a,3\` and \`BENCH_SIDES=ours\` select runs (a keyed or
rate-limited run is compared with its baseline only when both ran: \`BENCH_ONLY=7a,7c\`,
\`BENCH_ONLY=8,8a\`), \`BENCH_NO_WRITE=1\` leaves this file alone (the JSON is still saved),
\`BENCH_STEP_MS\` sets the virtual step. Scenarios 1a, 3, 5, 6 and 7b also record every
transaction for "Potential OCC conflicts" (\`bench/conflicts.ts\`). Sizes: \`BENCH_BURST_JOBS\`,
\`BENCH_RETRY_JOBS\`, \`BENCH_MUTATION_JOBS\`, \`BENCH_BACKLOG_SMALL_JOBS\`, \`BENCH_BACKLOG_JOBS\`,
\`BENCH_BACKLOG_LARGE_JOBS\`, \`BENCH_CANCEL_JOBS\`, \`BENCH_TRICKLE_MS\`, \`BENCH_KEYED_JOBS\`,
\`BENCH_KEYED_KEYS\`, \`BENCH_RATE_JOBS\` (8 and 8a; over 50), \`BENCH_PRIORITY_LOW_JOBS\`,
\`BENCH_PRIORITY_HIGH_JOBS\`.`;
}

function glanceKey(run: BenchRun): string {
  return `Each cell is **ours vs peer (ours ÷ peer)**. Below 1 is better for us, except utilization,
where higher is better. Costs are per job and include the app's own share (the same on both
sides). Differences under ${PAR * 100} %, or for times within one ${run.meta.stepMs} ms step of the virtual clock, are
called on par. Where ours costs more, the verdict names the pool module most of the difference
comes from; "Where the calls and writes go" below breaks both pools down per function.`;
}

function scenarioSections(run: BenchRun, heading: string): string {
  return run.scenarios
    .filter((s) => vsPeer(s.scenario))
    .map(
      (s) =>
        `${heading} ${s.scenario.id}. ${s.scenario.title}\n\n${aboutOf(s.scenario)}${scenarioTable(s)}`,
    )
    .join("\n\n");
}

/** The correctness line: no lost or duplicate onComplete, or which runs had some. */
function correctness(run: BenchRun): string {
  const bad = failures(run);
  const keyed = run.scenarios.some((s) => s.scenario.keys)
    ? "; in the keyed runs, no key ever had more attempts running at once than keyParallelism, and every key's jobs started in enqueue order"
    : "";
  const rated = run.scenarios.some((s) => s.scenario.rateLimit)
    ? `; in the rate-limited run, no period held more starts than the limit, and the starts ran at ${MIN_RATE} of it or more`
    : "";
  const prioritized = run.scenarios.some((s) => s.scenario.priorityMix)
    ? "; in the priority mix, the high-priority jobs started within their p50 limit, and no low job went ahead of a waiting high one"
    : "";
  return bad.length
    ? `**Some runs failed their correctness checks:**\n\n${bad.map((b) => `- ${b}`).join("\n")}`
    : `Every run delivered exactly one onComplete per job, with the expected result, and never ran more attempts at once than maxParallelism${keyed}${rated}${prioritized}.`;
}

function whereItGoes(details: string[]): string {
  return `## Where the calls and writes go

Per function and per job, for a burst of actions (1a) and of mutations (3). Functions are named
\`component:module:function\`: \`ours\` is this package, \`peer\` and \`peer/batchWorker\` are
@convex-dev/workpool, \`app\` is the bench app (the same on both sides).

${details.join("\n\n")}

`;
}

/** The keyed runs' verdicts for "At a glance", pointing to their section. */
function keysGlance(run: BenchRun): string {
  const lines = keyedGlanceLines(run);
  return lines
    ? `**Keys** (ours only, against our own run without keys: the peer has no keys; see [Keys](#keys-ours-keyed-vs-ours-unkeyed)):\n\n${lines}\n\n`
    : "";
}

/** docs/BENCHMARKS.md */
export function renderDocument(run: BenchRun): string {
  const details: string[] = [];
  for (const s of run.scenarios.filter((s) => ["1a", "3"].includes(s.scenario.id)))
    for (const r of [s.ours, s.peer])
      if (r)
        details.push(`### ${s.scenario.id}. ${s.scenario.title}: ${r.side}\n\n${breakdown(r)}`);
  return `# Benchmarks: convex-workpool vs @convex-dev/workpool

The same workloads, run through both pools on an embedded Convex backend: what each costs per job
(function calls, documents and bytes read and written) and how quickly jobs start and finish.

${compared(run)}

## At a glance

${glanceKey(run)}

${glanceTable(run)}

${correctness(run)}

${keysGlance(run)}${featuresGlance(run)}## Scenarios

${scenarioSections(run, "###")}

${scaleSection(run, 2)}${keysSection(run, 2)}${featuresSection(run, 2)}${conflictsSection(run, 2)}${details.length ? whereItGoes(details) : ""}## How it is measured

${howMeasured(run)}

## What this does not show

${notShown(run)}

## Running it

${rerunning()}
`;
}

/** What `npm run bench` prints at the end. */
export function renderConsole(run: BenchRun): string {
  return `\n${scenarioSections(run, "##")}\n\n${scaleSection(run, 2)}${keysSection(run, 2)}${featuresSection(run, 2)}${conflictsSection(run, 2)}\n## At a glance\n\n${glanceKey(run)}\n\n${glanceTable(run)}\n\n${correctness(run)}\n\n${keysGlance(run)}${featuresGlance(run)}wall-clock: ${run.meta.wallSeconds.toFixed(1)} s\n`;
}

/** The line printed as each run ends. */
export function progressLine(r: Measured, logged: { error: number; warn: number }): string {
  const lag = lagStats(r.lags);
  return (
    `[bench] ${r.scenario.id} ${r.side.padEnd(4)} ${r.wallSeconds.toFixed(1)} s wall | pool calls/job ${fmt(poolCallsPerJob(r))}` +
    ` | docs r/w per job ${fmt(docsReadPerJob(r), 1)}/${fmt(docsWrittenPerJob(r), 1)}` +
    ` | makespan ${fmtMs(r.makespanMs)} | lag p50 ${fmtMs(lag.p50)} | max conc ${r.maxConcurrency}` +
    ` | onComplete ${JSON.stringify(r.completions)} lost ${r.lost} dup ${r.duplicates}` +
    (r.keyChecks
      ? ` | one key max conc ${r.keyChecks.maxConcurrency}, out of order ${r.keyChecks.outOfOrder}`
      : "") +
    (r.rateChecks
      ? ` | achieved rate ${fmt(r.rateChecks.achieved, 3)}, busiest window ${r.rateChecks.busiest} starts`
      : "") +
    (r.priorityChecks
      ? ` | high lag p50/max ${fmtMs(highLag(r).p50)}/${fmtMs(highLag(r).max)}, low lag p50 ` +
        `${fmtMs(lagStats(r.priorityChecks.lowLags).p50)}, inversions ${r.priorityChecks.inversions}`
      : "") +
    ` | console.error ${logged.error} warn ${logged.warn}\n`
  );
}
