// The report's second run (workload.demo.ts runs it with executorRun.ts): the same jobs as ordinary
// actions and as an executor's tasks. Its data (ExecutorComparison: each pool's stats samples, list
// and the actions its component started), the figures it shows (comparisonFigures, which
// reportFigures.ts adds to the page's under `compare.*`) and its section of the page
// (comparisonSection, for report.ts): inline SVG from reportCharts.ts, no I/O.
import type { Stats } from "../src/client/index.js";
import { escapeXml } from "./chart.js";
import { CHART_SIZE, COLOR, timeChart } from "./reportCharts.js";
import type { JobsSummary, StatsSample } from "./reportFigures.js";
import { count, duration, type Figure } from "./reportFormat.js";

/** One side of the executor comparison: one pool's readings over the second run. */
export type ComparisonSide = {
  pool: string;
  /** What ran the jobs, e.g. "emails:send" or "llm:run, task summarize". */
  runs: string;
  /** Tasks one executor action runs at once; undefined for ordinary actions. */
  concurrency?: number;
  /** `stats` sampled through the run (every sampleEveryMs) and at its end. */
  samples: StatsSample[];
  final: Stats;
  /** Every job `list` returned, summarized. */
  jobs: JobsSummary;
  /** The actions the pool's component started, by function name, from its scheduler records
   * (`_scheduled_functions`): a worker per attempt of an ordinary action, or an executor. */
  actions: Record<string, number>;
};

/** The second run: the same jobs, enqueued at one instant on a fresh backend, once as ordinary
 * actions and once as an executor's tasks. */
export type ExecutorComparison = {
  /** Each job waits about durationMs (±25%, seeded) and none fails. */
  workload: { jobs: number; durationMs: number; seed: number };
  actions: ComparisonSide;
  tasks: ComparisonSide;
};

/** The comparison's sides, as the page shows them left to right. */
export const COMPARISON_SIDES = ["actions", "tasks"] as const;
/** The comparison table's rows (a figure per side each: `compare.<side>.<row>`), top to bottom. */
export const COMPARISON_ROWS = [
  "pool",
  "runs",
  "jobs",
  "succeeded",
  "makespan",
  "peakRunning",
  "actionsStarted",
  "jobsPerAction",
] as const;

/** The second run's time axis (epoch ms): its first enqueue to its last finish or sample, on
 * either side, so both charts share it. */
export function comparisonSpan(c: ExecutorComparison): { t0: number; end: number } {
  const sides = [c.actions, c.tasks];
  const atOf = sides.flatMap((side) => side.samples.map((x) => x.at));
  const firsts = sides.flatMap((side) => side.jobs.firstEnqueuedAt ?? []);
  const t0 = firsts.length ? Math.min(...firsts) : Math.min(...atOf);
  const lasts = sides.flatMap((side) => side.jobs.lastFinishedAt ?? []);
  return { t0, end: Math.max(t0, ...lasts, ...atOf) };
}

/** A side's makespan: its first enqueue to its last finish (ms). */
const makespanOf = (side: ComparisonSide) =>
  (side.jobs.lastFinishedAt ?? side.jobs.firstEnqueuedAt ?? 0) - (side.jobs.firstEnqueuedAt ?? 0);
/** The actions a side's pool started, all names together. */
export const actionsStarted = (side: ComparisonSide) =>
  Object.values(side.actions).reduce((sum, n) => sum + n, 0);

