#!/usr/bin/env node
// `npm test`: the checks every change must pass — types, lint and the vitest suite, side by side —
// failing if any fails, then one summary line with each step's time. It stays under two minutes on
// a 2-core machine by leaving to the slow tier what takes long: the scale-sensitive specs, the
// specs that drive a browser or measure the pool (SLOW_ONLY), and the package test.
// `npm run test:slow` (`node scripts/test.mjs slow`): the scale-sensitive specs at full size
// (test/scale.ts) and the SLOW_ONLY specs, then the package test at both ends of the version ranges
// we state (the oldest
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
];
/** Slow files that are not scale-sensitive: `npm test` leaves them to the slow tier (each about
 * 5–30 s alone on this machine). */
const SLOW_ONLY = [
  // The live dashboard in Chromium over `npm run demo -- --serve`: about 30 s of real time.
  "test/dashboardLive.test.ts",
  // The demo server refuses other origins and hosts (spawns the demo, drives Chromium): about 25 s.
  "test/sec4DemoServer.test.ts",
  // The demo's report page in Chromium.
  "test/demoReport.test.ts",
  // Every bad argument of every function (562 cases).
  "test/badInput.test.ts",
  // Measurements of the pool: read/write-set conflicts, and the bench's own counters.
  "test/conflicts.test.ts",
  "bench/counters.test.ts",
  "bench/actionSlots.test.ts",
  // Scenario properties over many jobs (also checked by the model test and the bench): key order
  // and limits, priority order, the rate limit's windows, onComplete delivery under load.
  "test/keys.test.ts",
  "test/priority.test.ts",
  "test/rateLimit.test.ts",
  "test/deliver.test.ts",
  // Fair share's scenarios (API-EXTENSIONS section 13; its rules are unit-tested in the fast
  // tier, src/component/model/startOrder.test.ts): about 25 s, a backlog of 1,000 jobs among them.
  "test/fairShare.test.ts",
  // The pass budget and Convex's per-transaction limits met on purpose (each drives thousands of
  // rows or values near 1 MiB through the deployment backend, 5–17 s apiece): every stage at a
  // count limit, the delivery check's split, the backstop, values at the limits, executors'
  // reports at the limits and under faults.
  "test/stageBudgets.test.ts",
  "test/rev4DeliverySplitWedge.test.ts",
  "test/backstop.test.ts",
  "test/batchBytes.test.ts",
  "test/valueLimits.test.ts",
  "test/executorFaults.test.ts",
  "test/executorBigResults.test.ts",
];

/** The browser test/demoReport.test.ts and test/dashboardLive.test.ts drive (slow tier); without it
 * they are skipped (failed under CI). */
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

const slow = process.argv[2] === "slow";
const STEPS = slow
  ? [
      ["vitest, full scale", ["exec", "--", "vitest", "run", ...SLOW_FILES, ...SLOW_ONLY]],
      ["package test, oldest versions", ["run", "test:package", "--", "--end", "oldest"]],
      ["package test, latest versions", ["run", "test:package", "--", "--end", "latest"]],
      // Drop-in checks in temporary apps (each fetches a published package with npm pack): the
      // peer's own client test on this package, and @convex-dev/workflow on this pool.
      ["peer client test", ["run", "test:peer-client"]],
      ["workflow on this pool", ["run", "test:workflow"]],
    ]
  : [
      // All three side by side: tsc and eslint are single-threaded and vitest's tests spend much
      // of their time awaiting, so together they keep a 2-core machine busy. The example app's
      // tests run in the package test (slow tier), against the packed package as an app installs
      // it; not twice (`npx vitest run example` runs them against the source).
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
            ...[...SLOW_FILES, ...SLOW_ONLY].flatMap((file) => ["--exclude", file]),
          ],
        ],
      ],
    ];
const name = slow ? "npm run test:slow" : "npm test";

// The slow tier draws a fresh seed each run (printed first, for a replay); the programs that once
// broke an invariant are replayed too (test/model.test.ts CHAOS_REPLAYS).
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
if (slow && !existsSync(CHROMIUM)) {
  console.log(
    `${name}: SKIPPED the browser checks (test/demoReport.test.ts, test/dashboardLive.test.ts): no browser at ` +
      `${CHROMIUM}; install Chromium to run it (Debian: apt-get install chromium)`,
  );
}
