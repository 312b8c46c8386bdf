#!/usr/bin/env node
// Regenerates docs/img/dashboard.png, the README's picture of the operator dashboard: runs
// `npm run demo -- --serve` (a fixed workload: 120 emails over 6 keys, some failing for good),
// opens the page in headless Chromium (playwright-core driving /usr/bin/chromium, or
// $CHROMIUM_PATH), waits until the pool is part-way through with failed jobs on the page, and
// saves a full-page screenshot. Committed, not compared in CI: run it after changing the views.
// Usage: node scripts/dashboard-screenshot.mjs [--dark]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const root = fileURLToPath(new URL("..", import.meta.url));
const dark = process.argv.includes("--dark");
const out = join(root, "docs", "img", dark ? "dashboard-dark.png" : "dashboard.png");
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const ARGS = [
  ...["--serve", "--serve-port", "0", "--serve-for", "120", "--serve-speed", "2"],
  ...["--jobs", "120", "--parallelism", "6", "--duration-ms", "800"],
  ...["--fail-rate", "0.6", "--keys", "6", "--seed", "3"],
];
/** What the picture waits for: this many jobs finished, and a failed one listed. */
const FINISHED_AT_LEAST = 45;

const demo = spawn(process.execPath, [join(root, "demo", "demo.mjs"), ...ARGS], {
  cwd: root,
  env: { ...process.env, NO_COLOR: "1" },
  stdio: ["ignore", "pipe", "inherit"],
});
let text = "";
const url = await new Promise((resolve, reject) => {
  demo.stdout.on("data", (chunk) => {
    text += chunk;
    const m = /dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(text);
    if (m) resolve(m[1]);
  });
  demo.on("close", (code) => reject(new Error(`demo exited ${code}:\n${text}`)));
});
const userDataDir = mkdtempSync(join(tmpdir(), "dashboard-shot-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1140, height: 900 },
  colorScheme: dark ? "dark" : "light",
  deviceScaleFactor: 1,
});
try {
  const tab = await context.newPage();
  await tab.goto(url, { waitUntil: "load" });
  await tab.waitForFunction(
    (least) => {
      const n = (name) =>
        Number(
          globalThis.document
            .querySelector(`[data-figure="${name}"]`)
            ?.textContent?.replace(/,/g, "") ?? 0,
        );
      return (
        n("totals.succeeded") + n("totals.failed") >= least &&
        globalThis.document.querySelector('[data-testid="failed-jobs"]') !== null
      );
    },
    FINISHED_AT_LEAST,
    { timeout: 60_000, polling: 100 },
  );
  mkdirSync(dirname(out), { recursive: true });
  await tab.screenshot({ path: out, fullPage: true });
  console.log(`wrote ${out}`);
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
  demo.kill("SIGTERM");
}
