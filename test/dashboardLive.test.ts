// @vitest-environment node
// The live dashboard in a real browser: `npm run demo -- --serve` (demo.mjs, serve.demo.ts) runs a
// small fixed workload on convex-test and serves the dashboard on 127.0.0.1; headless Chromium
// (playwright-core driving the system's /usr/bin/chromium, or $CHROMIUM_PATH) opens it. The page
// loads; its totals move while the pool drains; pausing from the page stops new starts; retrying a
// failed job from the page reruns it; at the end the page's totals equal the final stats the demo
// prints; and no request leaves localhost. Without the browser the test is skipped, saying so,
// except under CI, where that fails. Node environment: it spawns processes. About 30 s: in the slow
// tier (scripts/test.mjs). `UPDATE_SCREENSHOT=1` also saves docs/img/dashboard.png (see
// scripts/dashboard-screenshot.mjs).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { CHROMIUM, CHROMIUM_ARGS, haveBrowser, inCI, SKIP_REASON } from "./browser.js";

const root = fileURLToPath(new URL("..", import.meta.url));
if (!haveBrowser && !inCI)
  console.warn(`SKIPPED the live dashboard's browser check: ${SKIP_REASON}`);

const JOBS = 40;
/** 40 emails over 4 keys at fail rate 0.5 (seed 3: some fail all 5 attempts, so the failed table
 * has rows to retry), virtual time at 3× real. The demo serves until the test stops it. */
const DEMO_ARGS = [
  ...["--serve", "--serve-port", "0", "--serve-for", "120", "--serve-speed", "3"],
  ...["--jobs", String(JOBS), "--parallelism", "4", "--duration-ms", "300"],
  ...["--fail-rate", "0.5", "--keys", "4", "--seed", "3"],
  // No digest schedule and no import: their jobs would move the totals this test follows to a
  // fixed end.
  ...["--serve-digest-s", "0", "--serve-import-rows", "0"],
];
/** How long a step of the page may take to show (real ms): the pool drains in seconds. */
const WAIT_MS = 30_000;

/** Starts the demo; resolves with its URL once it serves, and its output so far. */
function startDemo(): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("VITEST")),
  );
  const child = spawn(process.execPath, [join(root, "demo", "demo.mjs"), ...DEMO_ARGS], {
    cwd: root,
    env: { ...env, NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  const output = () => text;
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      const m = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(text);
      if (m) resolve({ child, url: m[1], output });
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.on("close", (code) => reject(new Error(`demo exited ${code}:\n${text}`)));
  });
}

/** Stops the demo (SIGTERM); resolves with the final stats it prints. */
function stopDemo(demo: { child: ChildProcess; output: () => string }): Promise<any> {
  return new Promise((resolve, reject) => {
    demo.child.on("close", () => {
      const m = /final stats: (\{.*\})\n/.exec(demo.output());
      if (m) resolve(JSON.parse(m[1]));
      else reject(new Error(`no final stats:\n${demo.output()}`));
    });
    demo.child.kill("SIGTERM");
  });
}

/** The page's figures (`data-figure` elements), by name, as numbers where they are counts. */
async function figures(tab: Page): Promise<Record<string, number>> {
  const pairs = await tab.$$eval("[data-figure]", (els) =>
    els.map((el) => [el.getAttribute("data-figure")!, el.textContent!.trim()] as const),
  );
  return Object.fromEntries(pairs.map(([name, text]) => [name, Number(text.replace(/,/g, ""))]));
}

