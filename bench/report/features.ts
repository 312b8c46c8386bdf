/**
 * Rate limit and priority, ours only (the peer has neither): each run's checks in plain words, its
 * line for "At a glance", and its section, the rate-limited run's cost against our run without a
 * limit. It never sets a threshold (bench/checks.ts does) and never compares with the peer.
 */
import { highLagLimitMs } from "../checks.js";
import type { BenchRun, Measured } from "../results.js";
import { extraByFunction, knownCostRatios, showCosts } from "./baselineCosts.js";
import { priorityFailure, rateFailure } from "./correctness.js";
import { lagStats } from "./figures.js";
import { aboutOf, fmt, fmtMs, MIN_RATE, shortName, type SectionLink } from "./format.js";
import { compareTable, oursTable, rowsFor } from "./tables.js";

/** The rate-limit and priority section's heading (and anchor, `anchorOf`). */
export const FEATURES_HEADING = "Rate limit and priority: ours only";

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

/** The rate-limit and priority runs' verdicts for "At a glance", pointing to their section with
 * `link`. */
export function featuresGlance(run: BenchRun, link: SectionLink): string {
  const lines = featureRuns(run)
    .map((f) => `- ${shortName(f.scenario)}: ${featureVerdict(f)}`)
    .join("\n");
  return lines
    ? `**Rate limit and priority** (ours only, checked against what each promises: the peer has neither; see ${link("Rate limit and priority", FEATURES_HEADING)}):\n\n${lines}\n\n`
    : "";
}

/** The rate-limit and priority section: the baseline, each run with its checks, and its table
 * (the rate-limited run's against its baseline). */
export function featuresSection(run: BenchRun, level: number): string {
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
  return `${h} ${FEATURES_HEADING}

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