/** The comparison's figures: the table's (COMPARISON_ROWS × COMPARISON_SIDES), then two ratios. */
export function comparisonFigures(c: ExecutorComparison): Figure[] {
  const row = (side: ComparisonSide, name: (typeof COMPARISON_ROWS)[number]): Figure => {
    const limit = Math.max(side.final.maxParallelism, ...side.samples.map((x) => x.maxParallelism));
    const started = actionsStarted(side);
    const names = Object.keys(side.actions).sort().join(", ") || "none";
    switch (name) {
      case "pool":
        return { name, label: "pool", value: `${side.pool}, maxParallelism ${count(limit)}` };
      case "runs":
        return {
          name,
          label: "runs each job in",
          value:
            side.concurrency === undefined
              ? `an action of its own (${side.runs})`
              : `an executor action, up to ${count(side.concurrency)} at once (${side.runs})`,
        };
      case "jobs":
        return { name, label: "jobs", value: count(side.jobs.total), note: "list" };
      case "succeeded":
        return { name, label: "succeeded", value: count(side.jobs.succeeded), note: "list" };
      case "makespan":
        return {
          name,
          label: "makespan",
          value: duration(makespanOf(side)),
          note: "first enqueue → last finish",
        };
      case "peakRunning":
        return {
          name,
          label: "peak running",
          value: count(Math.max(0, ...side.samples.map((x) => x.running))),
          note: "sampled stats",
        };
      case "actionsStarted":
        return { name, label: "actions started", value: count(started), note: names };
      case "jobsPerAction":
        return {
          name,
          label: "jobs per action",
          value: started ? (side.jobs.total / started).toFixed(1) : "—",
        };
      default:
        return name satisfies never;
    }
  };
  const table = COMPARISON_ROWS.flatMap((name) =>
    COMPARISON_SIDES.map((side) => {
      const f = row(c[side], name);
      return { ...f, name: `compare.${side}.${name}` };
    }),
  );
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(1)}×` : "—");
  return [
    ...table,
    {
      name: "compare.makespanRatio",
      label: "makespan, actions ÷ tasks",
      value: ratio(makespanOf(c.actions), makespanOf(c.tasks)),
    },
    {
      name: "compare.actionsRatio",
      label: "actions started, actions ÷ tasks",
      value: ratio(actionsStarted(c.actions), actionsStarted(c.tasks)),
    },
  ];
}

/** Column headings of the comparison, by side. */
const SIDE_TITLE = { actions: "ordinary actions", tasks: "executor tasks" } as const;

/**
 * The second run's section: a table of each side's figures (`figures` holds them, by name), and
 * each side's running jobs over time, side by side on one time axis.
 */
export function comparisonSection(c: ExecutorComparison, figures: Map<string, Figure>): string {
  const e = escapeXml;
  const { t0, end } = comparisonSpan(c);
  const cell = (name: string) => {
    const f = figures.get(name)!;
    return (
      `<td><span data-figure="${e(f.name)}">${e(f.value)}</span>` +
      (f.note ? ` <span class="note">(${e(f.note)})</span>` : "") +
      `</td>`
    );
  };
  const rows = COMPARISON_ROWS.map((row) => {
    const label = figures.get(`compare.actions.${row}`)!.label;
    return `<tr data-row="${row}"><th>${e(label)}</th>${COMPARISON_SIDES.map((side) => cell(`compare.${side}.${row}`)).join("")}</tr>`;
  });
  const chart = (side: (typeof COMPARISON_SIDES)[number], s: ComparisonSide) =>
    `<div><h3>${e(SIDE_TITLE[side])}: ${e(s.pool)}</h3>` +
    timeChart({
      name: `compare-${side}`,
      yLabel: side === "tasks" ? "tasks running" : "jobs running",
      t0,
      end,
      size: CHART_SIZE.compare,
      series: [
        {
          name: "running",
          label: "running (stats)",
          color: COLOR.running,
          fill: true,
          points: s.samples.map((x) => ({ at: x.at, value: x.running })),
        },
        {
          name: "maxParallelism",
          label: "maxParallelism",
          color: COLOR.limit,
          dash: "7 4",
          points: s.samples.map((x) => ({ at: x.at, value: x.maxParallelism })),
        },
      ],
    }) +
    `</div>`;
  const headline = (name: string) => {
    const f = figures.get(name)!;
    return `${e(f.label)} <b data-figure="${e(f.name)}">${e(f.value)}</b>`;
  };
  const w = c.workload;
  return `<section data-section="compare"><h2>Executor tasks beside ordinary actions</h2>
<p class="sub">A second run, on a fresh backend: ${count(w.jobs)} jobs that each wait ~${duration(w.durationMs)} (±25%, seed ${w.seed}; none fails), enqueued at one instant both as ordinary actions (<code>emails.send</code> through ${e(c.actions.pool)}: an action per job, each holding one of the deployment's action slots while it waits) and as tasks of an executor (<code>llm.run</code> through ${e(c.tasks.pool)}: many jobs wait at once inside one action). Figures from each pool's <code>stats</code> and <code>list</code>; actions started from its component's scheduler records (<code>_scheduled_functions</code>).</p>
<table data-table="compare"><tr><th></th>${COMPARISON_SIDES.map((side) => `<th>${SIDE_TITLE[side]}</th>`).join("")}</tr>
${rows.join("\n")}
</table>
<p class="note">${headline("compare.makespanRatio")}; ${headline("compare.actionsRatio")}. Both charts share the time axis; each has its own scale of jobs.</p>
<div class="pair">${COMPARISON_SIDES.map((side) => chart(side, c[side])).join("")}</div>
</section>`;
}
