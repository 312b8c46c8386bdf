// @vitest-environment node
// The demo's report page (demo/report.ts, reportFigures.ts, reportComparison.ts, reportCharts.ts).
// First its pure parts, from made-up pool readings. Then the real thing: a small fixed run of the
// demo harness (demo.mjs: 12 jobs over 6 keys, then 20 jobs as actions and as executor tasks; about
// 4 s, while the browser starts) writes the page to demo-out/browser-check/, and headless Chromium
// (playwright-core driving the system's /usr/bin/chromium, or $CHROMIUM_PATH; it downloads no
// browser) opens it from file://: the figures shown must equal report.json's and the pool's
// readings in it, the charts must render at their sizes, the page must request nothing and log no
// error. The screenshot goes to demo-out/report.png. Without the browser that check is skipped,
// saying so — except under CI, where a missing browser fails it (.ci/run installs chromium). Node
// environment: it spawns processes.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ListedWorkInfo, Stats } from "../src/client/index.js";
import { escapeXml } from "../demo/chart.js";
import { reportHtml } from "../demo/report.js";
import { CHART_SIZE } from "../demo/reportCharts.js";
import {
  actionsStarted,
  COMPARISON_ROWS,
  type ComparisonSide,
  type ExecutorComparison,
} from "../demo/reportComparison.js";
import {
  figureValues,
  reportFigures,
  summarizeJobs,
  type ReportData,
} from "../demo/reportFigures.js";
import { count, duration } from "../demo/reportFormat.js";
import { CHROMIUM, CHROMIUM_ARGS, haveBrowser, inCI, SKIP_REASON } from "./browser.js";

/** A key's share and rate limit at their defaults (API-EXTENSIONS section 13). */
const DEFAULT_SHARE = { weight: 1, reserve: 0, rateLimit: null };

const root = fileURLToPath(new URL("..", import.meta.url));

let nextId = 0;
/** A job as `list` returns it: finished successfully after one attempt of 1 s unless told. */
function job(over: Partial<ListedWorkInfo> = {}): ListedWorkInfo {
  return {
    id: `job${nextId++}`,
    name: "emails:send",
    fnType: "action",
    priority: "normal",
    state: "finished",
    previousAttempts: 1,
    enqueuedAt: 0,
    startedAt: 0,
    finishedAt: 1000,
    result: { kind: "success" },
    ...over,
  } as ListedWorkInfo;
}

const idle: Stats = {
  pending: 0,
  running: 0,
  maxParallelism: 4,
  operatorMaxParallelism: null,
  paused: false,
  oldestPendingMs: 0,
  lastMinute: { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 },
  totals: { enqueued: 0, started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 },
};

/** A run of 10 s: 4 of 4 running for its first half, none after; keys k0 and k1. */
function readings(jobs: ListedWorkInfo[]): ReportData {
  return {
    settings: {
      pool: "emailPool",
      workload: { jobs: jobs.length, durationMs: 1000, failRate: 0.5, seed: 1, priorityMix: false },
      keys: 2,
      retry: { maxAttempts: 5, initialBackoffMs: 250, base: 2 },
    },
    sampleEveryMs: 100,
    samples: [
      { ...idle, at: 0, running: 4, pending: 6, oldestPendingMs: 2500 },
      { ...idle, at: 5000 },
    ],
    final: {
      ...idle,
      lastMinute: { ...idle.lastMinute, started: 7 },
      totals: { ...idle.totals, enqueued: 5, started: 9, failed: 1 },
    },
    jobs: summarizeJobs(jobs),
    keys: [
      { key: "k0", status: { ...statusOf(2, 1), paused: false, parallelism: 1, ...DEFAULT_SHARE } },
      { key: "k1", status: { ...statusOf(1, 0), paused: true, parallelism: 1, ...DEFAULT_SHARE } },
    ],
  };
}
/** One side of a made-up executor comparison: `n` jobs enqueued at 0, finishing by `lastMs`, run
 * in `actions` actions, `running` of them at once until then. */