/** Waits until `check` holds for the page's figures; returns them. */
async function until(
  tab: Page,
  what: string,
  check: (f: Record<string, number>) => boolean,
): Promise<Record<string, number>> {
  const end = Date.now() + WAIT_MS;
  for (;;) {
    const f = await figures(tab);
    if (Object.keys(f).length > 0 && check(f)) return f;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(f)}`);
    await tab.waitForTimeout(100);
  }
}

describe("live dashboard in headless Chromium", () => {
  it.skipIf(!haveBrowser && !inCI)(
    "shows the pool draining, pauses it, retries a failed job, and ends at the demo's final stats",
    async () => {
      expect(haveBrowser, `CI needs a browser: ${SKIP_REASON}`).toBe(true);
      const userDataDir = mkdtempSync(join(tmpdir(), "dashboard-chromium-"));
      const [started, launched] = await Promise.allSettled([
        startDemo(),
        chromium.launchPersistentContext(userDataDir, {
          executablePath: CHROMIUM,
          headless: true,
          args: CHROMIUM_ARGS,
          viewport: { width: 1100, height: 1000 },
        }),
      ]);
      const demo = started.status === "fulfilled" ? started.value : undefined;
      const context = launched.status === "fulfilled" ? launched.value : undefined;
      try {
        if (!demo) throw (started as PromiseRejectedResult).reason;
        if (!context) throw (launched as PromiseRejectedResult).reason;
        const requests: string[] = [];
        const errors: string[] = [];
        context.on("request", (request) => requests.push(request.url()));
        const tab = await context.newPage();
        tab.on("pageerror", (error) => errors.push(error.message));
        tab.on("console", (message) => {
          if (message.type() === "error") errors.push(message.text());
        });
        await tab.goto(demo.url, { waitUntil: "load" });

        // It loads, with every job enqueued, and its totals move as the pool drains.
        const first = await until(tab, "the totals", (f) => f["totals.enqueued"] === JOBS);
        await until(
          tab,
          "more jobs finished",
          (f) => f["totals.succeeded"] > first["totals.succeeded"],
        );

        // Pausing from the page stops new starts: the attempts started stay put for 1.5 s of
        // real time (4.5 s of virtual time, many jobs' worth), while running ones finish.
        await tab.click('[data-testid="pause-pool"]');
        await tab.waitForSelector('[data-testid="resume-pool"]', { timeout: WAIT_MS });
        const paused = await until(tab, "the running jobs to end", (f) => f.running === 0);
        expect(paused.pending, "work left to start").toBeGreaterThan(0);
        await tab.waitForTimeout(1500);
        const later = await figures(tab);
        expect(later["totals.started"], "attempts started while paused").toBe(
          paused["totals.started"],
        );
        expect(later.pending).toBe(paused.pending);
        await tab.click('[data-testid="resume-pool"]');

        // Retrying a failed job from the page reruns it: one more job, one more attempt, and
        // the failed job is shown as retried.
        const retry = tab.locator('[data-testid="failed-jobs"] [data-action="retry"]').first();
        await retry.waitFor({ timeout: WAIT_MS });
        const row = retry.locator("xpath=ancestor::tr");
        const failedId = await row.getAttribute("data-job");
        const beforeRetry = await figures(tab);
        await retry.click();
        await tab.waitForSelector(`tr[data-job="${failedId}"] [data-retried-as]`, {
          timeout: WAIT_MS,
        });
        const drained = await until(
          tab,
          "the pool to drain, the retry included",
          (f) =>
            f["totals.enqueued"] === beforeRetry["totals.enqueued"] + 1 &&
            f.pending === 0 &&
            f.running === 0 &&
            f["totals.succeeded"] + f["totals.failed"] + f["totals.canceled"] ===
              f["totals.enqueued"],
        );
        expect(drained["totals.started"]).toBeGreaterThan(beforeRetry["totals.started"]);

        // The page ends where the demo ends: its final stats' totals. (The page is closed
        // first: its polls would fail once the server stops.)
        await tab.close();
        const final = await stopDemo(demo);
        for (const [name, value] of Object.entries(final.totals)) {
          expect(drained[`totals.${name}`], name).toBe(value);
        }
        expect({ pending: drained.pending, running: drained.running }).toEqual({
          pending: final.pending,
          running: final.running,
        });

        // Nothing left localhost, and the page logged no error.
        expect(requests.length).toBeGreaterThan(3);
        for (const url of requests) expect(url.startsWith(demo.url), url).toBe(true);
        expect(errors).toEqual([]);
      } finally {
        await context?.close();
        if (demo && demo.child.exitCode === null) demo.child.kill("SIGKILL");
        rmSync(userDataDir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
