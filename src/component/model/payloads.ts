/**
 * Large values (arguments, contexts, return values) live in the `payloads` table so that the hot
 * `work` and `pendingCompletion` rows the loop reads stay small. Owns the threshold and the size
 * measure; never called by the loop with a read of a payload row.
 */
import { convexToJson, type Value } from "convex/values";

/** Values up to this size stay inline in their row. 8 KB keeps a full start batch of work rows far
 * below Convex's per-transaction read limits, while typical job arguments still stay inline. */
export const INLINE_VALUE_BYTES = 8 * 1024;

const encoder = new TextEncoder();

/** The size of a Convex value as its JSON encoding, in bytes (close to how Convex counts it). */
export function valueSizeBytes(value: unknown): number {
  if (value === undefined) return 0;
  return encoder.encode(JSON.stringify(convexToJson(value as Value))).length;
}

/** True when a value of this size must be stored apart from its row. */
export function isLarge(sizeBytes: number): boolean {
  return sizeBytes > INLINE_VALUE_BYTES;
}
