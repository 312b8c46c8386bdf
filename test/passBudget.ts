/**
 * The per-pass budget of the loop: how much one top-level `mainLoop/main:main` transaction may read, write
 * and scan, and the record that checks it. Passes are heard through bench/instrument.ts (convex-test's
 * own per-transaction metrics, not app code), so the total includes whatever user code ran inside the
 * pass (onComplete handlers run in its sub-transactions). test/passBudget.setup.ts applies the check
 * after every test; test/passBudget.test.ts shows that it can fail.
 *
 * The budget is an eighth to a quarter of Convex's limits, fixed numbers (not derived from the batch
 * sizes, so that raising a batch is caught too): every batch a pass takes is bounded by a constant,
 * so a pass's size must not grow with the backlog, and a pass over budget in a test's small
 * workload is only a few times that workload away from the real limit, where the loop would stop.
 */
import {
  installInstrumentation,
  onTopLevelTransaction,
  type TransactionTotal,
} from "../bench/instrument.js";
import { CANCEL_BATCH } from "../src/component/mainLoop/cancel.js";
import { COMPLETION_BATCH } from "../src/component/mainLoop/complete.js";
import { RECOVERY_BATCH } from "../src/component/mainLoop/recovery.js";
import { START_BATCH } from "../src/component/mainLoop/start.js";

/** Documents one pass may read by design, from the batch sizes (tighter than the budget, which is
 * fixed): per started job 4, per completion 4, per cancelation 5, per recovered job 2, plus a fixed
 * dozen for singletons and probes. test/bounded*.test.ts hold passes to it. */
export const PASS_READ_BOUND =
  START_BATCH * 4 + COMPLETION_BATCH * 4 + CANCEL_BATCH * 5 + RECOVERY_BATCH * 2 + 12;

/** Bytes in a mebibyte. */
const MiB = 1 << 20;

/** Convex's limit on documents read per transaction (docs.convex.dev/production/state/limits). */
export const CONVEX_LIMIT_DOCUMENTS_READ = 32_000;
/** Convex's limit on documents written per transaction. */
export const CONVEX_LIMIT_DOCUMENTS_WRITTEN = 16_000;
/** Convex's limit on bytes read per transaction (16 MiB). */
export const CONVEX_LIMIT_BYTES_READ = 16 * MiB;
/** Convex's limit on bytes written per transaction (16 MiB). */
export const CONVEX_LIMIT_BYTES_WRITTEN = 16 * MiB;
/** Convex's limit on index ranges read per transaction (convex-test's "databaseQueries"). */
export const CONVEX_LIMIT_INDEX_RANGES = 4_096;
/** Convex's limit on functions one transaction schedules. */
export const CONVEX_LIMIT_FUNCTIONS_SCHEDULED = 1_000;

/** 1/8 of 32,000: a full pass (starts 100, completions 50, cancelations 100, recovery 100, the
 * report's backlog scan 500, sweep 50) reads about 1,900 rows by design (test/bounded.test.ts bounds
 * the batches at 1,312); 4,000 leaves room for onComplete handlers and fails long before the limit. */
export const PASS_BUDGET_DOCUMENTS_READ = 4_000;
/** 1/8 of 16,000: a pass writes two or three rows per job it starts, completes or cancels (batches
 * of 100 at most), about 800 by design, so 2,000 is over twice what a correct pass needs. */
export const PASS_BUDGET_DOCUMENTS_WRITTEN = 2_000;
/** 1/4 of 16 MiB: rows keep values up to 8 KB inline (INLINE_VALUE_BYTES), so a full start batch of
 * work rows with the largest inline arguments and context is about 1.6 MB to read; 4 MiB holds that
 * and a full completion batch, while a regression that reads payload rows (up to 1 MB each) fails
 * as soon as a pass meets a handful. */
export const PASS_BUDGET_BYTES_READ = 4 * MiB;
/** 1/4 of 16 MiB: patching those work rows rewrites them whole (about 1.6 MB for a full start
 * batch, 0.8 MB for a full completion batch), plus onComplete's own writes. */
export const PASS_BUDGET_BYTES_WRITTEN = 4 * MiB;
/** 1/4 of 4,096 index ranges: every `db.get` is one range, and a pass gets one or two rows per job it
 * starts, completes, cancels or recovers (about 600 at full batches by design); an eighth (512) would
 * fail a correct full pass. */
