/**
 * The scale section: the same backlog (4a, 4b and the opt-in 4c) at every size, each side's cost
 * per job against its smallest run and its largest transaction, so a pool whose work per job grows
 * with its backlog shows. It never compares the two pools with each other (the headline does).
 */
import type { BenchRun, Measured } from "../results.js";
import { KEY_COST_TOLERANCE, toleranceVerdict } from "./baselineCosts.js";
import { fmt, listed, table } from "./format.js";
import { ROWS } from "./tables.js";

/** The scale section's heading (and anchor, `anchorOf`). */
export const SCALE_HEADING = "Scale: the same backlog at every size";

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
export function scaleSection(run: BenchRun, level: number): string {
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
  return `${"#".repeat(level)} ${SCALE_HEADING}

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
