// The report's data and figures (see report.ts, the page): what the pool itself returned — `stats`
// sampled during the run and read at its end, every job from `list`, each key's `keyStatus` —
// reduced to what the page shows (summarizeJobs), and every figure it shows, computed once
// (reportFigures), so that the page and report.json carry the same values and the browser test
// can compare them (the second run's, executor tasks beside ordinary actions, come from
// reportComparison.ts). Pure: no I/O.
// Types from the source, not "convex-workpool": test/demoReport.test.ts brings this file into the
// root type check, where that name would resolve to the built dist/ (absent on a clean clone).
import type { KeyStatus, ListedWorkInfo, Stats } from "../src/client/index.js";
import { OUTCOME_ROWS, type OutcomeCounts } from "./reportCharts.js";
import { comparisonFigures, type ExecutorComparison } from "./reportComparison.js";
import { count, duration, type Figure } from "./reportFormat.js";

/** Rows of the slowest-jobs table. */
const SLOWEST_ROWS = 10;
/** Rows of the failed-jobs table (the count above it covers them all). */
const FAILED_ROWS = 25;
/** Keys shown one per row (the totals row covers them all). */
export const KEY_ROWS = 40;

/** What the run was asked to do and how the pool was set up. */
export type ReportSettings = {
  pool: string;
  /** The demo's jobs: each works about durationMs (±25%), failing an attempt at failRate. */
  workload: {
    jobs: number;
    durationMs: number;
    failRate: number;
    seed: number;
    priorityMix: boolean;
  };
  /** How many pool keys the jobs are spread over (0 for none). */
  keys: number;
  /** The pool's rate limit (its component config), if any. */
  rateLimit?: { starts: number; periodMs: number };
  /** The retry behavior of the pool's jobs. */
  retry: { maxAttempts: number; initialBackoffMs: number; base: number };
};

/** One reading of `stats`, at `at` (epoch ms, virtual clock). */
export type StatsSample = Stats & { at: number };

/** What the report keeps of every job `list` returned (summarizeJobs). */
export type JobsSummary = {
  total: number;
  succeeded: number;
  failed: number;
  canceled: number;
  pending: number;
  running: number;
  /** Attempts made, the current ones included; retries are attempts after a job's first. */
  attempts: number;
  retries: number;
  /** Earliest enqueue and latest finish (epoch ms); undefined with no such job. */
  firstEnqueuedAt?: number;
  lastFinishedAt?: number;
  /** Finished jobs whose last attempt ran longest, longest first. */
  slowest: ListedWorkInfo[];
  /** Jobs that failed for good, in list's order (newest first), at most FAILED_ROWS. */
  failedJobs: ListedWorkInfo[];
};

export type ReportData = {
  settings: ReportSettings;
  /** How often `stats` was sampled (virtual ms). */
  sampleEveryMs: number;
  samples: StatsSample[];
  /** `stats` at the end of the run. */
  final: Stats;
  jobs: JobsSummary;
  /** Each key's `keyStatus` at the end of the run, in key order. */
  keys: Array<{ key: string; status: KeyStatus }>;
  /** The second run, unless the demo was told to skip it (--compare-jobs 0). */
  comparison?: ExecutorComparison;
};

/** Attempts a job has made: a finished job's count is all of them, a running one's includes it. */
export const attemptsOf = (job: ListedWorkInfo) =>
  job.state === "running" ? job.previousAttempts + 1 : job.previousAttempts;
/** How long a finished job's last attempt ran (ms). */
export const ranMs = (job: ListedWorkInfo) => job.finishedAt! - job.startedAt!;

/** Reduces every job `list` returned to what the report shows. */
export function summarizeJobs(jobs: ListedWorkInfo[]): JobsSummary {
  const kind = (k: string) => jobs.filter((job) => job.result?.kind === k).length;
  const finished = jobs.filter((job) => job.state === "finished");
  const attempts = jobs.map(attemptsOf);
  const enqueued = jobs.map((job) => job.enqueuedAt);
  const finishes = finished.map((job) => job.finishedAt!);
  return {
    total: jobs.length,
    succeeded: kind("success"),
    failed: kind("failed"),
    canceled: kind("canceled"),
    pending: jobs.filter((job) => job.state === "pending").length,
    running: jobs.filter((job) => job.state === "running").length,
    attempts: attempts.reduce((sum, n) => sum + n, 0),
    retries: attempts.reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    firstEnqueuedAt: enqueued.length ? Math.min(...enqueued) : undefined,
    lastFinishedAt: finishes.length ? Math.max(...finishes) : undefined,
    slowest: finished
      .filter((job) => job.startedAt !== undefined)
      .sort((a, b) => ranMs(b) - ranMs(a))
      .slice(0, SLOWEST_ROWS),
    failedJobs: jobs.filter((job) => job.result?.kind === "failed").slice(0, FAILED_ROWS),
  };
}

/** When the run started and ended (epoch ms): first enqueue to last finish (or last sample). */
export function runSpan(data: ReportData): { t0: number; end: number } {
  const atOf = data.samples.map((s) => s.at);
  const t0 = data.jobs.firstEnqueuedAt ?? Math.min(...atOf);
  const end = Math.max(data.jobs.lastFinishedAt ?? t0, ...atOf);
  return { t0, end };
}

/** The mean of a sampled gauge over [first sample, end], each sample held until the next. */
function timeWeightedMean(samples: StatsSample[], pick: (s: StatsSample) => number, end: number) {
  if (samples.length === 0) return 0;
  let area = 0;
  for (let i = 0; i < samples.length; i++) {
    const until = i + 1 < samples.length ? samples[i + 1].at : end;
    area += pick(samples[i]) * Math.max(0, until - samples[i].at);
  }
  const span = end - samples[0].at;
  return span > 0 ? area / span : pick(samples[0]);
}

