/** Turns results into the tables `npm run bench` prints and writes to docs/BENCHMARKS.md. */
import { lagStats, SETTLE_MS, STEP_MS, type Result } from "./harness.js";

export type Pair = { ours?: Result; peer?: Result };

const perJob = (r: Result, n: number) => n / r.scenario.jobs;

function fmt(n: number | undefined, digits = 2): string {
  if (n === undefined || Number.isNaN(n)) return "—";
  if (!Number.isFinite(n)) return String(n);
  return Math.abs(n) >= 1000 ? n.toFixed(0) : n.toFixed(digits);
}

function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b)) return "—";
  if (b === 0) return a === 0 ? "1.00" : "∞";
  return (a / b).toFixed(2);
}

type Row = {
  label: string;
  get: (r: Result) => number;
  digits?: number;
  noRatio?: boolean;
  text?: (r: Result) => string;
};

export function poolCallsPerJob(r: Result) {
  const i = r.counters.invocations.pool;
  return perJob(r, i.query + i.mutation + i.action);
}
export function appCallsPerJob(r: Result) {
  const i = r.counters.invocations.app;
  return perJob(r, i.query + i.mutation + i.action);
}
export const docsReadPerJob = (r: Result) =>
  perJob(r, r.counters.usage.app.docsRead + r.counters.usage.pool.docsRead);
export const docsWrittenPerJob = (r: Result) =>
  perJob(r, r.counters.usage.app.docsWritten + r.counters.usage.pool.docsWritten);
export const bytesReadPerJob = (r: Result) =>
  perJob(r, r.counters.usage.app.bytesRead + r.counters.usage.pool.bytesRead);
export const bytesWrittenPerJob = (r: Result) =>
  perJob(r, r.counters.usage.app.bytesWritten + r.counters.usage.pool.bytesWritten);
export const utilization = (r: Result) =>
  r.scenario.kind === "action" && r.scenario.expectKind !== "canceled"
    ? r.busyMs / (r.scenario.maxParallelism * Math.max(1, r.makespanMs))
    : NaN;

const rows: Row[] = [
  {
    label: "function calls / job, pool (query / mutation / action)",
    get: poolCallsPerJob,
    text: (r) => {
      const i = r.counters.invocations.pool;
      return `${fmt(poolCallsPerJob(r))} (${fmt(perJob(r, i.query))} / ${fmt(perJob(r, i.mutation))} / ${fmt(perJob(r, i.action))})`;
    },
  },
  {
    label: "function calls / job, app (query / mutation / action)",
    get: appCallsPerJob,
    text: (r) => {
      const i = r.counters.invocations.app;
      return `${fmt(appCallsPerJob(r))} (${fmt(perJob(r, i.query))} / ${fmt(perJob(r, i.mutation))} / ${fmt(perJob(r, i.action))})`;
    },
  },
  { label: "function calls / job, total", get: (r) => poolCallsPerJob(r) + appCallsPerJob(r) },
  {
    label: "documents read / job (pool only)",
    get: docsReadPerJob,
    text: (r) => `${fmt(docsReadPerJob(r))} (${fmt(perJob(r, r.counters.usage.pool.docsRead))})`,
  },
  {
    label: "documents written / job (pool only)",
    get: docsWrittenPerJob,
    text: (r) =>
      `${fmt(docsWrittenPerJob(r))} (${fmt(perJob(r, r.counters.usage.pool.docsWritten))})`,
  },
  { label: "KB read / job", get: (r) => bytesReadPerJob(r) / 1000 },
  { label: "KB written / job", get: (r) => bytesWrittenPerJob(r) / 1000 },
  { label: "largest transaction: documents read", get: (r) => r.counters.maxTxDocsRead, digits: 0 },
  {
    label: "largest transaction: KB read",
    get: (r) => r.counters.maxTxBytesRead / 1000,
    digits: 1,
  },
  { label: "start lag p50 (virtual ms)", get: (r) => lagStats(r.lags).p50, digits: 0 },
  { label: "start lag p95 (virtual ms)", get: (r) => lagStats(r.lags).p95, digits: 0 },
  { label: "start lag max (virtual ms)", get: (r) => lagStats(r.lags).max, digits: 0 },
  { label: "makespan (virtual s)", get: (r) => r.makespanMs / 1000 },
  { label: "utilization", get: utilization, digits: 3 },
  {
    label: "highest concurrency (limit)",
    get: (r) => r.maxConcurrency,
    noRatio: true,
    text: (r) => `${r.maxConcurrency} (${r.scenario.maxParallelism})`,
  },
  {
    label: "onComplete success / failed / canceled",
    get: () => NaN,
    noRatio: true,
    text: (r) => `${r.completions.success} / ${r.completions.failed} / ${r.completions.canceled}`,
  },
  {
    label: "onComplete lost / duplicate / wrong kind",
    get: () => NaN,
    noRatio: true,
    text: (r) =>
      `${r.lost} / ${r.duplicates} / ${r.wrongKind}${r.finished ? "" : " (deadline hit)"}`,
  },
  { label: "harness wall-clock (s)", get: (r) => r.wallSeconds, digits: 1 },
];

