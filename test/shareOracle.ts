/**
 * The model test's side of fair share (API-EXTENSIONS section 13), kept apart from
 * test/model.test.ts: the operations it draws (a key's weight and reserve, a key's rate limit),
 * what the model expects `keyStatus` to show of them, and the rule its oracle checks once a
 * program is over: no key started more attempts in a window than a rate limit it held throughout.
 */
import fc from "fast-check";
import { expect } from "vitest";
import { busiestWindow } from "./helpers.js";

type Share = { weight?: number; reserve?: number } | null;
type KeyRate = { starts: number; periodMs: number } | false | null;

/** A key's share or rate limit, as the model draws them. */
export type ShareOp =
  | { op: "setKeyShare"; key: string; share: Share }
  | { op: "setKeyRateLimit"; key: string; rateLimit: KeyRate };

/** The arbitraries of the share operations (each of weight `weight` among the program's). */
export function shareOps(poolKey: fc.Arbitrary<string>, weight = 1) {
  return [
    {
      weight,
      arbitrary: fc.record({
        op: fc.constant("setKeyShare" as const),
        key: poolKey,
        share: fc.option(
          fc.record(
            { weight: fc.integer({ min: 1, max: 5 }), reserve: fc.integer({ min: 0, max: 2 }) },
            { requiredKeys: [] },
          ),
          { nil: null },
        ),
      }),
    },
    {
      weight,
      arbitrary: fc.record({
        op: fc.constant("setKeyRateLimit" as const),
        key: poolKey,
        rateLimit: fc.oneof(
          fc.record({
            starts: fc.integer({ min: 1, max: 3 }),
            periodMs: fc.integer({ min: 200, max: 2000 }),
          }),
          fc.constant(false as const),
          fc.constant(null),
        ),
      }),
    },
  ];
}

/** What the model knows of each key's share and rate limit, and when each rate limit was set. */
export class KeyShares {
  private shares = new Map<string, { weight: number; reserve: number }>();
  private rates = new Map<string, Array<{ at: number; rateLimit: KeyRate }>>();

  /** Applies a drawn operation at `at` (virtual ms), as the pool method does. */
  apply(step: ShareOp, at: number): void {
    if (step.op === "setKeyShare") {
      const before = this.shares.get(step.key) ?? { weight: 1, reserve: 0 };
      this.shares.set(
        step.key,
        step.share === null
          ? { weight: 1, reserve: 0 }
          : {
              weight: step.share.weight ?? before.weight,
              reserve: step.share.reserve ?? before.reserve,
            },
      );
    } else {
      this.rates.set(step.key, [
        ...(this.rates.get(step.key) ?? []),
        { at, rateLimit: step.rateLimit },
      ]);
    }
  }

  /** The share fields `keyStatus` shows for `key` (the pool has no keyRateLimit in the model). */
  status(key: string) {
    const share = this.shares.get(key) ?? { weight: 1, reserve: 0 };
    const history = this.rates.get(key) ?? [];
    const last = history[history.length - 1]?.rateLimit ?? null;
    return { ...share, rateLimit: last === false ? null : last };
  }

  /**
   * Each key's starts (`startsOf(key)`: when the loop started each of its attempts) held to a
   * rate limit the key had throughout: the starts after the last change of its limit, when that
   * set a limit, never more than `starts` in any window of `periodMs`.
   */
  check(keys: Iterable<string>, startsOf: (key: string) => number[]): void {
    for (const key of keys) {
      const history = this.rates.get(key) ?? [];
      const last = history[history.length - 1];
      if (last === undefined || !last.rateLimit) continue;
      const { starts, periodMs } = last.rateLimit;
      const after = startsOf(key).filter((at) => at >= last.at);
      expect(busiestWindow(after, periodMs), `starts of ${key} in one window`).toBeLessThanOrEqual(
        starts,
      );
    }
  }
}
