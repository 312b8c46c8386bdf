/**
 * Scenario 10, schedules' cost (ours only; bench/schedules.ts measures it): its progress line, its
 * lines at a glance in the summary, and its section of the detail, per firing and between times. Renders nothing for a run without it.
 * It never measures and never sets a threshold (the bench's `it` checks the run).
 */
import type { ScheduleBenchResult, TxSums } from "../schedules.js";
import type { BenchRun } from "../results.js";
import { fmt, table, type SectionLink } from "./format.js";

/** The section's heading (and anchor). */
export const SCHEDULES_HEADING = "Schedules: cost per firing and between times (ours only)";

const count = (n: number) => n.toLocaleString("en-US");
const per = (sum: number, n: number) => (n === 0 ? "—" : fmt(sum / n));

/** The bench's line for the run. */
export function scheduleLine(r: ScheduleBenchResult): string {
  const { firing, idle } = r;
  return (
    `10 ours: ${count(firing.times)} firings, ${per(firing.pool.transactions, firing.times)} pool ` +
    `transactions each (the fire ${per(firing.fires.documentsRead, firing.fires.transactions)} ` +
    `reads, ${per(firing.fires.documentsWritten, firing.fires.transactions)} writes); ` +
    `${count(r.config.idle)} idle schedules: ${idle.window.transactions} transactions in ` +
    `${r.config.idleWindowMs / 60_000} min; ${fmt(r.wallSeconds, 1)} s\n`
  );
}

/** The summary's lines at a glance (`link` to the detail's section), or "" without scenario 10. */
export function schedulesGlance(run: BenchRun, link: SectionLink): string {
  const r = run.schedules;
  if (r === undefined) return "";
  const { config, firing, idle } = r;
  const fire = (n: number) => per(n, firing.fires.transactions);
  return (
    `**Schedules** (ours only: the peer has none; see ${link("Schedules", SCHEDULES_HEADING)}):\n\n` +
    `- ${config.firing} schedules every ${config.everyMs / 1000} s for ${config.durationMs / 60_000} ` +
    `min: ${count(firing.enqueued)} runs for ${count(firing.times)} times; per firing ` +
    `${per(firing.fires.transactions, firing.times)} fire transaction (${fire(firing.fires.documentsRead)} ` +
    `documents read, at most ${firing.fires.maxDocumentsRead}; ${fire(firing.fires.documentsWritten)} ` +
    `written) and ${per(firing.pool.transactions, firing.times)} pool transactions in all.\n` +
    `- ${count(config.idle)} schedules between their times: **${idle.window.transactions} ` +
    `transactions** and ${count(idle.window.documentsRead)} documents read in ` +
    `${config.idleWindowMs / 60_000} min; a fire among them reads at most ` +
    `${idle.probeFires.maxDocumentsRead} documents (at most ${firing.fires.maxDocumentsRead} among ` +
    `${config.firing}).\n\n`
  );
}

function row(name: string, sums: TxSums, per: number): string[] {
  const each = (n: number) => fmt(n / per);
  return [
    name,
    count(sums.transactions),
    each(sums.transactions),
    each(sums.documentsRead),
    String(sums.maxDocumentsRead),
    each(sums.databaseQueries),
    each(sums.documentsWritten),
  ];
}

/** The section (`level` the heading's depth), or "" when the run has no scenario 10. */
export function schedulesSection(run: BenchRun, level: number): string {
  const r = run.schedules;
  if (r === undefined) return "";
  const { config, firing, idle } = r;
  const hashes = "#".repeat(level);
  const minutes = config.durationMs / 60_000;
  const header = [
    "transactions",
    "count",
    "per firing",
    "documents read",
    "most in one",
    "index ranges",
    "documents written",
  ];
  const align = ["---", ...header.slice(1).map(() => "---:")];
  return `${hashes} ${SCHEDULES_HEADING}

${config.firing} schedules of a do-nothing mutation, every ${config.everyMs / 1000} s for ${minutes} min of virtual time
(${count(firing.times)} firings: a firing is one time of one schedule), then, on a fresh backend,
${count(config.idle)} schedules whose first time is an hour away and ${config.idleWindowMs / 60_000} min of virtual
time between their times, then one more schedule every minute among them. Per firing, counted from
every top-level transaction (convex-test's metrics): the fire itself, and every pool transaction of
the time (the fire, and the run's start, worker and outcome). Not 10,000 firing schedules: an hour of
them is 600,000 fires and as many runs, about 2.4 million transactions, over an hour of wall time
on convex-test; per-firing figures do not depend on the number (the fire reads only its own
schedule).

${table(header, align, [
  row("the fire (`schedules:fire`)", firing.fires, firing.times),
  row("every pool transaction", firing.pool, firing.times),
])}

Runs enqueued: ${count(firing.enqueued)} of ${count(firing.times)} times. Between times, with
${count(config.idle)} schedules waiting: **${idle.window.transactions} transactions** in
${config.idleWindowMs / 60_000} min (${count(idle.window.documentsRead)} documents read). A fire among them reads at
most ${idle.probeFires.maxDocumentsRead} documents (${idle.probeFires.maxDatabaseQueries} index ranges), against at most
${firing.fires.maxDocumentsRead} with ${config.firing} schedules: no read grows with the number of schedules.
Creating the ${count(config.idle)} schedules took ${fmt(idle.createSeconds, 1)} s of wall time.

`;
}
