/**
 * Fair share across keys (scenarios 11a to 11f, API-EXTENSIONS §13): how long small tenants wait
 * behind a big one with fairness "share", with "due" and on the peer (which has no keys and runs
 * the jobs in enqueue order); whether two keys of weights 3 and 1 got their shares of the starts;
 * and whether keys holding shares, idle or active, make a job cost more. Their lines for "At a
 * glance" and their section. It never sets a threshold (bench/fairChecks.ts does) and never runs
 * anything.
 */
import { SHARE_WINDOW_STARTS } from "../fairChecks.js";
import type { BenchRun, Measured } from "../results.js";
import { extraByFunction, toleranceVerdict } from "./baselineCosts.js";
import { shareFailure } from "./correctness.js";
import {
  acrossTenants,
  docsReadPerJob,
  docsWrittenPerJob,
  tenantFigures,
  type TenantFigures,
} from "./figures.js";
import { aboutOf, fmt, fmtMs, shortName, table, type SectionLink } from "./format.js";
import { compareTable, oursTable, rowsFor } from "./tables.js";

/** The fair-share section's heading (and anchor, `anchorOf`). */
export const FAIRNESS_HEADING = "Fair share across keys";

/** The tenant runs: ours with fairness "due" (11a, with the peer's run of the same jobs) and ours
 * with "share" (11b). */
const TENANT_IDS = { due: "11a", share: "11b" };
const SPLIT_ID = "11c";
/** The cost runs: keys holding shares (11e idle, 11f active) against one key holding one (11d). */
const COST_BASE_ID = "11d";
const COST_IDS = ["11e", "11f"];

const byId = (run: BenchRun, id: string) => run.scenarios.find((s) => s.scenario.id === id);

/** The tenant runs, as the columns of their table. */
function tenantColumns(run: BenchRun) {
  const due = byId(run, TENANT_IDS.due);
  const share = byId(run, TENANT_IDS.share);
  return [
    { header: `ours, fairness "share" (${TENANT_IDS.share})`, r: share?.ours },
    { header: `ours, fairness "due" (${TENANT_IDS.due})`, r: due?.ours },
    { header: `peer, enqueue order (${TENANT_IDS.due})`, r: due?.peer },
  ];
}

/** "1.02 s / 1.10 s / 1.31 s": the best, median and worst small tenant's p50 (or p99) wait. */
function spread(small: TenantFigures[], p: "p50" | "p99") {
  const { best, median, worst } = acrossTenants(small, p);
  return `${fmtMs(best)} / ${fmtMs(median)} / ${fmtMs(worst)}`;
}

/** The tenant table's rows: the small tenants' waits, the big one's, the makespan and the cost. */
const TENANT_ROWS: Array<{ label: string; cell: (r: Measured) => string }> = [
  {
    label: "small tenants' p50 wait: best / median / worst tenant",
    cell: (r) => spread(tenantFigures(r)?.small ?? [], "p50"),
  },
  {
    label: "small tenants' p99 wait: best / median / worst tenant",
    cell: (r) => spread(tenantFigures(r)?.small ?? [], "p99"),
  },
  {
    label: "big tenant's p50 / p99 wait",
    cell: (r) => {
      const big = tenantFigures(r)?.big;
      return big ? `${fmtMs(big.p50)} / ${fmtMs(big.p99)}` : "—";
    },
  },
  { label: "makespan (virtual s)", cell: (r) => fmt(r.makespanMs / 1000) },
  {
    label: "documents read / written per job",
    cell: (r) => `${fmt(docsReadPerJob(r))} / ${fmt(docsWrittenPerJob(r))}`,
  },
];

/** The small tenants' waits in each order, side by side. */
export function tenantTable(run: BenchRun): string {
  const columns = tenantColumns(run);
  return table(
    ["", ...columns.map((c) => c.header)],
    ["---", ...columns.map(() => "---:")],
    TENANT_ROWS.map((row) => [row.label, ...columns.map((c) => (c.r ? row.cell(c.r) : "not run"))]),
  );
}

/** The tenant runs in one line: the median small tenant's p50 wait in each order, and the worst
 * small tenant's p99. */
function tenantLine(run: BenchRun): string {
  const shown = tenantColumns(run).flatMap((c) => {
    const small = c.r && tenantFigures(c.r)?.small;
    if (!small) return [];
    const p50 = acrossTenants(small, "p50").median;
    const p99 = acrossTenants(small, "p99").worst;
    return [`${c.header}: ${fmtMs(p50)} (worst p99 ${fmtMs(p99)})`];
  });
  return shown.length ? `The median small tenant's p50 wait: ${shown.join("; ")}.` : "";
}

