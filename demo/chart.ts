// The demo's chart (see workload.demo.ts): a pure function from a run's data to an SVG string of
// jobs running over time, with the pool's limit (and, with keys, the limit the keys make), a legend,
// and lanes marking when attempts failed and were retried and when jobs failed for good. Hand-drawn
// SVG; no I/O here.

/** One point of a step series: from `at` (ms) on, `running` jobs run. */
export type RunningPoint = { at: number; running: number };

export type ChartData = {
  /** The title line: what ran, with the run's settings. */
  title: string;
  /** The pool's maxParallelism. */
  limit: number;
  /** With keys, the most jobs the keys allow at once (keys × keyParallelism); drawn when it is
   * below `limit`. */
  keyLimit?: number;
  /** First enqueue and last completion (epoch ms); the x axis counts seconds from t0. */
  t0: number;
  end: number;
  /** How many jobs run over time (epoch ms), a step series in time order. */
  running: RunningPoint[];
  /** When an attempt failed and the pool retried the job (epoch ms). */
  retriedFailures: number[];
  /** When a retry (attempt 2 or later) started (epoch ms). */
  retryStarts: number[];
  /** When a job failed for good (epoch ms). */
  jobFailures: number[];
  /** A note under the chart (plain text), or "" for none. */
  note: string;
};

/** Ticks of an axis from 0: a round step (1, 2 or 5 × 10^n), the axis end, and the tick values. */
export type Ticks = { step: number; top: number; values: number[] };

const NICE_MANTISSAS = [1, 2, 5, 10];
/** Slack for floating-point error when comparing steps and spans. */
const EPSILON = 1e-9;

/**
 * The smallest round step (1, 2 or 5 × 10^n, at least `minStep`) that covers `span` in at most
 * `maxTicks` steps.
 */
export function niceStep(span: number, maxTicks: number, minStep = 0): number {
  const raw = Math.max(span / Math.max(1, maxTicks), minStep);
  if (!(raw > 0) || !Number.isFinite(raw)) return Math.max(minStep, 1);
  const pow = 10 ** Math.floor(Math.log10(raw));
  const mantissa = NICE_MANTISSAS.find((m) => m * pow >= raw * (1 - EPSILON)) ?? 10;
  // Round away binary noise (e.g. 3 * 0.1): a step has at most one significant digit.
  return Number((mantissa * pow).toPrecision(1));
}

/** Ticks 0, step, 2·step, … up to the first multiple of the step at or above `max`. */
export function niceTicks(max: number, maxTicks: number, minStep = 0): Ticks {
  const step = niceStep(max, maxTicks, minStep);
  const count = Math.max(1, Math.ceil(max / step - EPSILON));
  const values = Array.from({ length: count + 1 }, (_, i) => Number((i * step).toPrecision(12)));
  return { step, top: values[count], values };
}

/** Decimals that show every multiple of `step` exactly (0 for 1, 1 for 0.5, 2 for 0.05). */
function decimalsOf(step: number): number {
  return Math.max(0, -Math.floor(Math.log10(step) + EPSILON));
}

// Layout, in SVG px.
const WIDTH = 900;
const MARGIN = 20; // left of the title and the legend
const PLOT_LEFT = 110; // room for lane labels and the y axis title
const PLOT_RIGHT = 20;
const LEGEND_TOP = 44; // centre of the first legend row
const LEGEND_ROW_HEIGHT = 18;
const LEGEND_CHAR_WIDTH = 6.8; // rough width of a 12 px sans-serif character
const TITLE_SIZE = 14; // px, shrunk for a title that would not fit the width
const TITLE_CHAR_EM = 0.62; // rough width of a bold sans-serif character, in font sizes
const LEGEND_ITEM_GAP = 24;
const PLOT_TOP = 84; // under the title and the two legend rows
const PLOT_HEIGHT = 250;
const TICK_LABEL_GAP = 16; // from the x axis to its tick labels' baseline
const LANE_TOP_GAP = 26; // from the x axis to the first marker lane
const LANE_HEIGHT = 16;
const MAX_X_TICKS = 10;
const MAX_Y_TICKS = 6;
/** Headroom above the limit, as a fraction of it, so the limit line and its label sit inside. */
const Y_HEADROOM = 0.1;

const COLOR = {
  running: "#2a6fdb",
  limit: "#7b2cbf",
  keyLimit: "#2e7d32",
  retry: "#e07b00",
  failure: "#c62828",
  axis: "#333",
  grid: "#e4e4e4",
  muted: "#555",
};

