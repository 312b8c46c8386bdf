// The demo chart's axis ticks (demo/chart.ts): round steps of 1, 2 or 5 × 10^n from 0 past the data.
import { describe, expect, it } from "vitest";
import { niceStep, niceTicks } from "../demo/chart.js";

describe("demo chart ticks", () => {
  it("picks the smallest round step that fits the span in the tick budget", () => {
    expect(niceStep(24, 10)).toBe(5);
    expect(niceStep(80, 10)).toBe(10);
    expect(niceStep(11, 6)).toBe(2);
    expect(niceStep(100, 10)).toBe(10);
    expect(niceStep(0.37, 10)).toBe(0.05);
    expect(niceStep(3, 10)).toBe(0.5);
    expect(niceStep(1200, 6)).toBe(200);
  });

  it("respects a minimum step and an empty span", () => {
    expect(niceStep(1.1, 6, 1)).toBe(1);
    expect(niceStep(0, 10)).toBe(1);
  });

  it("ends the ticks at the first step at or past the maximum", () => {
    expect(niceTicks(11, 6, 1)).toEqual({ step: 2, top: 12, values: [0, 2, 4, 6, 8, 10, 12] });
    expect(niceTicks(1.1, 6, 1)).toEqual({ step: 1, top: 2, values: [0, 1, 2] });
    expect(niceTicks(20, 10)).toEqual({
      step: 2,
      top: 20,
      values: [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20],
    });
    expect(niceTicks(0.3, 3).values).toEqual([0, 0.1, 0.2, 0.3]);
  });
});