export function scenarioTable(pair: Pair): string {
  const lines = ["| metric | ours | peer | ours / peer |", "| --- | ---: | ---: | ---: |"];
  for (const row of rows) {
    const cell = (r?: Result) =>
      r ? (row.text ? row.text(r) : fmt(row.get(r), row.digits)) : "not run";
    const rat = row.noRatio
      ? ""
      : ratio(pair.ours && row.get(pair.ours), pair.peer && row.get(pair.peer));
    lines.push(`| ${row.label} | ${cell(pair.ours)} | ${cell(pair.peer)} | ${rat} |`);
  }
  return lines.join("\n");
}

/** The largest per-function share of calls and writes, for docs/PERFORMANCE.md. */
export function breakdown(r: Result): string {
  const lines = [
    `| function (${r.side}) | calls / job | docs read / job | docs written / job | KB written / job |`,
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  const keys = new Set([...r.counters.byFunction.keys(), ...r.counters.usageByFunction.keys()]);
  const entries = [...keys].map((k) => ({
    k,
    calls: r.counters.byFunction.get(k) ?? 0,
    u: r.counters.usageByFunction.get(k) ?? {
      docsRead: 0,
      docsWritten: 0,
      bytesRead: 0,
      bytesWritten: 0,
    },
  }));
  entries.sort((a, b) => b.calls - a.calls || b.u.docsWritten - a.u.docsWritten);
  for (const e of entries) {
    lines.push(
      `| \`${e.k}\` | ${fmt(perJob(r, e.calls), 3)} | ${fmt(perJob(r, e.u.docsRead))} | ${fmt(perJob(r, e.u.docsWritten))} | ${fmt(perJob(r, e.u.bytesWritten) / 1000, 3)} |`,
    );
  }
  return lines.join("\n");
}

export function methodNotes(): string {
  return [
    "How it is measured (same workload, same counters, both sides):",
    "",
    "- Each scenario runs on a fresh `convexTest` backend per side, with the pool installed as `ours` or",
    "  `peer` and driven by the same app code (`bench/app/pools.ts`) through the public client API: one",
    "  `enqueueAction` / `enqueueMutation` call per job, 100 per app mutation, every job with an",
    "  `onComplete` that inserts one row.",
    `- Virtual clock: fake timers advanced ${STEP_MS} ms at a time with a real tick between steps; the run`,
    `  continues ${SETTLE_MS / 1000} s of virtual time after the last onComplete (counted: the loop winding down`,
    "  is part of the cost; a late duplicate onComplete would show).",
    "- Function calls and documents/bytes come from convex-test (`bench/instrument.ts`): calls from its",
    "  execution contexts (component path, function path, type), usage from its per-transaction",
    "  `TransactionMetricsTracker` layers, attributed to each function's own reads and writes (a nested",
    "  call's usage belongs to the callee). convex-test's own helpers (`t.run`, scheduled-function",
    "  bookkeeping) are not counted. Per-job figures divide by the number of jobs and include the app's",
    "  enqueue mutations, the jobs themselves and onComplete. Scheduling a function is not a write here.",
    "- Start lag: the job's first attempt start minus the time it was enqueued (recorded by the jobs).",
    "  Makespan: first enqueue to last onComplete. Utilization: Σ attempt busy time / (maxParallelism ×",
    "  makespan), for action scenarios. Concurrency: attempts running at once, as the jobs saw it.",
    "- A run fails (non-zero exit) on any lost or duplicate onComplete, a wrong result kind, or more",
    "  attempts running at once than maxParallelism.",
  ].join("\n");
}
