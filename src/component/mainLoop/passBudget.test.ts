/**
 * The pass budget (passBudget.ts) and how the backstop reads a failed pass (pass.ts `inStage`,
 * watchdog.ts `isLimitError`), on a pass whose transaction metrics are given.
 */
import { describe, expect, it } from "vitest";
import type { Pass } from "./pass.js";
import { inStage, stageOfError } from "./pass.js";
import {
  budgetRoom,
  budgetSpent,
  budgetUnits,
  NARROW_SHARE,
  reachedShare,
  STAGE_SHARE,
} from "./passBudget.js";
import { isLimitError } from "./watchdog.js";

type Used = Partial<Record<string, number>>;

/** Convex's limits, as the platform reports them (used + remaining). */
const LIMITS = {
  functionsScheduled: 1_000,
  documentsRead: 32_000,
  documentsWritten: 16_000,
  bytesRead: 16 * 1024 * 1024,
  bytesWritten: 16 * 1024 * 1024,
  databaseQueries: 4_096,
};

function metrics(used: Used) {
  return Object.fromEntries(
    Object.entries(LIMITS).map(([metric, limit]) => [
      metric,
      { used: used[metric] ?? 0, remaining: limit - (used[metric] ?? 0) },
    ]),
  );
}

/** A pass whose transaction has used `used`, owing `deliveries` deliverers. */
function passWith(used: Used, deliveries = 0, share?: number): Pass {
  return {
    ctx: { meta: { getTransactionMetrics: async () => metrics(used) } },
    deliveries: Array.from({ length: deliveries }, () => ({})),
    actionStarts: [],
    ...(share === undefined ? {} : { budgetShare: share }),
  } as unknown as Pass;
}

describe("the pass budget", () => {
  it("lets the stages use half of each limit, and records which stage it stopped", async () => {
    expect(STAGE_SHARE).toBe(0.5);
    const pass = passWith({ functionsScheduled: 499 });
    expect(await budgetSpent(pass, "deliveryCheck")).toBe(false);
    expect(await budgetSpent(pass, "deliveryCheck", { functionsScheduled: 1 })).toBe(true);
    expect(pass.budgetStop).toEqual({ stage: "deliveryCheck", metric: "functionsScheduled" });
  });

  it("counts the deliverers the stages owe as schedules already spent", async () => {
    expect(
      await budgetRoom(passWith({ functionsScheduled: 100 }), "cancels", "functionsScheduled"),
    ).toBe(400);
    expect(
      await budgetRoom(passWith({ functionsScheduled: 100 }, 150), "cancels", "functionsScheduled"),
    ).toBe(250);
  });

  it("sizes a batch by the scarcest metric of its unit's cost", async () => {
    const pass = passWith({ databaseQueries: 2_000, functionsScheduled: 10 });
    // 48 ranges left at 6 a start: 8 starts, though schedules would allow 245.
    expect(await budgetUnits(pass, "start", { functionsScheduled: 2, databaseQueries: 6 })).toBe(8);
    expect(pass.budgetStop).toBeUndefined();
  });

  it("allows no unit once any metric is spent, even one the unit does not name", async () => {
    const pass = passWith({ documentsWritten: 8_000 });
    expect(await budgetUnits(pass, "completions", { functionsScheduled: 1 })).toBe(0);
    expect(pass.budgetStop).toEqual({ stage: "completions", metric: "documentsWritten" });
  });

  it("gives a narrow pass a sixteenth of the ordinary share", async () => {
    const pass = passWith({}, 0, NARROW_SHARE);
    expect(await budgetRoom(pass, "start", "functionsScheduled")).toBe(31);
  });

  it("tells a transaction that reached a share of any limit (the sweeper's measure)", () => {
    expect(reachedShare(metrics({ documentsWritten: 3_999 }) as any, 0.25)).toBeUndefined();
    expect(reachedShare(metrics({ documentsWritten: 4_000 }) as any, 0.25)).toBe(
      "documentsWritten",
    );
  });
});

describe("how the backstop reads a failed pass", () => {
  it("names the stage a pass failed in, from the error the scheduler keeps", async () => {
    const error = await inStage("deliveryCheck", async () => {
      throw new Error("Scheduled too many functions in a single function execution (limit: 1000)");
    }).catch((e: Error) => e.message);
    expect(stageOfError(String(error))).toBe("deliveryCheck");
    expect(stageOfError("Documents read from or written to a table changed")).toBeUndefined();
  });

  it("tells Convex's limits from passing failures", () => {
    for (const limit of [
      "Scheduled too many functions in a single function execution (limit: 1000). This is a Convex limit",
      "Too many index ranges read in a single function execution (limit: 4096)",
      "Wrote too much data in a single function execution (limit: 16777216 bytes)",
      'Value is too nested (nested 17 levels deep > maximum nesting 16) (a document of table "work")',
    ]) {
      expect(isLimitError(limit), limit).toBe(true);
    }
    for (const passing of [
      "Documents read from or written to a table changed while this mutation was being run and on every subsequent retry",
      "Transient error while executing the mutation",
      "the pass failed (the scheduler kept no error)",
    ]) {
      expect(isLimitError(passing), passing).toBe(false);
    }
  });
});
