/**
 * How the client splits a batch enqueue into component calls: by count and by bytes, so that each
 * call's transaction stays within Convex's limits whatever the size of the whole batch. Pure.
 */
import { MAX_ENQUEUE_BATCH } from "../component/api/enqueue.js";

/**
 * The most bytes of args plus context (as Convex counts them: model/valueMeasure.ts) one
 * `enqueueBatch` call carries. Convex limits a transaction to 16 MiB written, and each job's args and context are written
 * once (in its `work` row or a `payloads` row): 4,000,000 bytes leaves room for the rows' other fields
 * and for the caller's own writes.
 */
export const MAX_BATCH_CALL_BYTES = 4_000_000;

/**
 * Splits `items` into consecutive chunks, in order, of at most `maxCount` items and at most
 * `maxBytes` bytes each (by `sizes`, one per item). An item larger than `maxBytes` on its own gets a
 * chunk of its own.
 */
export function chunkBySizes<T>(
  items: readonly T[],
  sizes: readonly number[],
  maxCount: number = MAX_ENQUEUE_BATCH,
  maxBytes: number = MAX_BATCH_CALL_BYTES,
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  items.forEach((item, i) => {
    if (current.length > 0 && (current.length >= maxCount || bytes + sizes[i] > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += sizes[i];
  });
  if (current.length > 0) chunks.push(current);
  return chunks;
}