function side(
  pool: string,
  n: number,
  lastMs: number,
  actions: Record<string, number>,
  running: number,
): ComparisonSide {
  const jobs = Array.from({ length: n }, (_, i) =>
    job({ finishedAt: i === 0 ? lastMs : lastMs / 2, name: pool }),
  );
  return {
    pool,
    runs: pool === "llmPool" ? "llm:run, task summarize" : "emails:send",
    concurrency: pool === "llmPool" ? 50 : undefined,
    samples: [
      { ...idle, at: 0, running, maxParallelism: running },
      { ...idle, at: lastMs, maxParallelism: running },
    ],
    final: { ...idle, maxParallelism: running },
    jobs: summarizeJobs(jobs),
    actions,
  };
}

/** 8 jobs: as actions 2 at a time over 8 s, in 8 worker actions; as tasks all at once in 2 s, in
 * one executor action. */
const comparison: ExecutorComparison = {
  workload: { jobs: 8, durationMs: 2000, seed: 1 },
  actions: side("emailPool", 8, 8000, { "runners/worker:runAction": 8 }, 2),
  tasks: side("llmPool", 8, 2000, { "llm:run": 1 }, 8),
};

const statusOf = (succeeded: number, failed: number) => ({
  succeeded,
  failed,
  canceled: 0,
  running: 0,
  pending: 0,
});