/** The key's parallelism as set, e.g. "1", or "1 / 3" when keys differ. */
function keyParallelisms(data: ReportData): string {
  const values = [...new Set(data.keys.map((k) => k.status.parallelism))].sort((a, b) => a - b);
  return values.length ? values.join(" / ") : "none (no keys)";
}

/** Every figure of the page, by section. Names are stable: report.json and the tests use them. */
export function reportFigures(data: ReportData): {
  settings: Figure[];
  summary: Figure[];
  lastMinute: Figure[];
  totals: Figure[];
  keys: Figure[];
  compare: Figure[];
} {
  const { settings: s, final, jobs, samples } = data;
  const { t0, end } = runSpan(data);
  const makespanMs = (jobs.lastFinishedAt ?? t0) - t0;
  const finished = jobs.succeeded + jobs.failed + jobs.canceled;
  const limit = Math.max(final.maxParallelism, ...samples.map((x) => x.maxParallelism));
  const peakRunning = Math.max(0, ...samples.map((x) => x.running));
  const meanRunning = timeWeightedMean(samples, (x) => x.running, end);
  const stat = (name: string, label: string, value: string, note?: string): Figure => ({
    name,
    label,
    value,
    note,
  });
  const w = s.workload;
  const settings = [
    stat("setting.maxParallelism", "maxParallelism", count(final.maxParallelism), "stats"),
    stat(
      "setting.keys",
      "keys",
      s.keys ? `${count(s.keys)} (job i has key k<i mod ${s.keys}>)` : "none",
    ),
    stat("setting.keyParallelism", "keyParallelism", keyParallelisms(data), "keyStatus"),
    stat(
      "setting.rateLimit",
      "rate limit",
      s.rateLimit
        ? `${count(s.rateLimit.starts)} starts per ${duration(s.rateLimit.periodMs)}`
        : "none",
    ),
    stat(
      "setting.retries",
      "retries",
      `${s.retry.maxAttempts} attempts, backoff ${s.retry.initialBackoffMs} ms × ${s.retry.base}ⁿ (jittered)`,
    ),
    stat("setting.paused", "paused", final.paused ? "yes" : "no", "stats"),
    stat(
      "setting.workload",
      "workload",
      `${count(w.jobs)} jobs of ~${duration(w.durationMs)} (±25%), an attempt fails at rate ${w.failRate}, seed ${w.seed}` +
        (w.priorityMix ? "; every 10th high, every 3rd of the rest low" : ""),
    ),
  ];
  const summary = [
    stat("summary.jobs", "jobs", count(jobs.total), "list"),
    stat("summary.succeeded", "succeeded", count(jobs.succeeded), "list"),
    stat("summary.failed", "failed", count(jobs.failed), "list: failed for good"),
    stat("summary.canceled", "canceled", count(jobs.canceled), "list"),
    stat("summary.pending", "pending", count(final.pending), "stats at the end"),
    stat("summary.running", "running", count(final.running), "stats at the end"),
    stat("summary.attempts", "attempts", count(jobs.attempts), "list"),
    stat("summary.retries", "retries", count(jobs.retries), "attempts after a job's first"),
    stat("summary.makespan", "makespan", duration(makespanMs), "first enqueue → last finish"),
    stat(
      "summary.throughput",
      "throughput",
      `${(finished / Math.max(makespanMs / 1000, 1e-9)).toFixed(2)} jobs/s`,
      "finished ÷ makespan",
    ),
    stat("summary.peakRunning", "peak running", `${peakRunning} of ${limit}`, "sampled stats"),
    stat(
      "summary.utilization",
      "utilization",
      `${Math.round((100 * meanRunning) / Math.max(limit, 1))}%`,
      "mean running ÷ maxParallelism",
    ),
    stat(
      "summary.peakPending",
      "peak pending",
      count(Math.max(0, ...samples.map((x) => x.pending))),
      "sampled stats",
    ),
    stat(
      "summary.longestWait",
      "longest wait",
      duration(Math.max(0, ...samples.map((x) => x.oldestPendingMs))),
      "sampled oldestPendingMs",
    ),
  ];
  const m = final.lastMinute;
  const lastMinute = (["started", "succeeded", "failed", "canceled", "retried"] as const).map((k) =>
    stat(`lastMinute.${k}`, k, count(m[k])),
  );
  const totals = (
    ["enqueued", "started", "succeeded", "failed", "canceled", "retried"] as const
  ).map((k) => stat(`totals.${k}`, k, count(final.totals[k])));
  const keyFigures = (key: string, c: KeyStatus) =>
    OUTCOME_ROWS.map((k) => stat(`key.${key}.${k}`, k, count(c[k])));
  const total = (k: keyof OutcomeCounts) => data.keys.reduce((n, row) => n + row.status[k], 0);
  const keys = data.keys.length
    ? [
        ...data.keys.slice(0, KEY_ROWS).flatMap((row) => keyFigures(row.key, row.status)),
        ...OUTCOME_ROWS.map((k) => stat(`keys.total.${k}`, k, count(total(k)))),
      ]
    : [];
  const compare = data.comparison ? comparisonFigures(data.comparison) : [];
  return { settings, summary, lastMinute, totals, keys, compare };
}

/** The figures by name, as report.json holds them. */
export function figureValues(data: ReportData): Record<string, string> {
  const f = reportFigures(data);
  return Object.fromEntries(
    [...f.settings, ...f.summary, ...f.lastMinute, ...f.totals, ...f.keys, ...f.compare].map(
      (x) => [x.name, x.value],
    ),
  );
}
