#!/usr/bin/env node
// `npm run demo`: runs the example app's email workload on convex-test (an embedded Convex backend)
// with a virtual clock, then the same jobs as ordinary actions and as executor tasks (--compare-jobs);
// with --serve, serves the live dashboard instead (demo/serve.demo.ts, its page bundled here with
// esbuild). Parses the flags, then runs the workload under vitest, passing the
// flags in DEMO_* environment variables and streaming its output (without colour when stdout is
// not a terminal).
import { spawn } from "node:child_process";
import { existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

const flags = {
  jobs: { env: "DEMO_JOBS", def: "200", int: true, min: 1, max: 100_000, help: "emails to send" },
  parallelism: {
    env: "DEMO_PARALLELISM",
    def: "10",
    int: true,
    min: 1,
    max: 1000,
    help: "emailPool's maxParallelism",
  },
  "duration-ms": {
    env: "DEMO_DURATION_MS",
    def: "1000",
    int: true,
    min: 0,
    max: 600_000,
    help: "how long a job works (virtual ms, ±25%)",
  },
  "fail-rate": {
    env: "DEMO_FAIL_RATE",
    def: "0.1",
    int: false,
    min: 0,
    max: 1,
    help: "chance that an attempt fails (retried up to 5 attempts)",
  },
  seed: {
    env: "DEMO_SEED",
    def: "1",
    int: true,
    min: 0,
    max: 2 ** 32 - 1,
    help: "seed of the failure and duration rules",
  },
  keys: {
    env: "DEMO_KEYS",
    def: undefined, // no keys
    shownDef: "none",
    int: true,
    min: 1,
    max: 100_000,
    help: "give email i the pool key k<i mod keys>: one at a time per key",
  },
  "priority-mix": {
    env: "DEMO_PRIORITY_MIX",
    def: undefined,
    shownDef: "off",
    bool: true,
    help: "send every 10th email high, every 3rd low, the rest normal; report lag per priority",
  },
  rate: {
    env: "DEMO_RATE",
    def: undefined,
    shownDef: "none",
    rate: true,
    help: "rate-limit emailPool to N starts per period, e.g. 20/1s, 100/1m, 5/500ms",
  },
  "compare-jobs": {
    env: "DEMO_COMPARE_JOBS",
    def: "100",
    int: true,
    min: 0,
    max: 10_000,
    help: "then run this many ~2 s jobs as emailPool actions and as llmPool executor tasks, side by side (0: skip)",
  },
  out: {
    env: "DEMO_OUT",
    def: undefined, // chosen by the workload, from the other flags:
    shownDef:
      "demo-out/running-j<jobs>-p<parallelism>-d<duration-ms>-f<fail-rate>-s<seed>[-k<keys>].svg",
    path: ".svg",
    help: "where to write the chart (an .svg file)",
  },
  serve: {
    env: "DEMO_SERVE",
    def: undefined,
    shownDef: "off",
    bool: true,
    help: "serve the live dashboard on localhost while the pool drains, instead of writing the report",
  },
  "serve-port": {
    env: "DEMO_SERVE_PORT",
    def: "4173",
    int: true,
    min: 0,
    max: 65535,
    help: "with --serve: the port (0: any free one)",
  },
  "serve-for": {
    env: "DEMO_SERVE_FOR",
    def: "0",
    int: false,
    min: 0,
    max: 86_400,
    help: "with --serve: stop after this many seconds (0: at Ctrl-C)",
  },
  "serve-speed": {
    env: "DEMO_SERVE_SPEED",
    def: "1",
    int: false,
    min: 0.01,
    max: 1000,
    help: "with --serve: virtual ms per real ms",
  },
  "serve-digest-s": {
    env: "DEMO_SERVE_DIGEST_S",
    def: "10",
    int: true,
    min: 0,
    max: 59,
    help: "with --serve: a digest schedule every N virtual seconds, in the schedules panel (0: none)",
  },
  "serve-import-rows": {
    env: "DEMO_SERVE_IMPORT_ROWS",
    def: "60",
    int: true,
    min: 0,
    max: 1000,
    help: "with --serve: an import of N rows as one group, its progress in the groups panel (0: none)",
  },
  report: {
    env: "DEMO_REPORT",
    def: undefined, // chosen by the workload:
    shownDef: "demo-out/report.html",
    path: ".html",
    help: "where to write the report page (an .html file; its figures go beside it, in .json)",
  },
};

function usage() {
  const lines = ["usage: npm run demo -- [flags]", ""];
  for (const [name, f] of Object.entries(flags)) {
    lines.push(
      `  --${(f.path ? `${name} <path>` : f.rate ? `${name} N/period` : name).padEnd(15)} ${f.help} (default ${f.shownDef ?? f.def})`,
    );
  }
  lines.push("  --help            show this message");
  return lines.join("\n") + "\n";
}

function fail(message) {
  process.stderr.write(`demo: ${message}\n\n${usage()}`);
  process.exit(2);
}

const values = Object.fromEntries(Object.entries(flags).map(([name, f]) => [name, f.def]));
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === "--help" || arg === "-h") {
    process.stdout.write(usage());
    process.exit(0);
  }
  const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
  if (!m || !(m[1] in flags)) fail(`unknown argument ${JSON.stringify(arg)}`);
  if (flags[m[1]].bool) {
    if (m[2] !== undefined) fail(`--${m[1]} takes no value, got ${JSON.stringify(m[2])}`);
    values[m[1]] = "1";
    continue;
  }
  const value = m[2] ?? argv[++i];
  if (value === undefined) fail(`--${m[1]} needs a value`);
  values[m[1]] = value;
}

