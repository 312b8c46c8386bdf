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

/** Whether a transaction's metrics (as `getTransactionMetrics` gives them) have reached `share`
 * of any limit: for transactions of the pool's own outside the loop (the sweeper) that stop on the
 * same measure. */
export function reachedShare(
  metrics: Record<BudgetMetric, { used: number; remaining: number }>,
  share: number,
): BudgetMetric | undefined {
  return BUDGET_METRICS.find((metric) => {
    const { used, remaining } = metrics[metric];
    return used >= share * (used + remaining);
  });
}

/** What a stage is about to spend, as far as it knows, per metric. */
export type Spend = Partial<Record<BudgetMetric, number>>;

/** Work the stages owe to the bookkeeping after them, not yet in the metrics: a deliverer for each
 * finished job's callback (scheduleDeliveries), a runner for each action job started
 * (placeActions), each a schedule and a row written at most. */
function owed(pass: Pass): number {
  return pass.deliveries.length + pass.actionStarts.length;
}

/** What is left of the stages' share, per metric (never below zero), from one read of the
 * metrics: `share` of each limit, less what was used and what the stages owe the bookkeeping. */
async function rooms(pass: Pass): Promise<Record<BudgetMetric, number>> {
  const metrics = await pass.ctx.meta.getTransactionMetrics();
  const share = pass.budgetShare ?? STAGE_SHARE;
  const debt = owed(pass);
  const left = {} as Record<BudgetMetric, number>;
  for (const metric of BUDGET_METRICS) {
    const { used, remaining } = metrics[metric];
    const owes = metric === "functionsScheduled" || metric === "documentsWritten" ? debt : 0;
    left[metric] = Math.max(0, Math.floor(share * (used + remaining) - used - owes));
  }
  return left;
}

/**
 * True once the stages have spent the pass's share of any metric (counting `next`, what the
 * caller is about to spend, and what the stages owe the bookkeeping). A stage that gets true takes
 * no more work; it is recorded on the pass (`budgetStop`), and the loop runs again at once.
 */
export async function budgetSpent(pass: Pass, stage: string, next: Spend = {}): Promise<boolean> {
  const left = await rooms(pass);
  for (const metric of BUDGET_METRICS) {
    if (left[metric] <= (next[metric] ?? 0)) {
      pass.budgetStop ??= { stage, metric };
      return true;
    }
  }
  return false;
}

/** How much of `metric` the stages may still spend; when none, records the stop as
 * `budgetSpent` does. For a stage whose items cost a known count each (the delivery check's
 * splits), to take part of an item's work rather than none. */
export async function budgetRoom(pass: Pass, stage: string, metric: BudgetMetric): Promise<number> {
  const room = (await rooms(pass))[metric];
  if (room === 0) pass.budgetStop ??= { stage, metric };
  return room;
}

/** Records that the budget stopped `stage` (a stage that took part of an item's work, as the
 * delivery check splitting part of a row): the loop runs again at once. */
export function noteBudgetStop(pass: Pass, stage: string, metric: BudgetMetric): void {
  pass.budgetStop ??= { stage, metric };
}

/**
 * How many units of work, each costing at most `perUnit`, fit in what is left of the budget (one
 * read of the metrics): a stage sizes its next batch with it. A metric the unit does not name
 * must merely have room left. Zero records the stop as `budgetSpent` does.
 */
export async function budgetUnits(pass: Pass, stage: string, perUnit: Spend): Promise<number> {
  const left = await rooms(pass);
  let units = Number.POSITIVE_INFINITY;
  for (const metric of BUDGET_METRICS) {
    const cost = perUnit[metric];
    const fit =
      cost === undefined || cost <= 0 ? (left[metric] > 0 ? units : 0) : left[metric] / cost;
    if (Math.floor(fit) < units) units = Math.floor(fit);
    if (units === 0) {
      pass.budgetStop ??= { stage, metric };
      return 0;
    }
  }
  return units;
}
