/**
 * The full tables: every row (`ROWS`) of one scenario's figures, ours beside the peer's (or beside
 * our own baseline run), a run of ours alone, and the per-function breakdown of calls and usage.
 * Owns which rows there are, which of them are costs (`Row.cost`, what the baselines and the scale
 * section compare) and which only show for a feature. It never judges a figure (verdicts are
 * bench/report/headline.ts's and bench/report/baselineCosts.ts's).
 */
import { highLagLimitMs } from "../checks.js";
import type { Scenario } from "../harness.js";
import { zeroUsage } from "../instrument.js";
import type { Measured, ScenarioRun } from "../results.js";
import {
  appCallsPerJob,
  docsReadPerJob,
  docsWrittenPerJob,
  highLag,
  kbReadPerJob,
  kbWrittenPerJob,
  lagP50,
  lagStats,
  perJob,
  poolCallsPerJob,
  utilization,
} from "./figures.js";
import { fmt, fmtMs, fmtRatio, MIN_RATE, ratioOf, table } from "./format.js";

export type Row = {
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
export const rowsFor = (sc: Scenario) =>
  ROWS.filter((row) => !row.only || hasFeature(sc, row.only));

const callsByType = (r: Measured, side: "app" | "pool") => {
  const i = r.counters.invocations[side];
  return `${fmt(perJob(r, i.query))} / ${fmt(perJob(r, i.mutation))} / ${fmt(perJob(r, i.action))}`;
};

export const ROWS: Row[] = [
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
export function compareTable(
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
export function oursTable(r: Measured): string {
  return table(
    ["metric", "ours"],
    ["---", "---:"],
    rowsFor(r.scenario).map((row) => [row.label, cell(row, r)]),
  );
}

/** Calls and usage per function and per job, most called first. */
export function breakdown(r: Measured): string {
  const keys = new Set([...r.counters.byFunction.keys(), ...r.counters.usageByFunction.keys()]);
  const none = zeroUsage();
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
