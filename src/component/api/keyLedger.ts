/**
 * Reading a key's ledger (`keyLedger`): its rows, one per shard that counted enqueues of the key
 * (api/enqueue.ts `countEnqueues`) plus one from before 0.2.0, summed. A constant number of rows
 * per key. Reads only.
 */
import type { Doc } from "../_generated/dataModel.js";
import type { DatabaseReader } from "../_generated/server.js";
import { ENQUEUE_COUNT_SHARDS } from "./enqueue.js";

/** Every ledger row of `key`: at most one per shard, and one row from before shards. */
export async function keyLedgerRows(db: DatabaseReader, key: string): Promise<Doc<"keyLedger">[]> {
  return await db
    .query("keyLedger")
    .withIndex("by_keyShard", (q) => q.eq("key", key))
    .take(ENQUEUE_COUNT_SHARDS + 1);
}

export type LedgerTotals = Pick<
  Doc<"keyLedger">,
  "enqueued" | "sweptSucceeded" | "sweptFailed" | "sweptCanceled"
>;

/** The sums of a key's ledger rows. */
export function sumLedger(rows: Doc<"keyLedger">[]): LedgerTotals {
  const totals = { enqueued: 0, sweptSucceeded: 0, sweptFailed: 0, sweptCanceled: 0 };
  for (const row of rows) {
    totals.enqueued += row.enqueued;
    totals.sweptSucceeded += row.sweptSucceeded;
    totals.sweptFailed += row.sweptFailed;
    totals.sweptCanceled += row.sweptCanceled;
  }
  return totals;
}

/** A key's ledger, summed over its rows; null when it has none. */
export async function keyLedgerTotals(
  db: DatabaseReader,
  key: string,
): Promise<LedgerTotals | null> {
  const rows = await keyLedgerRows(db, key);
  return rows.length === 0 ? null : sumLedger(rows);
}
