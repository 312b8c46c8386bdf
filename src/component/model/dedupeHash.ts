/**
 * The hash a dedupe key is indexed by (a key may be 4,096 characters; an index entry need not
 * be). Two independent 32-bit FNV-1a hashes of the key's UTF-16 code units, as 16 hex digits: a
 * collision only costs a second row to compare, since rows keep the whole key. Pure; owns no state.
 */

/** FNV-1a's 32-bit prime. */
const FNV_PRIME = 0x01000193;
/** FNV-1a's offset basis, and a second basis for the independent half. */
const BASES = [0x811c9dc5, 0x9747b28c] as const;

function fnv1a(text: string, basis: number): number {
  let hash = basis;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return hash >>> 0;
}

/** The hash `dedupe.by_hash` indexes `key` under. */
export function dedupeHash(key: string): string {
  return BASES.map((basis) => fnv1a(key, basis).toString(16).padStart(8, "0")).join("");
}
