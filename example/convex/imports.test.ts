// The example's import: many rows as one group, its progress live, one onComplete with the counts.
import { describe, expect, it } from "vitest";
import { api } from "./_generated/api.js";
import { runFor, setup, useExampleApp } from "./test.setup.js";

useExampleApp();

const sim = { ms: 200, failRate: 0.1, seed: 3 };

/** `n` rows named row-0…, the ones at `blank` without a title (bad data, not retried). */
function rows(n: number, from = 0, blank: number[] = []) {
  return Array.from({ length: n }, (_, i) => ({
    key: `row-${from + i}`,
    title: blank.includes(from + i) ? "" : `Article ${from + i}`,
  }));
}

describe("imports", () => {
  it("shows an import's progress as its rows run, then finishes it once with the counts", async () => {
    const t = setup();
    const importId = await t.mutation(api.imports.startImport, {
      name: "articles",
      rows: rows(40, 0, [7, 21]),
      ...sim,
    });
    const first = await t.query(api.imports.importProgress, { importId });
    expect(first.status).toMatchObject({ name: "articles", closed: true, done: false, total: 40 });
    expect(first.status!.pending + first.status!.running).toBe(40);
    expect(first.finished).toBeUndefined();
    // Part way: some rows finished, the counts always adding up to the total.
    await runFor(600);
    const partway = (await t.query(api.imports.importProgress, { importId })).status!;
    const { pending, running, succeeded, failed, canceled } = partway;
    expect(pending + running + succeeded + failed + canceled).toBe(40);
    expect(succeeded).toBeGreaterThan(0);
    expect(partway.done).toBe(false);
    await runFor(30_000);
    const end = await t.query(api.imports.importProgress, { importId });
    expect(end.status).toMatchObject({ done: true, pending: 0, running: 0 });
    expect(end.status!.failed).toBeGreaterThanOrEqual(2); // the two blank rows at least
    expect(end.finished?.counts).toEqual({
      succeeded: end.status!.succeeded,
      failed: end.status!.failed,
      canceled: 0,
    });
    expect(end.finished!.counts.succeeded + end.finished!.counts.failed).toBe(40);
    expect(end.finished!.at).toBeGreaterThanOrEqual(end.status!.finishedAt!);
  });

  it("takes rows from several transactions, and finishes only once they are all in", async () => {
    const t = setup();
    const importId = await t.mutation(api.imports.startImport, {
      name: "big",
      rows: rows(10),
      more: true,
      ...sim,
      failRate: 0,
    });
    await runFor(5000);
    // Every row so far finished, but the import is still taking rows: not done.
    const waiting = await t.query(api.imports.importProgress, { importId });
    expect(waiting.status).toMatchObject({ closed: false, done: false, succeeded: 10 });
    expect(waiting.finished).toBeUndefined();
    await t.mutation(api.imports.addRows, { importId, rows: rows(5, 10), ...sim, failRate: 0 });
    await t.mutation(api.imports.finishEnqueueing, { importId });
    await runFor(5000);
    const end = await t.query(api.imports.importProgress, { importId });
    expect(end.status).toMatchObject({ closed: true, done: true, total: 15, succeeded: 15 });
    expect(end.finished?.counts).toEqual({ succeeded: 15, failed: 0, canceled: 0 });
  });
});
