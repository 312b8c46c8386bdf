/**
 * The fair-share checks of the bench (fairChecks.ts) on hand-made inputs: that the weight check
 * passes an exact 3:1 order and sees a window off the weights, checks only the stretch in which
 * every key still had jobs, and finds no window in one too short; and that tenant waits are each
 * tenant's own, in enqueue order.
 */
import { describe, expect, it } from "vitest";
import { SHARE_WINDOW_STARTS, shareChecks, shareOf, tenantWaits } from "./fairChecks.js";

/** `n` turns of `a, a, a, b`: an exact 3:1 order. */
const threeToOne = (n: number) => Array.from({ length: n }, () => ["a", "a", "a", "b"]).flat();

describe("fair-share checks", () => {
  it("pass an exact 3:1 split and see a window off it", () => {
    const exact = shareChecks(threeToOne(100), { a: 3, b: 1 });
    // a's last start comes before b's: the stretch ends there.
    expect(exact).toMatchObject({ contested: 399, windows: 300, outside: 0 });
    expect(exact.starts).toEqual({ a: 300, b: 100 });
    // b's share of a window is 25 ± 3.5: 30 of its starts in a row put windows over it.
    const skewed = [...threeToOne(50), ...Array<string>(30).fill("b"), ...threeToOne(50)];
    const c = shareChecks(skewed, { a: 3, b: 1 });
    expect(c.outside).toBeGreaterThan(0);
    expect(c.worst).toMatchObject({ key: "b" });
    expect(c.worst!.ratio).toBeGreaterThan(1);
  });

  it("allow ±10 % of a key's share plus one start", () => {
    expect(shareOf(1, 4)).toEqual({ share: 25, allowed: 3.5 });
    expect(shareOf(3, 4)).toEqual({ share: 75, allowed: 8.5 });
  });

  it("check only while every key still had jobs to start", () => {
    // After b's last start only a starts: those windows are not checked.
    const order = [...threeToOne(50), ...Array<string>(500).fill("a")];
    const c = shareChecks(order, { a: 3, b: 1 });
    expect(c.contested).toBe(200);
    expect(c.windows).toBe(200 - SHARE_WINDOW_STARTS + 1);
    expect(c.outside).toBe(0);
    // Too short a stretch for one window, or a key that never started: nothing to check.
    expect(shareChecks(threeToOne(10), { a: 3, b: 1 }).windows).toBe(0);
    expect(shareChecks(Array<string>(200).fill("a"), { a: 3, b: 1 })).toMatchObject({
      contested: 0,
      windows: 0,
    });
  });

  it("give each tenant its own waits, in enqueue order", () => {
    const waits = tenantWaits({
      enqueuedAt: new Map([
        ["j0", 0],
        ["j1", 0],
        ["j2", 1000],
        ["j3", 1000],
      ]),
      tenantOf: new Map([
        ["j0", "t0"],
        ["j1", "t0"],
        ["j2", "t1"],
        ["j3", "t1"],
      ]),
      attempts: [
        { key: "j0", start: 10 },
        { key: "j2", start: 1100 },
        { key: "j1", start: 1200 },
        // A retry of j0: its wait is to its first attempt.
        { key: "j0", start: 1300 },
      ],
    });
    expect(waits).toEqual([
      { tenant: "t0", jobs: 2, waits: [10, 1200] },
      // j3 never started: counted, without a wait.
      { tenant: "t1", jobs: 2, waits: [100] },
    ]);
  });
});
