#!/usr/bin/env node
// `npm run demo`: runs the example app's email workload on convex-test (an embedded Convex backend)
// with a virtual clock. Parses the flags, then runs demo/workload.demo.ts under vitest, passing the
// flags in DEMO_* environment variables and streaming its output.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
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
};

function usage() {
  const lines = ["usage: npm run demo -- [flags]", ""];
  for (const [name, f] of Object.entries(flags)) {
    lines.push(`  --${name.padEnd(13)} ${f.help} (default ${f.def})`);
  }
  lines.push("  --help          show this message");
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
  const value = m[2] ?? argv[++i];
  if (value === undefined) fail(`--${m[1]} needs a value`);
  values[m[1]] = value;
}

const env = { ...process.env };
for (const [name, f] of Object.entries(flags)) {
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
env.DEMO_TTY = process.stdout.isTTY ? "1" : "0";
env.DEMO_OUT = "demo-out";

const vitest = `${root}node_modules/vitest/vitest.mjs`;
if (!existsSync(vitest)) fail("vitest is not installed: run `npm install` first");
const child = spawn(process.execPath, [vitest, "run", "--config", "demo/vitest.config.ts"], {
  cwd: root,
  env,
  stdio: "inherit",
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
