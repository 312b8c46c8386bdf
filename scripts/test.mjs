#!/usr/bin/env node
// `npm test`: the checks every change must pass — types, lint, the vitest suite and the package
// test, side by side — failing if any fails, then one summary line with each step's time.
// `npm run test:slow` (`node scripts/test.mjs slow`): the scale-sensitive specs at full size
// (test/scale.ts) and the live dashboard in a browser (test/dashboardLive.test.ts, left out of
// `npm test`), then the package test at both ends of the version ranges we state (the oldest
// and the latest convex, convex-test, vitest and TypeScript, installed from the registry:
// scripts/package-test.mjs `ENDS`), then the drop-in checks (scripts/peer-client-test.mjs,
// workflow-test.mjs). CI runs both. When the output is not a terminal (a pipe, a CI log) colour is
// turned off, so logs stay plain.
import { Buffer } from "node:buffer";
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const SLOW_FILES = [
  "test/faults.test.ts",
  "test/model.test.ts",
  "test/bounded.test.ts",
  "test/boundedKeys.test.ts",
  "test/budgets.test.ts",
  // The live dashboard in Chromium over `npm run demo -- --serve`: about 30 s of real time.
  "test/dashboardLive.test.ts",
];
/** Slow files that are not scale-sensitive: the fast run leaves them to the slow one. */
const SLOW_ONLY = ["test/dashboardLive.test.ts"];

/** The browser test/demoReport.test.ts drives; without it that test is skipped (failed under CI). */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

const slow = process.argv[2] === "slow";
const STEPS = slow
  ? [
      ["vitest, full scale", ["exec", "--", "vitest", "run", ...SLOW_FILES]],
      ["package test, oldest versions", ["run", "test:package", "--", "--end", "oldest"]],
      ["package test, latest versions", ["run", "test:package", "--", "--end", "latest"]],
      // Drop-in checks in temporary apps (each fetches a published package with npm pack): the
      // peer's own client test on this package, and @convex-dev/workflow on this pool.
      ["peer client test", ["run", "test:peer-client"]],
      ["workflow on this pool", ["run", "test:workflow"]],
    ]
  : [
      // All four side by side: each is mostly single-threaded or waiting (tsc, eslint, npm
      // installs, vitest's awaits), so together they keep a 2-core machine busy. The example app's
      // tests run in the package test, against the packed package as an app installs it; not
      // twice (`npx vitest run example` runs them against the source).
      [
        ["typecheck", ["run", "typecheck"]],
        ["lint", ["run", "lint"]],
        [
          "vitest",
          [
            "exec",
            "--",
            "vitest",
            "run",
            "--exclude",
            "example/**",
            ...SLOW_ONLY.flatMap((file) => ["--exclude", file]),
          ],
        ],
        ["package test", ["run", "test:package"]],
      ],
    ];
const name = slow ? "npm run test:slow" : "npm test";

const env = { ...process.env, ...(slow ? { TEST_SCALE: "full" } : {}) };
if (!process.stdout.isTTY) {
  env.NO_COLOR = "1";
  delete env.FORCE_COLOR;
}

/** Runs `npm <args>` with its output collected, printed in one piece when it ends. */
function runQuietly(args) {
  return new Promise((resolve) => {
    const child = spawn("npm", args, { env, stdio: ["ignore", "pipe", "pipe"] });
    const chunks = [];
    child.stdout.on("data", (chunk) => chunks.push(chunk));
    child.stderr.on("data", (chunk) => chunks.push(chunk));
    child.on("close", (status) => resolve({ status, output: Buffer.concat(chunks) }));
  });
}

const started = Date.now();
const times = [];
const failed = (step, status) => {
  console.log(`\n${name}: FAILED at ${step} (${times.join(", ")})`);
  process.exit(status ?? 1);
};
for (const entry of STEPS) {
  if (Array.isArray(entry[0])) {
    // A group: its steps run at once, each printed whole when it ends.
    const results = await Promise.all(
      entry.map(async ([step, args]) => {
        const t0 = Date.now();
        const r = await runQuietly(args);
        process.stdout.write(r.output);
        times.push(`${step} ${((Date.now() - t0) / 1000).toFixed(0)} s`);
        return { step, status: r.status };
      }),
    );
    const bad = results.find((r) => r.status !== 0);
    if (bad) failed(bad.step, bad.status);
    continue;
  }
  const [step, args] = entry;
  const t0 = Date.now();
  const r = spawnSync("npm", args, { stdio: "inherit", env });
  times.push(`${step} ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (r.status !== 0) failed(step, r.status);
}
const total = ((Date.now() - started) / 1000).toFixed(0);
const next = slow ? "" : "; long runs: npm run test:slow";
console.log(`\n${name}: passed in ${total} s (${times.join(", ")})${next}`);
if (!slow && !existsSync(CHROMIUM)) {
  console.log(
    `${name}: SKIPPED the report page's browser check (test/demoReport.test.ts): no browser at ` +
      `${CHROMIUM}; install Chromium to run it (Debian: apt-get install chromium)`,
  );
}
