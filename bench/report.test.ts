/**
 * The bench report (bench/report/) rendered from made-up runs (bench/reportFixture.ts): the
 * document, the console report and the progress lines, held to snapshots, so that reorganising the
 * report's code cannot change what it writes unnoticed. A change of wording or layout that is meant
 * updates the snapshots (`npx vitest run bench/report.test.ts -u`); review their diff as you would
 * the document's. No backend and no clock: pure functions of the fixture.
 */
import { describe, expect, it } from "vitest";
import { progressLine, renderConsole, renderDocument } from "./report/document.js";
import { failingRun, fixtureRun } from "./reportFixture.js";

describe("bench report of a fixture run", () => {
  it("renders the document", () => {
    expect(renderDocument(fixtureRun())).toMatchSnapshot();
  });

  it("renders the console report", () => {
    expect(renderConsole(fixtureRun())).toMatchSnapshot();
  });

  it("prints a progress line per run", () => {
    const lines = fixtureRun().scenarios.flatMap((s) =>
      [s.ours, s.peer].flatMap((r) => (r ? [progressLine(r, { error: 0, warn: 1 })] : [])),
    );
    expect(lines.join("")).toMatchSnapshot();
  });
});

describe("bench report of a run that failed its checks", () => {
  it("renders the document, with the failures and the runs left out", () => {
    expect(renderDocument(failingRun())).toMatchSnapshot();
  });
});
