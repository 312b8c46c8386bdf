/**
 * The per-pass budget check (test/passBudget.ts, applied after every test by
 * test/passBudget.setup.ts) can fail, and it really hears the loop's passes.
 */
import { describe, expect, it } from "vitest";
import { enqueue, runFor, setup } from "./helpers.js";
import {
  checkPassBudget,
  emptyPassRecord,
  isMainPass,
  PASS_BUDGET,
  PASS_BUDGET_BYTES_WRITTEN,
  PASS_BUDGET_DOCUMENTS_READ,
  PASS_BUDGET_INDEX_RANGES,
  recordedPasses,
  recordPass,
} from "./passBudget.js";

const MAIN = "workpool:mainLoop/main:main (mutation)";
const small = {
  documentsRead: 10,
  documentsWritten: 5,
  bytesRead: 1_000,
  bytesWritten: 500,
  databaseQueries: 8,
};

describe("pass budget", () => {
  it("passes a record within budget", () => {
    const record = emptyPassRecord();
    recordPass(record, MAIN, small);
    recordPass(record, MAIN, { ...PASS_BUDGET });
    expect(record.count).toBe(2);
    expect(() => checkPassBudget(record)).not.toThrow();
  });

  it("fails naming the metric, the value, the budget and the function", () => {
    const record = emptyPassRecord();
    recordPass(record, MAIN, small);
    recordPass(record, "emailPool:mainLoop/main:main (mutation)", {
      ...small,
      documentsRead: PASS_BUDGET_DOCUMENTS_READ + 1,
    });
    expect(record.worst).toMatchObject({
      fn: "emailPool:mainLoop/main:main (mutation)",
      metric: "documentsRead",
    });
    expect(() => checkPassBudget(record)).toThrow(
      `documentsRead ${PASS_BUDGET_DOCUMENTS_READ + 1} > budget ${PASS_BUDGET_DOCUMENTS_READ} ` +
        `in emailPool:mainLoop/main:main (mutation)`,
    );
  });

  it("names every metric over budget, each with its own worst pass", () => {
    const record = emptyPassRecord();
    recordPass(record, "a:mainLoop/main:main (mutation)", {
      ...small,
      bytesWritten: PASS_BUDGET_BYTES_WRITTEN * 2,
    });
    recordPass(record, "b:mainLoop/main:main (mutation)", {
      ...small,
      databaseQueries: PASS_BUDGET_INDEX_RANGES + 1,
    });
    let message = "";
    try {
      checkPassBudget(record);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain(
      `bytesWritten ${PASS_BUDGET_BYTES_WRITTEN * 2} > budget ${PASS_BUDGET_BYTES_WRITTEN} in a:mainLoop/main:main`,
    );
    expect(message).toContain(
      `databaseQueries ${PASS_BUDGET_INDEX_RANGES + 1} > budget ${PASS_BUDGET_INDEX_RANGES} in b:mainLoop/main:main`,
    );
    expect(message).not.toContain("documentsRead");
    expect(record.worst).toMatchObject({
      fn: "a:mainLoop/main:main (mutation)",
      metric: "bytesWritten",
    });
  });

  it("recognizes main in any component, and nothing else", () => {
    expect(isMainPass("workpool:mainLoop/main:main (mutation)")).toBe(true);
    expect(isMainPass("scrapePool:mainLoop/main:main (mutation)")).toBe(true);
    expect(isMainPass("workpool:lib:enqueue (mutation)")).toBe(false);
    expect(isMainPass("app:mainLoop/main:mainly (mutation)")).toBe(false);
  });

  it("hears the loop's real passes (and only them)", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "a" }]);
    await runFor(t, 2000);
    const record = recordedPasses();
    expect(record.count).toBeGreaterThan(0);
    expect(record.max.documentsRead).toBeGreaterThan(0);
    expect(record.max.databaseQueries).toBeGreaterThan(0);
    expect(record.maxPass.documentsRead?.fn).toBe(MAIN);
    expect(record.worst?.fn).toBe(MAIN);
    expect(() => checkPassBudget(record)).not.toThrow();
  });
});
