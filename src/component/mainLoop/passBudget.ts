/**
 * The pass budget: the one measure every stage of a loop pass draws its work from. It reads what
 * the transaction has used so far from the platform (`ctx.meta.getTransactionMetrics()`: functions
 * scheduled, documents and bytes read and written, index ranges) and lets the stages together use
 * STAGE_SHARE of each of Convex's limits; the rest is kept for the pass's own bookkeeping, which
 * comes after the stages (delivery rows and their deliverers, keys' and executors' rows, the
 * loopState write, the next pass, the watchdog). Work the stages already owe to that bookkeeping
 * (deliveries of jobs they finished, action runners of jobs they started) counts as spent before it
 * is written, so a stage never takes work whose bookkeeping would not fit.
 *
 * A stage asks before each bounded batch (or item, where items are few or costly), saying what it
 * is about to spend when it knows; a stage the budget stops leaves the rest for the next pass,
 * which runs at once. Counts are the point: a stage must not assume that the value measure (the
 * size of each value) bounds it, since a pass can meet a count limit (1,000 schedules, 4,096 index
 * ranges) with small rows. Owns no table and never writes; it only measures.
 */
import type { Pass } from "./pass.js";

/** The metrics a pass is budgeted on, as `getTransactionMetrics` names them. */
export type BudgetMetric =
  | "functionsScheduled"
  | "documentsRead"
  | "documentsWritten"
  | "bytesRead"
  | "bytesWritten"
  | "databaseQueries";

export const BUDGET_METRICS: readonly BudgetMetric[] = [
  "functionsScheduled",
  "documentsRead",
  "documentsWritten",
  "bytesRead",
  "bytesWritten",
  "databaseQueries",
];

/** Fraction (of each of Convex's per-transaction limits, as the platform reports them) that a
 * pass's stages may use together. Half: the other half holds the bookkeeping after the stages,
 * which is at most one schedule per finished job (counted as spent already, `owed`), a write and a
 * few reads per key or executor a stage touched, and a dozen fixed reads and writes; and the
 * largest single batch a stage takes after its last check (a completion row of 50 outcomes, a
 * start chunk of 100 jobs) fits in it too. */
export const STAGE_SHARE = 0.5;

/** The fraction a narrow pass (the backstop, watchdog.ts) gives the one stage it runs: a
 * sixteenth of the ordinary share, so that a stage whose ordinary pass failed is split into
 * passes that each take a sixteenth of the work. */
export const NARROW_SHARE = STAGE_SHARE / 16;

/** What a stage is about to spend, as far as it knows, per metric. */
export type Spend = Partial<Record<BudgetMetric, number>>;

/** Work the stages owe to the bookkeeping after them, not yet in the metrics: a deliverer for each
 * finished job's callback (scheduleDeliveries), a runner for each action job started
 * (placeActions), each a schedule and a row written at most. */
function owed(pass: Pass): number {
  return pass.deliveries.length + pass.actionStarts.length;
}

/**
 * True once the stages have spent the pass's share of any metric (counting `next`, what the
 * caller is about to spend, and what the stages owe the bookkeeping). A stage that gets true takes
 * no more work; it records so on the pass (`budgetStop`), and the loop runs again at once.
 */
export async function budgetSpent(pass: Pass, stage: string, next: Spend = {}): Promise<boolean> {
  const metrics = await pass.ctx.meta.getTransactionMetrics();
  const share = pass.budgetShare ?? STAGE_SHARE;
  const debt = owed(pass);
  for (const metric of BUDGET_METRICS) {
    const { used, remaining } = metrics[metric];
    const limit = used + remaining;
    const extra =
      (next[metric] ?? 0) +
      (metric === "functionsScheduled" || metric === "documentsWritten" ? debt : 0);
    if (used + extra >= share * limit) {
      pass.budgetStop ??= { stage, metric };
      return true;
    }
  }
  return false;
}

/** How much of `metric` the stages may still spend (never below zero); when none, records the
 * stop as `budgetSpent` does. For a stage whose items cost a known count each (the delivery
 * check's splits), to take part of an item's work rather than none. */
export async function budgetRoom(pass: Pass, stage: string, metric: BudgetMetric): Promise<number> {
  const { used, remaining } = (await pass.ctx.meta.getTransactionMetrics())[metric];
  const share = pass.budgetShare ?? STAGE_SHARE;
  const debt = metric === "functionsScheduled" || metric === "documentsWritten" ? owed(pass) : 0;
  const room = Math.max(0, Math.floor(share * (used + remaining) - used - debt));
  if (room === 0) pass.budgetStop ??= { stage, metric };
  return room;
}
