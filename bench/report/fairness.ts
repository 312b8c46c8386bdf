/**
 * Fair share across keys (scenarios 11a to 11g, API-EXTENSIONS §13): how long small tenants wait
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
/** The cost runs, each against its baseline: 100,000 idle keys holding shares beside one key
 * holding one (11e) against that key alone (11d); 1,000 active keys holding shares (11f) against
 * the same keys without (11g). */
const COST_PAIRS = [
  { id: "11e", base: "11d" },
  { id: "11f", base: "11g" },
];

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

/** The cost runs that ran, each with our run of its baseline. */
function costPairs(run: BenchRun) {
  return COST_PAIRS.flatMap(({ id, base }) => {
    const s = byId(run, id);
    return s
      ? [{ scenario: s.scenario, r: s.ours, baseId: base, base: byId(run, base)?.ours }]
      : [];
  });
}

const costVerdict = (p: ReturnType<typeof costPairs>[number]) =>
  toleranceVerdict(p.r, p.base, `its baseline ${p.baseId}`);

/** The fair-share runs' lines for "At a glance", pointing to their section with `link`. */
export function fairnessGlance(run: BenchRun, link: SectionLink): string {
  const tenants = tenantLine(run);
  const split = byId(run, SPLIT_ID);
  const lines = [
    ...(tenants ? [`- Small tenants behind a big one. ${tenants}`] : []),
    ...(split ? [`- ${shortName(split.scenario)}: ${splitVerdict(split.ours)}`] : []),
    ...costPairs(run).map(
      (p) => `- ${shortName(p.scenario)}, against ${p.baseId}: ${costVerdict(p)}`,
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
  const bases = COST_PAIRS.flatMap((p) => byId(run, p.base) ?? []);
  const costs = costPairs(run);
  if (tenants.length + costs.length + bases.length === 0 && !split) return "";
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
    ...bases.map(
      (b) =>
        `${h}# ${b.scenario.id}. ${b.scenario.title}\n\n${aboutOf(b.scenario)}` +
        `Its figures are the "baseline" column below.`,
    ),
    ...costs.map(
      (p) =>
        `${h}# ${p.scenario.id}. ${p.scenario.title}\n\n${aboutOf(p.scenario)}${costVerdict(p)}` +
        (p.r && p.base
          ? ` Extra per job, by function: ${extraByFunction(p.r, p.base) || "none"}.`
          : "") +
        `\n\n${compareTable([p.scenario.id, `baseline (${p.baseId})`, `${p.scenario.id} / baseline`], p.r, p.base, rowsFor(p.scenario))}`,
    ),
  ];
  return `${h} ${FAIRNESS_HEADING}

API-EXTENSIONS §13: within a priority level, due jobs of different keys take the free slots in
weighted turns (\`fairness: "share"\`, the default), instead of earlier due first
(\`fairness: "due"\`). The peer has no keys, so only the tenant run 11a has a peer side, running
the same jobs in enqueue order; the other runs are ours only. Each run's description says what is
checked; the bench fails when a check does. The cost of keys holding shares is compared with runs
without them (idle keys: one key alone; active keys: the same keys without shares of their own),
each cost row held to the key scenarios' tolerance.

${parts.filter((p) => p !== "").join("\n\n")}

`;
}