export const PASS_BUDGET_INDEX_RANGES = 1_024;

/** The budget per metric, keyed like convex-test's metrics (`databaseQueries` is index ranges). */
export const PASS_BUDGET: Readonly<TransactionTotal> = {
  documentsRead: PASS_BUDGET_DOCUMENTS_READ,
  documentsWritten: PASS_BUDGET_DOCUMENTS_WRITTEN,
  bytesRead: PASS_BUDGET_BYTES_READ,
  bytesWritten: PASS_BUDGET_BYTES_WRITTEN,
  databaseQueries: PASS_BUDGET_INDEX_RANGES,
};

export type Metric = keyof TransactionTotal;
export const METRICS: readonly Metric[] = [
  "documentsRead",
  "documentsWritten",
  "bytesRead",
  "bytesWritten",
  "databaseQueries",
];

/** One recorded pass: its function key (e.g. `workpool:mainLoop/main:main (mutation)`) and its total. */
export type Pass = { fn: string; total: TransactionTotal };

/** What was recorded since `startPassRecording()`. */
export type PassRecord = {
  /** `mainLoop/main:main` passes seen (top-level transactions; rolled back ones included). */
  count: number;
  /** The largest value per metric over all passes. */
  max: TransactionTotal;
  /** The pass that reached `max[metric]`, per metric. */
  maxPass: Partial<Record<Metric, Pass>>;
  /** The pass with the largest share of the budget in any one metric. */
  worst: (Pass & { metric: Metric; share: number }) | null;
};

/** True for a top-level `main` of the loop, in whichever component the pool is installed. */
export function isMainPass(fn: string): boolean {
  return /:(mainLoop\/main|loop):main \(mutation\)$/.test(fn);
}

const zeroTotal = (): TransactionTotal => ({
  documentsRead: 0,
  documentsWritten: 0,
  bytesRead: 0,
  bytesWritten: 0,
  databaseQueries: 0,
});

export function emptyPassRecord(): PassRecord {
  return { count: 0, max: zeroTotal(), maxPass: {}, worst: null };
}

/** Adds one pass to `record` (exported so that the spec can fabricate records). */
export function recordPass(
  record: PassRecord,
  fn: string,
  total: TransactionTotal,
  budget: Readonly<TransactionTotal> = PASS_BUDGET,
): void {
  record.count++;
  const pass: Pass = { fn, total: { ...total } };
  for (const metric of METRICS) {
    if (total[metric] > record.max[metric] || record.maxPass[metric] === undefined) {
      record.max[metric] = Math.max(record.max[metric], total[metric]);
      record.maxPass[metric] = pass;
    }
    const share = total[metric] / budget[metric];
    if (record.worst === null || share > record.worst.share) {
      record.worst = { ...pass, metric, share };
    }
  }
}

let record = emptyPassRecord();
let listening = false;

/** Installs the instrumentation and the listener (once per worker) and starts a fresh record. */
export function startPassRecording(): PassRecord {
  installInstrumentation();
  if (!listening) {
    listening = true;
    onTopLevelTransaction((fn, total) => {
      if (isMainPass(fn)) recordPass(record, fn, total);
    });
  }
  record = emptyPassRecord();
  return record;
}

/** The passes recorded since the last `startPassRecording()`. */
export function recordedPasses(): PassRecord {
  return record;
}

/** Over-budget metrics of `record`, one line each: metric, value, budget and the pass's function. */
export function overBudget(
  rec: PassRecord,
  budget: Readonly<TransactionTotal> = PASS_BUDGET,
): string[] {
  const lines: string[] = [];
  for (const metric of METRICS) {
    if (rec.max[metric] > budget[metric]) {
      const fn = rec.maxPass[metric]?.fn ?? "?";
      lines.push(`${metric} ${rec.max[metric]} > budget ${budget[metric]} in ${fn}`);
    }
  }
  return lines;
}

/** Throws, naming every metric over budget, if any recorded `mainLoop/main:main` pass exceeded the budget. */
export function checkPassBudget(
  rec: PassRecord,
  budget: Readonly<TransactionTotal> = PASS_BUDGET,
): void {
  const lines = overBudget(rec, budget);
  if (lines.length === 0) return;
  throw new Error(
    `a loop:main pass exceeded the per-pass budget of test/passBudget.ts ` +
      `(${rec.count} passes recorded):\n  ${lines.join("\n  ")}`,
  );
}