describe("report page builder (pure)", () => {
  const failed = job({
    previousAttempts: 5,
    startedAt: 8000,
    finishedAt: 10_000,
    result: { kind: "failed", error: "smtp 451 <b>&" },
  });
  const jobs = [
    job({ startedAt: 0, finishedAt: 3000 }),
    job({ previousAttempts: 2 }),
    failed,
    job({ state: "running", previousAttempts: 1, finishedAt: undefined, result: undefined }),
    job({ state: "pending", previousAttempts: 0, startedAt: undefined, finishedAt: undefined, result: undefined }), // prettier-ignore
  ];

  it("summarizes list's jobs: counts, attempts (a running one's included), slowest, failed", () => {
    const s = summarizeJobs(jobs);
    expect(s).toMatchObject({ total: 5, succeeded: 2, failed: 1, canceled: 0, pending: 1 });
    expect(s.running).toBe(1);
    expect(s.attempts).toBe(1 + 2 + 5 + 2 + 0);
    expect(s.retries).toBe(0 + 1 + 4 + 1 + 0);
    expect([s.firstEnqueuedAt, s.lastFinishedAt]).toEqual([0, 10_000]);
    expect(s.slowest.map((j) => j.id)).toEqual([jobs[0].id, failed.id, jobs[1].id]);
    expect(s.failedJobs).toEqual([failed]);
  });

  it("computes the figures from the readings", () => {
    const f = figureValues(readings(jobs));
    expect(f).toMatchObject({
      "summary.jobs": "5",
      "summary.failed": "1",
      "summary.makespan": "10.0 s",
      "summary.throughput": "0.30 jobs/s", // 3 finished in 10 s
      "summary.peakRunning": "4 of 4",
      "summary.utilization": "50%", // 4 running for half the run
      "summary.peakPending": "6",
      "summary.longestWait": "2.50 s",
      "lastMinute.started": "7",
      "totals.enqueued": "5",
      "totals.started": "9",
      "totals.failed": "1",
      "setting.keyParallelism": "1",
      "setting.rateLimit": "none",
      "key.k0.succeeded": "2",
      "key.k1.failed": "0",
      "keys.total.succeeded": "3",
      "keys.total.failed": "1",
    });
    expect(Object.keys(f).some((name) => name.startsWith("compare."))).toBe(false);
  });

  it("computes the executor comparison's figures, side by side", () => {
    const f = figureValues({ ...readings(jobs), comparison });
    expect(f).toMatchObject({
      "compare.actions.pool": "emailPool, maxParallelism 2",
      "compare.tasks.pool": "llmPool, maxParallelism 8",
      "compare.actions.jobs": "8",
      "compare.tasks.succeeded": "8",
      "compare.actions.makespan": "8.00 s",
      "compare.tasks.makespan": "2.00 s",
      "compare.actions.peakRunning": "2",
      "compare.tasks.peakRunning": "8",
      "compare.actions.actionsStarted": "8",
      "compare.tasks.actionsStarted": "1",
      "compare.actions.jobsPerAction": "1.0",
      "compare.tasks.jobsPerAction": "8.0",
      "compare.makespanRatio": "4.0×",
      "compare.actionsRatio": "8.0×",
    });
    expect(f["compare.tasks.runs"]).toBe(
      "an executor action, up to 50 at once (llm:run, task summarize)",
    );
  });

  it("formats counts and durations the same everywhere", () => {
    expect(count(1234567)).toBe("1,234,567");
    expect(count(999)).toBe("999");
    expect([duration(850), duration(1254), duration(12_340), duration(245_000)]).toEqual([
      "850 ms",
      "1.25 s",
      "12.3 s",
      "4 min 05 s",
    ]);
  });

  it("builds one page that loads nothing, escapes text and marks every figure once", () => {
    const data = { ...readings(jobs), comparison };
    const html = reportHtml(data);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
    expect(html).not.toMatch(/\b(https?|ftp|wss?):|\b(src|href)=|url\(|<script|<link|@import/i);
    expect(html).toContain("smtp 451 &lt;b&gt;&amp;");
    const marked = [...html.matchAll(/data-figure="([^"]+)">([^<]*)</g)];
    const all = reportFigures(data);
    const names = [
      ...all.settings,
      ...all.summary,
      ...all.lastMinute,
      ...all.totals,
      ...all.keys,
      ...all.compare,
    ].map((f) => f.name);
    expect(all.compare.length).toBeGreaterThan(0);
    expect(marked.map((m) => m[1]).sort()).toEqual([...names].sort());
    for (const [, name, text] of marked)
      expect(text, name).toBe(escapeXml(figureValues(data)[name]));
    expect(html).toContain(`data-chart="compare-actions"`);
    expect(reportHtml(readings(jobs))).not.toContain(`data-section="compare"`);
  });
});

/** The browser: Debian's chromium unless CHROMIUM_PATH names another. */
if (!haveBrowser && !inCI) console.warn(`SKIPPED the report page's browser check: ${SKIP_REASON}`);

/** The small fixed run the page is built from, kept short (the suite's time is tight): 6 keys at
 * parallelism 8, so the keys' limit shows; at this fail rate and seed 2 jobs fail for good (a job
 * failing all 5 attempts waits ~4 s of backoff, holding its key), so the failed table has rows. */
const DEMO_ARGS = ["--jobs", "12", "--parallelism", "8", "--duration-ms", "100"];
DEMO_ARGS.push("--fail-rate", "0.6", "--keys", "6", "--seed", "1");
/** Then 20 jobs of ~2 s as actions (at parallelism 8: three waves) and as executor tasks (one
 * executor action runs them all): the comparison section has figures that differ. */
DEMO_ARGS.push("--compare-jobs", "20");
const OUT = join(root, "demo-out", "browser-check");
const SCREENSHOT = join(root, "demo-out", "report.png");
const VIEWPORT = { width: 960, height: 900 };
/** How long a locator waits (playwright's default is 30 s): the page is static, so an element
 * missing at load stays missing. */
const STATIC_PAGE_TIMEOUT_MS = 3000;

/** Runs `npm run demo` (demo.mjs) with `args`; resolves with its output, rejects if it fails. */
function runDemo(args: string[]): Promise<string> {
  // The demo runs its own vitest: leave out this run's VITEST_* variables.
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "demo", "demo.mjs"), ...args], {
      cwd: root,
      env: { ...env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(output) : reject(new Error(`demo exited ${code}:\n${output}`)),
    );
  });
}

