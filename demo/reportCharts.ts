// The report page's charts (see report.ts): pure functions from numbers to inline SVG strings, in
// the style of chart.ts (hand-drawn SVG, round ticks from niceTicks). Each SVG has fixed `width` and
// `height` (CHART_SIZE, exported so the browser test can check what rendered) and a `data-chart`
// name; no `xmlns`, since inline SVG in HTML needs none and the page holds no URL at all.
import { escapeXml, niceTicks } from "./chart.js";

/** Colours shared by the charts and the page's legend swatches. */
export const COLOR = {
  succeeded: "#2e7d32",
  failed: "#c62828",
  canceled: "#8d8d8d",
  running: "#2a6fdb",
  pending: "#e59400",
  limit: "#7b2cbf",
  keyLimit: "#2e7d32",
  axis: "#333",
  grid: "#e4e4e4",
  empty: "#eeeeee",
};

/** Sizes in CSS px: the time charts (and the comparison's, two side by side), the outcome bars (one
 * row per OUTCOME_ROWS entry), one key's progress bar. */
export const CHART_SIZE = {
  time: { width: 880, height: 250 },
  compare: { width: 420, height: 220 },
  outcomes: { width: 880, height: 140 },
  keyBar: { width: 260, height: 14 },
};

// Layout of a time chart, in px.
const PLOT_LEFT = 64; // room for the y tick labels and the y axis title
const PLOT_RIGHT = 16;
const PLOT_TOP = 34; // under the legend row
const PLOT_BOTTOM_GAP = 44; // x tick labels and the x axis title
const LEGEND_Y = 16;
const LEGEND_CHAR_WIDTH = 6.8; // rough width of a 12 px sans-serif character
const LEGEND_ITEM_GAP = 22;
const MAX_X_TICKS = 10; // on a chart of CHART_SIZE.time's width; fewer on a narrower one
const MAX_Y_TICKS = 5;
/** Headroom above the highest value, as a fraction of it, so a line at the top stays visible. */
const Y_HEADROOM = 0.1;

const f1 = (n: number) => n.toFixed(1);

/** A value held from `at` (epoch ms) until the next point: a sample of a gauge such as `running`. */
export type TimePoint = { at: number; value: number };

export type Series = {
  /** The line's `data-series` name. */
  name: string;
  label: string;
  color: string;
  points: TimePoint[];
  /** A dashed line (e.g. a limit) instead of a solid one. */
  dash?: string;
  /** Shade the area under the line. */
  fill?: boolean;
};

export type TimeChartSpec = {
  /** The `data-chart` name. */
  name: string;
  /** What the y axis counts, e.g. "jobs running". */
  yLabel: string;
  /** The x axis runs from t0 to end (epoch ms), labelled in seconds from t0. */
  t0: number;
  end: number;
  series: Series[];
  /** Width and height in px (default CHART_SIZE.time). */
  size?: { width: number; height: number };
};