/** Text safe inside XML or HTML markup and double-quoted attributes. */
export const escapeXml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const f1 = (n: number) => n.toFixed(1);

/** Marker shapes, centred on (x, y), shared by the lanes and the legend. */
const marker = {
  tick: (x: number, y: number) =>
    `<line x1="${f1(x)}" y1="${f1(y - 5)}" x2="${f1(x)}" y2="${f1(y + 5)}" stroke="${COLOR.retry}" stroke-opacity="0.7"/>`,
  dot: (x: number, y: number) =>
    `<circle cx="${f1(x)}" cy="${f1(y)}" r="2.5" fill="${COLOR.retry}" fill-opacity="0.7"/>`,
  cross: (x: number, y: number) =>
    `<path d="M ${f1(x - 4)} ${f1(y - 4)} L ${f1(x + 4)} ${f1(y + 4)} M ${f1(x - 4)} ${f1(y + 4)} L ${f1(x + 4)} ${f1(y - 4)}" stroke="${COLOR.failure}" stroke-width="1.5"/>`,
};

/** The chart as a standalone SVG document. */
export function runningChart(data: ChartData): string {
  const spanS = Math.max(0, data.end - data.t0) / 1000;
  const xTicks = niceTicks(spanS, MAX_X_TICKS);
  const peak = Math.max(data.limit, ...data.running.map((p) => p.running), 1);
  const yTicks = niceTicks(peak * (1 + Y_HEADROOM), MAX_Y_TICKS, 1);
  const plotRight = WIDTH - PLOT_RIGHT;
  const plotBottom = PLOT_TOP + PLOT_HEIGHT;
  const x = (at: number) =>
    PLOT_LEFT + ((at - data.t0) / 1000 / xTicks.top) * (plotRight - PLOT_LEFT);
  const y = (n: number) => plotBottom - (n / yTicks.top) * PLOT_HEIGHT;

  const lanes = [
    { label: "failed, retried", times: data.retriedFailures, draw: marker.tick },
    { label: "retry started", times: data.retryStarts, draw: marker.dot },
    { label: "job failed", times: data.jobFailures, draw: marker.cross },
  ].map((lane, i) => ({ ...lane, y: plotBottom + LANE_TOP_GAP + (i + 0.5) * LANE_HEIGHT }));
  const lanesBottom = plotBottom + LANE_TOP_GAP + lanes.length * LANE_HEIGHT;
  const axisTitleY = lanesBottom + 22;
  const noteY = axisTitleY + 20;
  const height = (data.note ? noteY : axisTitleY) + 14;

  // The step line of running jobs, from 0 at t0 to the end.
  let path = `M ${f1(x(data.t0))} ${f1(y(0))}`;
  let previous = 0;
  for (const p of data.running) {
    path += ` H ${f1(x(p.at))} V ${f1(y(p.running))}`;
    previous = p.running;
  }
  path += ` H ${f1(x(data.end))} V ${f1(y(previous))}`;

  const line = (dash: string, color: string) => (sx: number, sy: number) =>
    `<line x1="${f1(sx - 10)}" y1="${f1(sy)}" x2="${f1(sx + 10)}" y2="${f1(sy)}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`;
  const keyLimit =
    data.keyLimit !== undefined && data.keyLimit < data.limit ? data.keyLimit : undefined;
  const legend = legendRows([
    [
      { label: "jobs running (attempts in progress)", swatch: line("", COLOR.running) },
      { label: `maxParallelism limit (${data.limit})`, swatch: line("5 3", COLOR.limit) },
      ...(keyLimit !== undefined
        ? [{ label: `keys × keyParallelism (${keyLimit})`, swatch: line("2 3", COLOR.keyLimit) }]
        : []),
    ],
    [
      { label: `attempt failed, retried (${data.retriedFailures.length})`, swatch: marker.tick },
      { label: `retry started (${data.retryStarts.length})`, swatch: marker.dot },
      { label: `job failed for good (${data.jobFailures.length})`, swatch: marker.cross },
    ],
  ]);

  const yLabelX = PLOT_LEFT - 8;
  const lines = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${escapeXml(data.title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    `<text x="${MARGIN}" y="22" font-size="${titleSize(data.title)}" font-weight="bold">${escapeXml(data.title)}</text>`,
    ...legend,
    // Grid and ticks.
    ...yTicks.values.map(
      (v) =>
        `<line x1="${PLOT_LEFT}" y1="${f1(y(v))}" x2="${plotRight}" y2="${f1(y(v))}" stroke="${COLOR.grid}"/>` +
        `<text x="${yLabelX}" y="${f1(y(v) + 4)}" text-anchor="end">${v}</text>`,
    ),
    ...xTicks.values.map((v) => {
      const tx = f1(x(data.t0 + v * 1000));
      return (
        `<line x1="${tx}" y1="${PLOT_TOP}" x2="${tx}" y2="${lanesBottom}" stroke="${COLOR.grid}"/>` +
        `<text x="${tx}" y="${plotBottom + TICK_LABEL_GAP}" text-anchor="middle">${v.toFixed(decimalsOf(xTicks.step))}</text>`
      );
    }),
    `<line x1="${PLOT_LEFT}" y1="${plotBottom}" x2="${plotRight}" y2="${plotBottom}" stroke="${COLOR.axis}"/>`,
    `<line x1="${PLOT_LEFT}" y1="${plotBottom}" x2="${PLOT_LEFT}" y2="${PLOT_TOP}" stroke="${COLOR.axis}"/>`,
    `<text transform="translate(${PLOT_LEFT - 40} ${PLOT_TOP + PLOT_HEIGHT / 2}) rotate(-90)" text-anchor="middle">jobs running</text>`,
    `<text x="${(PLOT_LEFT + plotRight) / 2}" y="${axisTitleY}" text-anchor="middle">time since first enqueue (s, virtual)</text>`,
    // The trace, then the limit over it.
    `<path d="${path}" fill="none" stroke="${COLOR.running}" stroke-width="1.5"/>`,
    `<line x1="${PLOT_LEFT}" y1="${f1(y(data.limit))}" x2="${plotRight}" y2="${f1(y(data.limit))}" stroke="${COLOR.limit}" stroke-width="2" stroke-dasharray="8 5"/>`,
    `<text x="${plotRight - 4}" y="${f1(y(data.limit) - 6)}" text-anchor="end" fill="${COLOR.limit}">maxParallelism ${data.limit}</text>`,
    ...(keyLimit !== undefined
      ? [
          `<line x1="${PLOT_LEFT}" y1="${f1(y(keyLimit))}" x2="${plotRight}" y2="${f1(y(keyLimit))}" stroke="${COLOR.keyLimit}" stroke-width="2" stroke-dasharray="3 4"/>`,
          `<text x="${plotRight - 4}" y="${f1(y(keyLimit) - 6)}" text-anchor="end" fill="${COLOR.keyLimit}">keys × keyParallelism ${keyLimit}</text>`,
        ]
      : []),
    // Marker lanes.
    ...lanes.flatMap((lane) => [
      `<text x="${yLabelX}" y="${f1(lane.y + 4)}" text-anchor="end" font-size="11" fill="${COLOR.muted}">${lane.label}</text>`,
      ...lane.times.map((at) => lane.draw(x(Math.min(Math.max(at, data.t0), data.end)), lane.y)),
    ]),
    ...(data.note
      ? [
          `<text x="${PLOT_LEFT}" y="${noteY}" font-size="11" fill="${COLOR.muted}">${escapeXml(data.note)}</text>`,
        ]
      : []),
    `</svg>`,
  ];
  return lines.join("\n") + "\n";
}

/** The title's font size: TITLE_SIZE, or less (down to 9 px) for a title too long to fit. */
function titleSize(title: string): number {
  const fits = (WIDTH - 2 * MARGIN) / (TITLE_CHAR_EM * Math.max(1, title.length));
  return Math.max(9, Math.min(TITLE_SIZE, Math.floor(fits * 2) / 2));
}

type LegendItem = { label: string; swatch: (x: number, y: number) => string };

/** Legend rows under the title, each entry a swatch then its label. */
function legendRows(rows: LegendItem[][]): string[] {
  return rows.flatMap((items, row) => {
    const y = LEGEND_TOP + row * LEGEND_ROW_HEIGHT;
    let cursor = MARGIN + 10;
    return items.map(({ label, swatch }) => {
      const svg =
        swatch(cursor, y) +
        `<text x="${f1(cursor + 16)}" y="${f1(y + 4)}">${escapeXml(label)}</text>`;
      cursor += 16 + label.length * LEGEND_CHAR_WIDTH + LEGEND_ITEM_GAP;
      return svg;
    });
  });
}
