// Unit tests of the pure retry decision: no database, no clock.
import { describe, expect, it } from "vitest";
import { decideCompletion, JITTER_FRACTION, MAX_DELAY_MS, nextRetryDelayMs } from "./retry.js";

const behavior = { maxAttempts: 4, initialBackoffMs: 250, base: 2 };

describe("nextRetryDelayMs", () => {
  it("waits initialBackoffMs * base^(n-1), within the jitter bounds", () => {
    for (const failed of [1, 2, 3]) {
      const nominal = 250 * 2 ** (failed - 1);
      expect(nextRetryDelayMs(failed, behavior, 0)).toBe(
        Math.round(nominal * (1 - JITTER_FRACTION)),
      );
      expect(nextRetryDelayMs(failed, behavior, 0.5)).toBe(nominal);
      expect(nextRetryDelayMs(failed, behavior, 0.999999)).toBeLessThanOrEqual(
        Math.round(nominal * (1 + JITTER_FRACTION)),
      );
    }
  });
});

describe("maxBackoffMs", () => {
  const capped = { maxAttempts: 20, initialBackoffMs: 1000, base: 2, maxBackoffMs: 3_600_000 };

  it("caps the wait, jitter included: the 20th attempt waits at most an hour, not days", () => {
    for (const random of [0, 0.25, 0.5, 0.999999]) {
      expect(nextRetryDelayMs(19, capped, random)).toBeLessThanOrEqual(3_600_000);
    }
    expect(nextRetryDelayMs(19, capped, 0)).toBe(3_600_000 * (1 - JITTER_FRACTION));
    expect(nextRetryDelayMs(19, { ...capped, maxBackoffMs: undefined }, 0.5)).toBe(1000 * 2 ** 18);
  });

  it("spreads capped waits below the cap, so a burst of them does not align", () => {
    const waits = [0, 0.2, 0.4, 0.6, 0.8].map((random) => nextRetryDelayMs(19, capped, random));
    expect(new Set(waits).size).toBe(5);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(3_600_000 * (1 - JITTER_FRACTION));
  });

  it("a wait just under the cap is not pushed past it by jitter", () => {
    // nominal 2,048 s; +50 % would be 3,072 s, over a 2,500 s cap
    const near = { ...capped, maxBackoffMs: 2_500_000 };
    expect(nextRetryDelayMs(12, near, 0.999999)).toBeLessThanOrEqual(2_500_000);
    expect(nextRetryDelayMs(12, near, 0)).toBe(1_024_000);
  });

  it("never waits past MAX_DELAY_MS, however many attempts: no Infinity, no NaN", () => {
    const endless = { maxAttempts: 10_000, initialBackoffMs: 1000, base: 10 };
    expect(nextRetryDelayMs(5_000, endless, 0.5)).toBeLessThanOrEqual(MAX_DELAY_MS);
    expect(nextRetryDelayMs(5_000, { ...endless, initialBackoffMs: 0 }, 0.5)).toBe(0);
  });

  it("clamps a snooze's delay to MAX_DELAY_MS", () => {
    const decision = decideCompletion({ kind: "snoozed", delayMs: 1e15 }, { attempt: 1 }, 0.5);
    expect(decision).toEqual({ kind: "snooze", delayMs: MAX_DELAY_MS });
  });

  it("leaves waits below the cap alone", () => {
    expect(nextRetryDelayMs(3, capped, 0.5)).toBe(4000);
  });
});

describe("decideCompletion", () => {
  const failed = { kind: "failed" as const, error: "boom" };

  it("finishes a success with its return value", () => {
    expect(decideCompletion({ kind: "success", returnValue: 7 }, { attempt: 1 }, 0.5)).toEqual({
      kind: "finish",
      result: { kind: "success", returnValue: 7 },
    });
  });

  it("retries a failure while attempts remain", () => {
    const decision = decideCompletion(failed, { attempt: 3, retryBehavior: behavior }, 0.5);
    expect(decision).toEqual({ kind: "retry", delayMs: 1000 });
  });

  it("fails after maxAttempts attempts", () => {
    expect(decideCompletion(failed, { attempt: 4, retryBehavior: behavior }, 0.5)).toEqual({
      kind: "finish",
      result: { kind: "failed", error: "boom" },
    });
  });

  it("never retries without a retry behavior", () => {
    expect(decideCompletion(failed, { attempt: 1 }, 0.5).kind).toBe("finish");
  });

  it("never retries a NonRetryableError", () => {
    const decision = decideCompletion(
      { ...failed, nonRetryable: true },
      { attempt: 1, retryBehavior: behavior },
      0.5,
    );
    expect(decision).toEqual({ kind: "finish", result: { kind: "failed", error: "boom" } });
  });

  it("reports canceled for a canceled job that would have retried", () => {
    const decision = decideCompletion(
      failed,
      { attempt: 1, retryBehavior: behavior, canceled: true },
      0.5,
    );
    expect(decision).toEqual({ kind: "finish", result: { kind: "canceled" } });
  });

  it("reports the real outcome of a canceled job that succeeded", () => {
    const decision = decideCompletion(
      { kind: "success", returnValue: null },
      { attempt: 1, retryBehavior: behavior, canceled: true },
      0.5,
    );
    expect(decision).toEqual({ kind: "finish", result: { kind: "success", returnValue: null } });
  });
});
