/**
 * Keys, ours keyed vs ours unkeyed (the peer has no keys): the keyed runs' lines for "At a glance"
 * and their section, each keyed scenario against its baseline scenario, with the tolerance verdict
 * and where their calls and writes go. It never compares a keyed run with the peer, and never
 * checks a key's limit or order (bench/report/correctness.ts reports those failures).
 */
import type { BenchRun, Measured } from "../results.js";
import {
  extraByFunction,
  KEY_COST_TOLERANCE,
  toleranceVerdict,
  withinCell,
} from "./baselineCosts.js";
import { aboutOf, fmt, shortName, table, type SectionLink } from "./format.js";
import { glanceCell, HEADLINES, type Headline } from "./headline.js";
import { breakdown, compareTable, ROWS, rowsFor } from "./tables.js";

/** The keys section's heading (and anchor, `anchorOf`). */
export const KEYS_HEADING = "Keys: ours keyed vs ours unkeyed";

/** Whether a keyed run's cost per job is within `KEY_COST_TOLERANCE` of its baseline, row by row,
 * in plain words. */
export function keyVerdict(keyed?: Measured, base?: Measured): string {
  return toleranceVerdict(keyed, base, "its unkeyed baseline");
}

/** Every row of a keyed run against its baseline, with the tolerance column. */
export function keyedTable(keyed?: Measured, base?: Measured): string {
  const rows = keyed ? rowsFor(keyed.scenario) : ROWS;
  return compareTable(["ours keyed", "ours unkeyed", "keyed / unkeyed"], keyed, base, rows, {
    header: `cost within ${KEY_COST_TOLERANCE * 100} %`,
    cell: withinCell(keyed, base),
  });
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
export function keysSection(run: BenchRun, level: number): string {
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
  return `${h} ${KEYS_HEADING}

The peer has no keys (jobs sharing a \`key\` form their own queue: at most \`keyParallelism\` of
them run at once, and they start in order), so these runs are ours only, and each keyed run is
compared with our own run of the same workload without keys. Each cell is **keyed vs unkeyed
(keyed ÷ unkeyed)**. A keyed job should cost at most ${tolerance} more than an unkeyed one on every
cost row: function calls (the pool's, and in all), documents read and written, KB read and written,
per job, the app's share included, as in every table. The figures are reported as measured, within ${tolerance}
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

/** The keyed runs' verdicts for "At a glance", pointing to their section with `link`. */
export function keysGlance(run: BenchRun, link: SectionLink): string {
  const lines = keyedGlanceLines(run);
  return lines
    ? `**Keys** (ours only, against our own run without keys: the peer has no keys; see ${link("Keys", KEYS_HEADING)}):\n\n${lines}\n\n`
    : "";
}
