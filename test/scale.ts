/**
 * How big the scale-sensitive specs run. Run alone (`npx vitest run <file>`, `npm run fuzz`) they
 * take a size that exercises the same paths (several pages, batches and passes) in seconds; `npm run
 * test:slow` (CI runs it) sets TEST_SCALE=full and runs them at full size. `npm test` leaves them to
 * the slow tier. Owns nothing else.
 */

/** True under `npm run test:slow`. */
export const FULL_SCALE = process.env.TEST_SCALE === "full";

/** `fast` when run alone, `full` under `npm run test:slow`. */
export function scaled<V>(fast: V, full: V): V {
  return FULL_SCALE ? full : fast;
}

/** `n` with thousands separators, for test names. */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}