/** Lines of gauges sampled over time, each drawn as steps (a sample holds until the next one). */
export function timeChart(spec: TimeChartSpec): string {
  const { width, height } = spec.size ?? CHART_SIZE.time;
  const plotRight = width - PLOT_RIGHT;
  const plotBottom = height - PLOT_BOTTOM_GAP;
  const spanS = Math.max(0, spec.end - spec.t0) / 1000;
  // A narrower chart gets fewer x ticks, so their labels keep their room.
  const xTicks = niceTicks(
    spanS,
    Math.max(4, Math.round((MAX_X_TICKS * width) / CHART_SIZE.time.width)),
  );
  const peak = Math.max(1, ...spec.series.flatMap((s) => s.points.map((p) => p.value)));
  const yTicks = niceTicks(peak * (1 + Y_HEADROOM), MAX_Y_TICKS, 1);
  const clampAt = (at: number) => Math.min(Math.max(at, spec.t0), spec.end);
  const x = (at: number) =>
    PLOT_LEFT + ((clampAt(at) - spec.t0) / 1000 / xTicks.top) * (plotRight - PLOT_LEFT);
  const y = (v: number) => plotBottom - (v / yTicks.top) * (plotBottom - PLOT_TOP);

  const stepPath = (points: TimePoint[]) => {
    if (points.length === 0) return "";
    let d = `M ${f1(x(points[0].at))} ${f1(y(points[0].value))}`;
    for (const p of points.slice(1)) d += ` H ${f1(x(p.at))} V ${f1(y(p.value))}`;
    return d + ` H ${f1(x(spec.end))}`;
  };
  const lines = spec.series.flatMap((s) => {
    const d = stepPath(s.points);
    if (!d) return [];
    const area =
      s.fill && s.points.length
        ? `<path d="${d} V ${f1(plotBottom)} H ${f1(x(s.points[0].at))} Z" fill="${s.color}" fill-opacity="0.12" stroke="none"/>`
        : "";
    return [
      area +
        `<path data-series="${escapeXml(s.name)}" d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.dash ? 2 : 1.5}"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}/>`,
    ];
  });

  let cursor = PLOT_LEFT;
  const legend = spec.series.map((s) => {
    const item =
      `<line x1="${f1(cursor)}" y1="${LEGEND_Y}" x2="${f1(cursor + 20)}" y2="${LEGEND_Y}" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ""}/>` +
      `<text x="${f1(cursor + 26)}" y="${LEGEND_Y + 4}">${escapeXml(s.label)}</text>`;
    cursor += 26 + s.label.length * LEGEND_CHAR_WIDTH + LEGEND_ITEM_GAP;
    return item;
  });
  const xDecimals = Math.max(0, -Math.floor(Math.log10(xTicks.step) + 1e-9));
  return [
    `<svg data-chart="${escapeXml(spec.name)}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(spec.yLabel)} over time" font-family="sans-serif" font-size="12">`,
    ...yTicks.values.map(
      (v) =>
        `<line x1="${PLOT_LEFT}" y1="${f1(y(v))}" x2="${plotRight}" y2="${f1(y(v))}" stroke="${COLOR.grid}"/>` +
        `<text x="${PLOT_LEFT - 6}" y="${f1(y(v) + 4)}" text-anchor="end">${v}</text>`,
    ),
    ...xTicks.values.map((v) => {
      const tx = f1(PLOT_LEFT + (v / xTicks.top) * (plotRight - PLOT_LEFT));
      return (
        `<line x1="${tx}" y1="${PLOT_TOP}" x2="${tx}" y2="${plotBottom}" stroke="${COLOR.grid}"/>` +
        `<text x="${tx}" y="${plotBottom + 16}" text-anchor="middle">${v.toFixed(xDecimals)}</text>`
      );
    }),
    `<path d="M ${PLOT_LEFT} ${PLOT_TOP} V ${plotBottom} H ${plotRight}" fill="none" stroke="${COLOR.axis}"/>`,
    `<text transform="translate(16 ${(PLOT_TOP + plotBottom) / 2}) rotate(-90)" text-anchor="middle">${escapeXml(spec.yLabel)}</text>`,
    `<text x="${(PLOT_LEFT + plotRight) / 2}" y="${height - 6}" text-anchor="middle">seconds since the first enqueue (virtual clock)</text>`,
    ...lines,
    ...legend,
    `</svg>`,
  ].join("\n");
}

/** The outcome bars' rows, top to bottom. */
export const OUTCOME_ROWS = ["succeeded", "failed", "canceled", "running", "pending"] as const;
export type OutcomeCounts = Record<(typeof OUTCOME_ROWS)[number], number>;

const BAR_LABEL_WIDTH = 90;
const BAR_ROW_HEIGHT = 26;
const BAR_THICKNESS = 16;
const BAR_VALUE_ROOM = 80; // right of the longest bar, for its count

/** One horizontal bar per outcome (and the unfinished states), each labelled with its count. */
export function outcomeBars(counts: OutcomeCounts): string {
  const { width, height } = CHART_SIZE.outcomes;
  const most = Math.max(1, ...OUTCOME_ROWS.map((row) => counts[row]));
  const barMax = width - BAR_LABEL_WIDTH - BAR_VALUE_ROOM;
  const rows = OUTCOME_ROWS.map((row, i) => {
    const top = 8 + i * BAR_ROW_HEIGHT;
    const w = (counts[row] / most) * barMax;
    return (
      `<text x="${BAR_LABEL_WIDTH - 8}" y="${top + 12}" text-anchor="end">${row}</text>` +
      `<rect x="${BAR_LABEL_WIDTH}" y="${top}" width="${f1(w)}" height="${BAR_THICKNESS}" fill="${COLOR[row]}"/>` +
      `<text x="${f1(BAR_LABEL_WIDTH + w + 6)}" y="${top + 12}">${counts[row]}</text>`
    );
  });
  return [
    `<svg data-chart="outcomes" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="jobs by outcome" font-family="sans-serif" font-size="12">`,
    ...rows,
    `</svg>`,
  ].join("\n");
}

/** One key's jobs as a stacked bar: succeeded, failed, canceled, running, pending, in proportion. */
export function keyBar(counts: OutcomeCounts): string {
  const { width, height } = CHART_SIZE.keyBar;
  const total = OUTCOME_ROWS.reduce((sum, row) => sum + counts[row], 0);
  let left = 0;
  const segments = OUTCOME_ROWS.filter((row) => counts[row] > 0).map((row) => {
    const w = (counts[row] / total) * width;
    const rect = `<rect x="${f1(left)}" width="${f1(w)}" height="${height}" fill="${COLOR[row]}"><title>${row} ${counts[row]}</title></rect>`;
    left += w;
    return rect;
  });
  return (
    `<svg data-chart="key" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="the key's jobs by state">` +
    `<rect width="${width}" height="${height}" fill="${COLOR.empty}"/>${segments.join("")}</svg>`
  );
}
