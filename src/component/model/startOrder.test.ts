// The rules of the start order (model/startOrder.ts), run on their own: turns by virtual pass
// follow the weights, reserves go first, a joining key earns no credit, and rate logs hold.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compareTurns,
  earliestDue,
  firstTurn,
  joinPass,
  headMayStart,
  logStarts,
  nextAllowedAt,
  passAfterTurn,
  rateRoom,
  reserveInEffect,
  placeOf,
  startsOnArrival,
  takeTurn,
  TIER_WAITING,
  tierOf,
  type HeadView,
  type KeyView,
  type StartLog,
  type Turn,
} from "./startOrder.js";

/** A key of limit 2 with one job running, nothing queued, no share or rate limit of its own. */
function keyOf(change: Partial<KeyView> = {}, counts: Partial<KeyView["counts"]> = {}): KeyView {
  return {
    paused: false,
    limit: 2,
    weight: 1,
    reserve: 0,
    rateLimit: undefined,
    ...change,
    counts: { key: "k", active: 1, running: 1, queued: 0, ...counts },
  };
}

const waiting: HeadView = { runAt: 10, holdsSlot: false, order: 1 };
const holder: HeadView = { runAt: 10, holdsSlot: true, order: 1 };
/** A rate log that used one start of one a second at time 0. */
const usedOne = { rateLimit: { starts: 1, periodMs: 1000 } };
const logAt0 = { startLog: [{ from: 0, at: 0, n: 1 }] };

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

  it("under fairness due, the earliest due goes first, and the first given wins a tie", () => {
    const at = (runAt: number, name: string) => ({ runAt, name });
    const runAtOf = (c: { runAt: number }) => c.runAt;
    expect(earliestDue([at(5, "a"), undefined, at(3, "b")], runAtOf)?.name).toBe("b");
    expect(earliestDue([undefined, at(3, "a"), at(3, "b")], runAtOf)?.name).toBe("a");
    expect(earliestDue([undefined, undefined], runAtOf)).toBeUndefined();
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

  it("a key may not start while paused, full (unless its head holds its slot and fewer than its limit run) or rate limited", () => {
    expect(headMayStart(keyOf(), waiting, 0)).toBe(true);
    expect(headMayStart(keyOf(), null, 0)).toBe(false);
    expect(headMayStart(keyOf({ paused: true }), waiting, 0)).toBe(false);
    expect(headMayStart(keyOf({}, { active: 2 }), waiting, 0)).toBe(false);
    expect(headMayStart(keyOf({}, { active: 2 }), holder, 0)).toBe(true);
    expect(headMayStart(keyOf({}, { active: 2, running: 2 }), holder, 0)).toBe(false);
    expect(headMayStart(keyOf(usedOne, logAt0), waiting, 500)).toBe(false);
    expect(headMayStart(keyOf(usedOne, logAt0), waiting, 1000)).toBe(true);
  });

  it("a due job starts as it arrives only with a free slot and nobody of its key queued ahead", () => {
    expect(startsOnArrival(keyOf(), false, 0)).toBe(true);
    expect(startsOnArrival(keyOf({}, { queued: 1 }), false, 0)).toBe(false);
    expect(startsOnArrival(keyOf({}, { active: 2 }), false, 0)).toBe(false);
    // A retry holds its slot: it needs none free, and jobs queued behind it do not hold it back.
    expect(startsOnArrival(keyOf({}, { active: 2, queued: 3 }), true, 0)).toBe(true);
    expect(startsOnArrival(keyOf(usedOne, logAt0), true, 10)).toBe(false);
  });

  it("lists a key its rate limit holds at the time it may start, after the keys that may start now", () => {
    const share = { clock: { time: 7, unkeyed: 0 }, maxParallelism: 10 };
    expect(placeOf(keyOf(), waiting, 0, share)).toEqual({ runAt: 10, tier: 1, pass: 7 });
    expect(placeOf(keyOf(), waiting, 0)).toEqual({ runAt: 10, tier: undefined, pass: undefined });
    // Waiting, it holds no turn: its pass is the time it may start, the order it is read in.
    expect(placeOf(keyOf(usedOne, logAt0), waiting, 500, share)).toEqual({
      runAt: 1000,
      tier: TIER_WAITING,
      pass: 1000,
    });
    // Below its reserve, a key's place goes first; full, paused or empty, it has none.
    expect(placeOf(keyOf({ reserve: 2 }), waiting, 0, share)?.tier).toBe(0);
    expect(placeOf(keyOf({}, { active: 2 }), waiting, 0, share)).toBeUndefined();
    expect(placeOf(keyOf({ paused: true }), waiting, 0, share)).toBeUndefined();
    expect(placeOf(keyOf(), null, 0, share)).toBeUndefined();
  });

  it("a turn without rivals moves no clock; with rivals, the level's time and the key's pass move", () => {
    const clock = { time: 4, unkeyed: 0 };
    const turn: Turn = { key: "k", tier: 1, pass: 5, runAt: 0 };
    expect(takeTurn(clock, turn, 4, false)).toBeUndefined();
    expect(takeTurn(clock, turn, 4, true)).toEqual({ time: 5, pass: 5.25 });
    expect(takeTurn({ time: 9, unkeyed: 0 }, turn, 1, true)).toEqual({ time: 9, pass: 6 });
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