describe("report page in headless Chromium", () => {
  it.skipIf(!haveBrowser && !inCI)(
    "shows the run's figures and charts, requests nothing, logs no error",
    async () => {
      expect(haveBrowser, `CI needs a browser: ${SKIP_REASON}`).toBe(true);
      rmSync(OUT, { recursive: true, force: true });
      const page = join(OUT, "report.html");
      const userDataDir = mkdtempSync(join(tmpdir(), "report-chromium-"));
      // The browser starts while the demo runs; both settle before anything is checked, so that
      // a failure of either still closes the other.
      const [demo, launched] = await Promise.allSettled([
        runDemo([...DEMO_ARGS, "--out", join(OUT, "running.svg"), "--report", page]),
        chromium.launchPersistentContext(userDataDir, {
          executablePath: CHROMIUM,
          headless: true,
          args: CHROMIUM_ARGS,
          viewport: VIEWPORT,
        }),
      ]);
      const context = launched.status === "fulfilled" ? launched.value : undefined;
      try {
        if (demo.status === "rejected") throw demo.reason;
        if (!context) throw (launched as PromiseRejectedResult).reason;
        const report = JSON.parse(readFileSync(join(OUT, "report.json"), "utf8")) as {
          figures: Record<string, string>;
          data: ReportData;
        };
        const { figures, data } = report;
        expect(data.jobs.failed, "the fixed run has jobs that failed for good").toBeGreaterThan(0);

        const requests: string[] = [];
        const errors: string[] = [];
        context.on("request", (request) => requests.push(request.url()));
        const tab = await context.newPage();
        tab.setDefaultTimeout(STATIC_PAGE_TIMEOUT_MS);
        tab.on("console", (message) => {
          if (message.type() === "error") errors.push(message.text());
        });
        tab.on("pageerror", (error) => errors.push(error.message));
        const url = pathToFileURL(page).href;
        await tab.goto(url, { waitUntil: "load" });

        // Every marked figure, as the browser shows it: exactly report.json's figures…
        const shown = await tab.$$eval("[data-figure]", (els) =>
          els.map((el) => [el.getAttribute("data-figure")!, el.textContent!.trim()] as const),
        );
        expect(shown.length, "each figure shown once").toBe(Object.keys(figures).length);
        expect(Object.fromEntries(shown)).toEqual(figures);
        // …and those taken straight from what the pool returned show its values.
        const fig = Object.fromEntries(shown);
        expect(fig["summary.jobs"]).toBe(count(data.jobs.total));
        expect(fig["summary.succeeded"]).toBe(count(data.jobs.succeeded));
        expect(fig["summary.failed"]).toBe(count(data.jobs.failed));
        expect(fig["summary.attempts"]).toBe(count(data.jobs.attempts));
        expect(fig["summary.pending"]).toBe(count(data.final.pending));
        expect(fig["setting.maxParallelism"]).toBe(count(data.final.maxParallelism));
        for (const k of ["started", "succeeded", "failed", "retried"] as const) {
          expect(fig[`lastMinute.${k}`], k).toBe(count(data.final.lastMinute[k]));
        }
        // The totals since the pool began agree with the jobs `list` read.
        expect(fig["totals.enqueued"]).toBe(count(data.jobs.total));
        expect(fig["totals.started"]).toBe(count(data.jobs.attempts));
        expect(fig["totals.succeeded"]).toBe(count(data.jobs.succeeded));
        expect(fig["totals.failed"]).toBe(count(data.jobs.failed));
        expect(data.keys.map((k) => k.key)).toEqual(["k0", "k1", "k2", "k3", "k4", "k5"]);
        for (const { key, status } of data.keys) {
          expect(fig[`key.${key}.succeeded`], key).toBe(count(status.succeeded));
          expect(fig[`key.${key}.failed`], key).toBe(count(status.failed));
        }
        // The comparison: each side's figures are its pool's readings in report.json, and the
        // executor side started fewer actions and finished sooner.
        const c = data.comparison!;
        expect(c.workload.jobs).toBe(20);
        for (const name of ["actions", "tasks"] as const) {
          const s = c[name];
          expect(fig[`compare.${name}.jobs`], name).toBe(count(s.jobs.total));
          expect(fig[`compare.${name}.succeeded`], name).toBe(count(s.jobs.succeeded));
          expect(fig[`compare.${name}.actionsStarted`], name).toBe(count(actionsStarted(s)));
          expect(fig[`compare.${name}.peakRunning`], name).toBe(
            count(Math.max(...s.samples.map((x) => x.running))),
          );
          expect(fig[`compare.${name}.makespan`], name).toBe(
            duration(s.jobs.lastFinishedAt! - s.jobs.firstEnqueuedAt!),
          );
          expect(s.jobs.succeeded, name).toBe(20);
        }
        // Ordinary actions started together share action runners, each still an action of its
        // own; one started alone has a worker: 20 jobs' actions either way.
        const byRunners = c.actions.actions["emails:send (by action runners)"] ?? 0;
        const byWorkers = c.actions.actions["runners/worker:runAction"] ?? 0;
        expect(byRunners + byWorkers).toBe(20);
        expect(c.actions.actions["runners/actionRunner:run"]).toBeGreaterThanOrEqual(1);
        expect(actionsStarted(c.tasks)).toBeLessThan(actionsStarted(c.actions));
        expect(c.tasks.jobs.lastFinishedAt! - c.tasks.jobs.firstEnqueuedAt!).toBeLessThan(
          c.actions.jobs.lastFinishedAt! - c.actions.jobs.firstEnqueuedAt!,
        );
        const compareRows = await tab.$$eval("table[data-table=compare] tr[data-row]", (trs) =>
          trs.map((tr) => tr.getAttribute("data-row")),
        );
        expect(compareRows).toEqual(COMPARISON_ROWS);

        // The tables list list's jobs: ids in order, and each failed job's error.
        const rowsOf = (table: string) =>
          tab.$$eval(`table[data-table=${table}] tr[data-job]`, (trs) =>
            trs.map((tr) => [tr.getAttribute("data-job"), tr.lastElementChild!.textContent]),
          );
        expect((await rowsOf("slowest")).map(([id]) => id)).toEqual(
          data.jobs.slowest.map((j) => j.id),
        );
        expect(await rowsOf("failed")).toEqual(
          data.jobs.failedJobs.map((j) => [j.id, j.result?.kind === "failed" && j.result.error]),
        );

        // The charts rendered at their sizes, each with a visible mark of the data: a line, the
        // succeeded bar, a key's first segment.
        const charts: Array<[string, { width: number; height: number }, number, string]> = [
          ["running", CHART_SIZE.time, 1, "path[data-series=running]"],
          ["pending", CHART_SIZE.time, 1, "path[data-series=pending]"],
          ["outcomes", CHART_SIZE.outcomes, 1, "rect"],
          ["key", CHART_SIZE.keyBar, data.keys.length, "rect:has(title)"],
          ["compare-actions", CHART_SIZE.compare, 1, "path[data-series=running]"],
          ["compare-tasks", CHART_SIZE.compare, 1, "path[data-series=running]"],
        ];
        for (const [name, size, n, mark] of charts) {
          const svgs = tab.locator(`svg[data-chart=${name}]`);
          expect(await svgs.count(), name).toBe(n);
          for (let i = 0; i < n; i++) {
            const box = await svgs.nth(i).boundingBox();
            expect(box && { width: box.width, height: box.height }, name).toEqual(size);
            const markBox = await svgs.nth(i).locator(mark).first().boundingBox();
            expect(markBox?.width, `${name}: ${mark}`).toBeGreaterThan(0);
          }
        }
        // The running line has a step per stats sample and spans the plot.
        const line = tab.locator("svg[data-chart=running] path[data-series=running]");
        expect((await line.getAttribute("d"))!.split("V").length).toBe(data.samples.length);
        expect((await line.boundingBox())!.width).toBeGreaterThan(CHART_SIZE.time.width / 2);
        // So does each side's of the comparison, the two side by side on one row.
        const boxes = [];
        for (const name of ["actions", "tasks"] as const) {
          const chart = tab.locator(`svg[data-chart=compare-${name}]`);
          const d = await chart.locator("path[data-series=running]").getAttribute("d");
          expect(d!.split("V").length, name).toBe(c[name].samples.length);
          boxes.push((await chart.boundingBox())!);
        }
        expect(boxes[1].y).toBe(boxes[0].y);
        expect(boxes[1].x).toBeGreaterThanOrEqual(boxes[0].x + boxes[0].width);

        mkdirSync(join(root, "demo-out"), { recursive: true });
        await tab.screenshot({ path: SCREENSHOT, fullPage: true });
        expect(requests, "no request but the page itself").toEqual([url]);
        expect(errors, "console errors").toEqual([]);
      } finally {
        await context?.close();
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
  );
});
