// The rules of the start order (model/startOrder.ts), run on their own: turns by virtual pass
// follow the weights, reserves go first, a joining key earns no credit, and rate logs hold.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareTurns,
  firstTurn,
  joinPass,
  keyMayStart,
  logStarts,
  nextAllowedAt,
  passAfterTurn,
  rateRoom,
  reserveInEffect,
  tierOf,
  type StartLog,
  type Turn,
} from "./startOrder.js";

/** Runs `n` turns among keys of the given weights, all always ready; returns starts per key. */
function runTurns(weights: number[], n: number): number[] {
  const passes = weights.map(() => 0);
  const counts = weights.map(() => 0);
  let time = 0;
  for (let i = 0; i < n; i++) {
    const turns: Turn[] = weights.map((_, k) => ({
      key: `k${k}`,
      tier: 1,
      pass: joinPass(passes[k], time),
      runAt: 0,
    }));
    const next = firstTurn(turns, "share")!;
    const k = Number(next.key!.slice(1));
    time = Math.max(time, next.pass);
    passes[k] = passAfterTurn(next.pass, weights[k]);
    counts[k]++;
  }
  return counts;
}

describe("start order", () => {
  it("splits 100 turns 3:1 for weights 3 and 1", () => {
    expect(runTurns([3, 1], 100)).toEqual([75, 25]);
  });

  it("over 100 turns, gives every key its weight's share within ±10 % plus one", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 2, maxLength: 5 }),
        (ws) => {
          const counts = runTurns(ws, 100);
          const total = ws.reduce((a, b) => a + b, 0);
          ws.forEach((w, k) => {
            const fair = (100 * w) / total;
            expect(counts[k]).toBeGreaterThanOrEqual(Math.floor(fair * 0.9) - 1);
            expect(counts[k]).toBeLessThanOrEqual(Math.ceil(fair * 1.1) + 1);
          });
        },
      ),
    );
  });

  it("a key that joins late starts at the level's time: no credit for having been idle", () => {
    expect(joinPass(undefined, 40)).toBe(40);
    expect(joinPass(3, 40)).toBe(40);
    expect(joinPass(55, 40)).toBe(55);
  });

  it("a key below its reserve goes before any key at or above its own, whatever the passes", () => {
    const below: Turn = { key: "b", tier: tierOf(0, 2), pass: 900, runAt: 9 };
    const above: Turn = { key: "a", tier: tierOf(2, 2), pass: 1, runAt: 1 };
    expect(firstTurn([above, below], "share")).toBe(below);
    // Under "due", tiers and passes are ignored: the earlier due head goes first.
    expect(firstTurn([above, below], "due")).toBe(above);
  });

  it("caps a reserve by the key's and the pool's parallelism", () => {
    expect(reserveInEffect(10, 3, 50)).toBe(3);
    expect(reserveInEffect(10, 30, 4)).toBe(4);
    expect(reserveInEffect(0, 3, 4)).toBe(0);
  });

  it("breaks ties by due time, then the jobs without a key, then by key", () => {
    const turn = (key: string | null, runAt: number): Turn => ({ key, tier: 1, pass: 5, runAt });
    expect(compareTurns(turn("a", 1), turn("b", 2), "share")).toBeLessThan(0);
    expect(compareTurns(turn("a", 2), turn(null, 2), "share")).toBeGreaterThan(0);
    expect(compareTurns(turn("a", 2), turn("b", 2), "share")).toBeLessThan(0);
  });

  it("a key may not start while paused, full (unless its head holds its slot) or rate limited", () => {
    const key = { paused: false, active: 1, limit: 2, headHoldsSlot: false, rateRoom: 1 };
    expect(keyMayStart(key)).toBe(true);
    expect(keyMayStart({ ...key, paused: true })).toBe(false);
    expect(keyMayStart({ ...key, active: 2 })).toBe(false);
    expect(keyMayStart({ ...key, active: 2, headHoldsSlot: true })).toBe(true);
    expect(keyMayStart({ ...key, rateRoom: 0 })).toBe(false);
  });

  it("a rate log never allows more than `starts` in any window, and names when the next may", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 10, max: 1000 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 60 }),
        (starts, periodMs, gaps) => {
          const limit = { starts, periodMs };
          let log: StartLog | undefined;
          let now = 0;
          const made: number[] = [];
          for (const gap of gaps) {
            now += gap;
            if (rateRoom(log, limit, now) > 0) {
              log = logStarts(log, limit, now, 1);
              made.push(now);
            } else {
              expect(nextAllowedAt(log, limit, now)).toBeGreaterThan(now);
            }
          }
          for (const at of made) {
            expect(made.filter((m) => m >= at && m < at + periodMs).length).toBeLessThanOrEqual(
              starts,
            );
          }
        },
      ),
    );
  });
});