/** Units a --rate period may be given in, in ms. */
const PERIOD_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "N/period" (e.g. 20/1s, 100/1m, 5/500ms, or a period in ms: 20/1000) as "starts,periodMs". */
function rateLimitOf(value) {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*(ms|s|m|h)?\s*$/.exec(value);
  const starts = m ? Number(m[1]) : NaN;
  const periodMs = m ? Number(m[2]) * PERIOD_UNITS[m[3] ?? "ms"] : NaN;
  if (!(starts >= 1 && periodMs >= 1 && Number.isSafeInteger(starts * periodMs))) {
    fail(
      `--rate must be N/period with whole numbers ≥ 1 and a unit of ms, s, m or h (e.g. 20/1s), got ${JSON.stringify(value)}`,
    );
  }
  return `${starts},${periodMs}`;
}

/** An --out or --report path, from where `npm run demo` was started; the default is left to the
 * workload. */
function outPath(name) {
  const value = values[name];
  if (value === undefined) return "";
  const path = resolve(process.env.INIT_CWD ?? process.cwd(), value);
  const ext = flags[name].path;
  if (!value.toLowerCase().endsWith(ext) || (existsSync(path) && statSync(path).isDirectory())) {
    fail(`--${name} must be the path of an ${ext} file, got ${JSON.stringify(value)}`);
  }
  return path;
}

const env = { ...process.env };
for (const [name, f] of Object.entries(flags)) {
  if (f.path) {
    env[f.env] = outPath(name);
    continue;
  }
  if (f.bool) {
    env[f.env] = values[name] ?? "";
    continue;
  }
  if (f.rate) {
    env[f.env] = values[name] === undefined ? "" : rateLimitOf(values[name]);
    continue;
  }
  if (values[name] === undefined) {
    env[f.env] = ""; // an optional flag not given (and not inherited from the environment)
    continue;
  }
  const raw = values[name].trim();
  const n = Number(raw);
  if (
    raw === "" ||
    !Number.isFinite(n) ||
    (f.int && !Number.isInteger(n)) ||
    n < f.min ||
    n > f.max
  ) {
    fail(
      `--${name} must be ${f.int ? "an integer" : "a number"} from ${f.min} to ${f.max}, got ${JSON.stringify(values[name])}`,
    );
  }
  env[f.env] = String(n);
}
if (values.keys !== undefined && Number(env.DEMO_KEYS) > Number(env.DEMO_JOBS)) {
  fail(
    `--keys must be at most --jobs (${env.DEMO_JOBS}), so that every key gets an email, got ${JSON.stringify(values.keys)}`,
  );
}
env.DEMO_TTY = process.stdout.isTTY ? "1" : "0";
if (!process.stdout.isTTY) {
  // No ANSI colour in piped or redirected output (vitest's error output would have it).
  env.NO_COLOR = "1";
  env.FORCE_COLOR = "0";
}

const vitest = `${root}node_modules/vitest/vitest.mjs`;
if (!existsSync(vitest)) fail("vitest is not installed: run `npm install` first");
const serving = env.DEMO_SERVE === "1";
let stopFile;
if (serving) {
  env.DEMO_SERVE_BUNDLE = await bundleDashboard();
  // The server stops when this file appears (or this process is gone): a signal to vitest would
  // end it at once, before it could stop the server and print its final stats.
  stopFile = resolve(root, "demo-out", "dashboard", `stop-${process.pid}`);
  rmSync(stopFile, { force: true });
  env.DEMO_SERVE_STOP = stopFile;
  env.DEMO_PARENT_PID = String(process.pid);
}
const file = serving ? "demo/serve.demo.ts" : "demo/workload.demo.ts";
const child = spawn(process.execPath, [vitest, "run", "--config", "demo/vitest.config.ts", file], {
  cwd: root,
  env,
  stdio: "inherit",
  // Serving, vitest gets no Ctrl-C of its own (its own process group): this process asks it to stop.
  detached: serving,
});
child.on("exit", (code, signal) => {
  if (stopFile) rmSync(stopFile, { force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
if (serving) {
  /** How long the server may take to stop before it is killed. */
  const STOP_GRACE_MS = 15_000;
  const stop = () => {
    writeFileSync(stopFile, "stop\n");
    setTimeout(() => process.kill(-child.pid, "SIGKILL"), STOP_GRACE_MS).unref();
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

/** Bundles the live dashboard's page (demo/dashboard/page.tsx, with React and the package's
 * views) into one script with the esbuild convex ships; returns its path. */
async function bundleDashboard() {
  const { build } = await import("esbuild");
  const outfile = resolve(root, "demo-out", "dashboard", "app.js");
  await build({
    entryPoints: [resolve(root, "demo", "dashboard", "page.tsx")],
    bundle: true,
    format: "iife",
    platform: "browser",
    target: "es2020",
    jsx: "automatic",
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
    outfile,
    logLevel: "error",
  });
  return outfile;
}