/** The weight split's check, in plain words. */
export function splitVerdict(r?: Measured): string {
  const c = r?.shareChecks;
  if (!r || !c) return "not run";
  const starts = Object.entries(c.starts)
    .map(([key, n]) => `${key} ${n}`)
    .join(", ");
  const worst = c.worst
    ? `; furthest from its share: ${c.worst.key} with ${c.worst.starts} starts where ` +
      `${fmt(c.worst.share, 1)} were due, in the window from start ${c.worst.from + 1} ` +
      `(${fmt(c.worst.ratio * 100, 0)} % of the allowed deviation)`
    : "";
  return (
    `${shareFailure(r) ? "**Failed**" : "**Passed**"}: ${c.outside} of ${c.windows} windows of ` +
    `${SHARE_WINDOW_STARTS} starts off the weights, over the ${c.contested} starts made while ` +
    `both keys had jobs (starts per key: ${starts})${worst}.`
  );
}

/** The cost runs, each with our run of its baseline (11d). */
function costPairs(run: BenchRun) {
  const base = byId(run, COST_BASE_ID)?.ours;
  return COST_IDS.flatMap((id) => {
    const s = byId(run, id);
    return s ? [{ scenario: s.scenario, r: s.ours, base }] : [];
  });
}

const costVerdict = (r?: Measured, base?: Measured) =>
  toleranceVerdict(r, base, `its baseline ${COST_BASE_ID}`);

/** The fair-share runs' lines for "At a glance", pointing to their section with `link`. */
export function fairnessGlance(run: BenchRun, link: SectionLink): string {
  const tenants = tenantLine(run);
  const split = byId(run, SPLIT_ID);
  const lines = [
    ...(tenants ? [`- Small tenants behind a big one. ${tenants}`] : []),
    ...(split ? [`- ${shortName(split.scenario)}: ${splitVerdict(split.ours)}`] : []),
    ...costPairs(run).map(
      (p) => `- ${shortName(p.scenario)}, against ${COST_BASE_ID}: ${costVerdict(p.r, p.base)}`,
    ),
  ];
  return lines.length
    ? `**Fair share across keys** (ours with fairness "share" against "due" and the peer; see ${link("Fair share", FAIRNESS_HEADING)}):\n\n${lines.join("\n")}\n\n`
    : "";
}

/** The fair-share section: the tenant runs side by side, the weight split, and the cost of
 * shares. */
export function fairnessSection(run: BenchRun, level: number): string {
  const h = "#".repeat(level);
  const tenants = [TENANT_IDS.due, TENANT_IDS.share].flatMap((id) => byId(run, id) ?? []);
  const split = byId(run, SPLIT_ID);
  const base = byId(run, COST_BASE_ID);
  const costs = costPairs(run);
  if (tenants.length + costs.length === 0 && !split && !base) return "";
  const parts = [
    tenants.length
      ? `${h}# Small tenants behind a big one\n\n${tenants.map((s) => `**${shortName(s.scenario)}.** ${aboutOf(s.scenario)}`).join("")}` +
        `Waits are virtual time from enqueue to the start of the job's first attempt; each small ` +
        `tenant's p50 and p99 are over its own jobs, then shown for the best, the median and the ` +
        `worst of the small tenants. ${tenantLine(run)}\n\n${tenantTable(run)}`
      : "",
    split
      ? `${h}# ${split.scenario.id}. ${split.scenario.title}\n\n${aboutOf(split.scenario)}` +
        `${splitVerdict(split.ours)}${split.ours ? `\n\n${oursTable(split.ours)}` : ""}`
      : "",
    base
      ? `${h}# ${base.scenario.id}. ${base.scenario.title}\n\n${aboutOf(base.scenario)}` +
        `Its figures are the "baseline" column below.`
      : "",
    ...costs.map(
      ({ scenario, r, base: b }) =>
        `${h}# ${scenario.id}. ${scenario.title}\n\n${aboutOf(scenario)}${costVerdict(r, b)}` +
        (r && b ? ` Extra per job, by function: ${extraByFunction(r, b) || "none"}.` : "") +
        `\n\n${compareTable([scenario.id, `baseline (${COST_BASE_ID})`, `${scenario.id} / baseline`], r, b, rowsFor(scenario))}`,
    ),
  ];
  return `${h} ${FAIRNESS_HEADING}

API-EXTENSIONS §13: within a priority level, due jobs of different keys take the free slots in
weighted turns (\`fairness: "share"\`, the default), instead of earlier due first
(\`fairness: "due"\`). The peer has no keys, so only the tenant run 11a has a peer side, running
the same jobs in enqueue order; the other runs are ours only. Each run's description says what is
checked; the bench fails when a check does. Costs of keys holding shares are compared with one key
holding one, each cost row held to the key scenarios' tolerance.

${parts.filter((p) => p !== "").join("\n\n")}

`;
}
