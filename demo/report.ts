// The demo's report page (demo-out/report.html, written by workload.demo.ts): a pure function from
// the run's readings of the pool (reportFigures.ts) to one self-contained HTML page for an operator:
// settings, summary figures, running and pending over time, outcomes, per-key progress, the
// slowest and the failed jobs; then the second run, the same jobs as ordinary actions and as an
// executor's tasks, side by side (reportComparison.ts). The app's own tables (jobs, attempts,
// outcomes) are not used: the page shows what an operator of any app could see. Inline CSS and SVG
// (reportCharts.ts): no script, no URL, and a Content-Security-Policy that lets it load nothing. No
// I/O here.
import type { ListedWorkInfo } from "../src/client/index.js";
import { escapeXml } from "./chart.js";
import { CHART_SIZE, COLOR, keyBar, OUTCOME_ROWS, outcomeBars, timeChart } from "./reportCharts.js";
import { comparisonSection } from "./reportComparison.js";
import {
  attemptsOf,
  KEY_ROWS,
  ranMs,
  reportFigures,
  runSpan,
  type ReportData,
} from "./reportFigures.js";
import { count, duration, type Figure } from "./reportFormat.js";

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; color: #222; background: #f6f7f9; margin: 0; }
main { max-width: 916px; margin: 0 auto; padding: 20px 16px 40px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 16px; margin: 0 0 10px; }
section { background: white; border: 1px solid #dde1e6; border-radius: 6px; padding: 14px 16px; margin-top: 14px; }
.sub, .note { color: #5c6370; }
.note { font-size: 12px; }
dl.settings { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dl.settings dt { color: #5c6370; }
dl.settings dd { margin: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(160px, 1fr)); gap: 8px; }
.card { border: 1px solid #e3e6ea; border-radius: 5px; padding: 8px 10px; }
.card .label { color: #5c6370; font-size: 12px; }
.card .value { font-size: 20px; font-weight: 600; font-variant-numeric: tabular-nums; }
.card.bad .value { color: ${COLOR.failed}; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceef1; vertical-align: middle; }
th { color: #5c6370; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.err { color: ${COLOR.failed}; font-family: ui-monospace, monospace; font-size: 12px; }
tr.total td { font-weight: 600; border-top: 2px solid #dde1e6; }
.pair { display: grid; grid-template-columns: repeat(2, ${CHART_SIZE.compare.width}px); gap: 10px; margin-top: 12px; }
h3 { font-size: 14px; margin: 0 0 4px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin: 0 4px 0 10px; }
code { font-size: 12px; }
`;

/** The page: one self-contained HTML document. */
export function reportHtml(data: ReportData): string {
  const e = escapeXml;
  const figures = reportFigures(data);
  const { t0, end } = runSpan(data);
  const at = (ms: number | undefined) => (ms === undefined ? "—" : `+${duration(ms - t0)}`);
  const dd = (f: Figure) =>
    `<dt>${e(f.label)}</dt><dd><span data-figure="${e(f.name)}">${e(f.value)}</span>` +
    (f.note ? ` <span class="note">(${e(f.note)})</span>` : "") +
    `</dd>`;
  const card = (f: Figure) =>
    `<div class="card${f.name === "summary.failed" && data.jobs.failed > 0 ? " bad" : ""}">` +
    `<div class="label">${e(f.label)}</div><div class="value" data-figure="${e(f.name)}">${e(f.value)}</div>` +
    (f.note ? `<div class="note">${e(f.note)}</div>` : "") +
    `</div>`;
  const limitSeries = {
    name: "maxParallelism",
    label: "maxParallelism",
    color: COLOR.limit,
    dash: "7 4",
    points: data.samples.map((s) => ({ at: s.at, value: s.maxParallelism })),
  };
  const keyParallelism = Math.min(...data.keys.map((k) => k.status.parallelism));
  const keyLimit = data.keys.length * keyParallelism;
  const keyLimitSeries =
    data.keys.length && keyLimit < data.final.maxParallelism
      ? [
          {
            name: "keyLimit",
            label: `keys × keyParallelism (${keyLimit})`,
            color: COLOR.keyLimit,
            dash: "2 4",
            points: data.samples.slice(0, 1).map((s) => ({ at: s.at, value: keyLimit })),
          },
        ]
      : [];
  const runningChart = timeChart({
    name: "running",
    yLabel: "jobs running",
    t0,
    end,
    series: [
      {
        name: "running",
        label: "running (stats)",
        color: COLOR.running,
        fill: true,
        points: data.samples.map((s) => ({ at: s.at, value: s.running })),
      },
      limitSeries,
      ...keyLimitSeries,
    ],
  });
  const pendingChart = timeChart({
    name: "pending",
    yLabel: "jobs pending",
    t0,
    end,
    series: [
      {
        name: "pending",
        label: "pending (stats): due, delayed, waiting for a key or a retry's backoff",
        color: COLOR.pending,
        fill: true,
        points: data.samples.map((s) => ({ at: s.at, value: s.pending })),
      },
    ],
  });
  const outcomes = outcomeBars({
    succeeded: data.jobs.succeeded,
    failed: data.jobs.failed,
    canceled: data.jobs.canceled,
    running: data.final.running,
    pending: data.final.pending,
  });

  const jobCells = (job: ListedWorkInfo) =>
    `<td><code>${e(job.id)}</code></td><td>${e(job.name)}</td><td>${e(job.key ?? "—")}</td>` +
    `<td>${e(job.priority)}</td><td class="n">${attemptsOf(job)}</td>`;
  const jobHead = `<th>job id</th><th>function</th><th>key</th><th>priority</th><th>attempts</th>`;
  const slowest = data.jobs.slowest.length
    ? `<table data-table="slowest"><tr>${jobHead}<th>last attempt ran</th><th>enqueue → finish</th><th>outcome</th></tr>` +
      data.jobs.slowest
        .map(
          (job) =>
            `<tr data-job="${e(job.id)}">${jobCells(job)}<td class="n">${duration(ranMs(job))}</td>` +
            `<td class="n">${duration(job.finishedAt! - job.enqueuedAt)}</td><td>${e(job.result?.kind ?? job.state)}</td></tr>`,
        )
        .join("\n") +
      `</table>`
    : `<p>No job has finished yet.</p>`;
  const failed = data.jobs.failedJobs.length
    ? `<table data-table="failed"><tr>${jobHead}<th>finished</th><th>error</th></tr>` +
      data.jobs.failedJobs
        .map(
          (job) =>
            `<tr data-job="${e(job.id)}">${jobCells(job)}<td class="n">${at(job.finishedAt)}</td>` +
            `<td class="err">${e(job.result?.kind === "failed" ? job.result.error : "")}</td></tr>`,
        )
        .join("\n") +
      `</table>` +
      (data.jobs.failed > data.jobs.failedJobs.length
        ? `<p class="note">The newest ${data.jobs.failedJobs.length} of ${count(data.jobs.failed)}; list({ outcome: "failed" }) pages through the rest.</p>`
        : "")
    : `<p>No job failed for good${data.jobs.retries ? ` (${count(data.jobs.retries)} attempts failed and were retried)` : ""}.</p>`;

  const keyFigure = new Map(figures.keys.map((f) => [f.name, f]));
  const keyCells = (prefix: string) =>
    OUTCOME_ROWS.map((k) => {
      const f = keyFigure.get(`${prefix}.${k}`)!;
      return `<td class="n" data-figure="${e(f.name)}">${e(f.value)}</td>`;
    }).join("");
  const keySection = data.keys.length
    ? `<section><h2>Per-key progress</h2>
<p class="sub">Each key's <code>keyStatus</code> at the end of the run.${OUTCOME_ROWS.map((k) => `<span class="swatch" style="background:${COLOR[k]}"></span>${k}`).join("")}</p>
<table data-table="keys"><tr><th>key</th><th>jobs by state</th>${OUTCOME_ROWS.map((k) => `<th>${k}</th>`).join("")}<th>paused</th><th>parallelism</th></tr>
${data.keys
  .slice(0, KEY_ROWS)
  .map(
    ({ key, status }) =>
      `<tr data-key="${e(key)}"><td>${e(key)}</td><td>${keyBar(status)}</td>${keyCells(`key.${key}`)}` +
      `<td>${status.paused ? "yes" : "no"}</td><td class="n">${status.parallelism}</td></tr>`,
  )
  .join("\n")}
<tr class="total"><td>all ${count(data.keys.length)} keys</td><td></td>${keyCells("keys.total")}<td></td><td></td></tr>
</table>${data.keys.length > KEY_ROWS ? `<p class="note">${count(data.keys.length - KEY_ROWS)} more keys are counted in the total, not listed.</p>` : ""}
</section>`
    : "";

  const title = `${data.settings.pool}: run report`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${e(title)}</h1>
<p class="sub">Run started ${e(new Date(t0).toISOString())} on convex-test's embedded backend with a virtual clock. Every figure comes from the pool itself: <code>stats</code> (sampled every ${data.sampleEveryMs} ms, ${count(data.samples.length)} samples, and at the end), <code>list</code> (all ${count(data.jobs.total)} jobs) and <code>keyStatus</code>.</p>
<section><h2>Settings</h2><dl class="settings">${figures.settings.map(dd).join("\n")}</dl></section>
<section><h2>Summary</h2><div class="cards">${figures.summary.map(card).join("\n")}</div>
<p class="note">Events in the last minute of the run (<code>stats().lastMinute</code>): ${figures.lastMinute.map((f) => `${e(f.label)} <b data-figure="${e(f.name)}">${e(f.value)}</b>`).join(", ")}.</p>
<p class="note">Since the pool began (<code>stats().totals</code>): ${figures.totals.map((f) => `${e(f.label)} <b data-figure="${e(f.name)}">${e(f.value)}</b>`).join(", ")}.</p></section>
<section><h2>Running jobs over time</h2>${runningChart}</section>
<section><h2>Queue depth over time</h2>${pendingChart}</section>
<section><h2>Outcomes</h2>${outcomes}</section>
${keySection}
<section><h2>Slowest jobs</h2><p class="sub">Finished jobs whose last attempt ran longest (<code>list</code>: startedAt to finishedAt).</p>${slowest}</section>
<section><h2>Failed jobs</h2><p class="sub">Jobs that failed for good (out of attempts, or not retryable), newest first, with the error onComplete got.</p>${failed}</section>
${data.comparison ? comparisonSection(data.comparison, new Map(figures.compare.map((f) => [f.name, f]))) : ""}
</main>
</body>
</html>
`;
}
