/**
 * A run of ours against our own baseline run (keyed against unkeyed, rate-limited against no
 * limit, a large backlog against the smallest): the ratio of each cost row, whether each is within
 * `KEY_COST_TOLERANCE`, and which functions the extra documents come from. Pure comparisons of two
 * runs, in words and table cells; it never picks which runs to compare (the keys, scale and
 * features modules do) and never compares against the peer.
 */
import type { Usage } from "../instrument.js";
import type { Measured } from "../results.js";
import { perJob } from "./figures.js";
import { fmt, ratioOf, signedPct } from "./format.js";
import { ROWS, type Row } from "./tables.js";

/** How much more a keyed job may cost than an unkeyed one, on each cost row (issue 10: 10 %). */
export const KEY_COST_TOLERANCE = 0.1;

/** Each cost row's name and ratio of `a` to its baseline `base` (undefined when either run is
 * missing). */
export function costRatios(a?: Measured, base?: Measured) {
  return ROWS.flatMap((row) =>
    row.cost ? [{ name: row.cost, ratio: ratioOf(a && row.get(a), base && row.get(base)) }] : [],
  );
}

/** "pool function calls +3 %, documents read −1 %": cost ratios in words. */
export const showCosts = (costs: Array<{ name: string; ratio: number }>) =>
  costs.map((c) => `${c.name} ${signedPct(c.ratio)}`).join(", ");

/** The cost ratios of `a` to `base` that both runs have. */
export const knownCostRatios = (a: Measured, base: Measured) =>
  costRatios(a, base).flatMap((c) => (c.ratio === undefined ? [] : [{ ...c, ratio: c.ratio }]));

const withinTolerance = (x: number) => x <= 1 + KEY_COST_TOLERANCE;

/** Whether `a`'s cost per job is within the tolerance (10 %) of `base`'s, row by row, in plain
 * words; `baseName` names the baseline when it did not run. */
export function toleranceVerdict(
  a: Measured | undefined,
  base: Measured | undefined,
  baseName: string,
) {
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
export function withinCell(keyed?: Measured, base?: Measured) {
  return (row: Row) => {
    const x = row.cost ? ratioOf(keyed && row.get(keyed), base && row.get(base)) : undefined;
    if (x === undefined) return "";
    return withinTolerance(x) ? `yes (${signedPct(x)})` : `**no: ${signedPct(x)}**`;
  };
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
