/**
 * The documents and the console text of a bench run: docs/BENCHMARKS.md, what `npm run bench`
 * prints at the end, and the line it prints as each run ends. Puts the sections of the other
 * modules in order and owns the headings that hold them; it computes no figure and writes no file
 * (bench/scenarios.bench-run.ts writes what it returns).
 */
import type { BenchRun, Measured } from "../results.js";
import { conflictsSection } from "./conflicts.js";
import { correctness } from "./correctness.js";
import { featuresGlance, featuresSection } from "./features.js";
import {
  docsReadPerJob,
  docsWrittenPerJob,
  highLag,
  lagStats,
  poolCallsPerJob,
} from "./figures.js";
import { aboutOf, fmt, fmtMs, vsPeer } from "./format.js";
import { glanceKey, glanceTable } from "./headline.js";
import { keysGlance, keysSection } from "./keys.js";
import { compared, howMeasured, notShown, rerunning } from "./method.js";
import { scaleSection } from "./scale.js";
import { breakdown, scenarioTable } from "./tables.js";

function scenarioSections(run: BenchRun, heading: string): string {
  return run.scenarios
    .filter((s) => vsPeer(s.scenario))
    .map(
      (s) =>
        `${heading} ${s.scenario.id}. ${s.scenario.title}\n\n${aboutOf(s.scenario)}${scenarioTable(s)}`,
    )
    .join("\n\n");
}

function whereItGoes(details: string[]): string {
  return `## Where the calls and writes go

Per function and per job, for a burst of actions (1a) and of mutations (3). Functions are named
\`component:module:function\`: \`ours\` is this package, \`peer\` and \`peer/batchWorker\` are
@convex-dev/workpool, \`app\` is the bench app (the same on both sides).

${details.join("\n\n")}

`;
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
