/**
 * Large values (arguments, contexts, return values) live in the `payloads` table so that the hot
 * `work` and `pendingCompletion` rows the loop reads stay small. Owns the size threshold (the
 * measure, and the depth a value may have inline, are model/valueMeasure.ts's); never called by the
 * loop with a read of a payload row.
 */

/** Values up to this size (as Convex counts it) stay inline in their row, unless they nest too deep
 * for it (valueMeasure.ts `fitsInline`). 8 KiB keeps a full start batch of work rows far below
 * Convex's per-transaction read limits, while typical job arguments still stay inline. */
export const INLINE_VALUE_BYTES = 8 * 1024;

/** True when a value of this size must be stored apart from its row. */
export function isLarge(sizeBytes: number): boolean {
  return sizeBytes > INLINE_VALUE_BYTES;
}
