#!/usr/bin/env node
// `npm test`: the checks every change must pass, in order — types, lint, the vitest suite, the
// package test — stopping at the first failure, then one summary line with each step's time.
// `npm run test:slow` (`node scripts/test.mjs slow`): the scale-sensitive specs at full size
// (test/scale.ts). CI runs both. When the output is not a terminal (a pipe, a CI log) colour is
// turned off, so logs stay plain.
import { spawnSync } from "node:child_process";

const SLOW_FILES = [
  "test/faults.test.ts",
  "test/model.test.ts",
  "test/bounded.test.ts",
  "test/boundedKeys.test.ts",
];

const slow = process.argv[2] === "slow";
const STEPS = slow
  ? [["vitest, full scale", ["exec", "--", "vitest", "run", ...SLOW_FILES]]]
  : [
      ["typecheck", ["run", "typecheck"]],
      ["lint", ["run", "lint"]],
      ["vitest", ["exec", "--", "vitest", "run"]],
      ["package test", ["run", "test:package"]],
    ];
const name = slow ? "npm run test:slow" : "npm test";

const env = { ...process.env, ...(slow ? { TEST_SCALE: "full" } : {}) };
if (!process.stdout.isTTY) {
  env.NO_COLOR = "1";
  delete env.FORCE_COLOR;
}

const started = Date.now();
const times = [];
for (const [step, args] of STEPS) {
  const t0 = Date.now();
  const r = spawnSync("npm", args, { stdio: "inherit", env });
  times.push(`${step} ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (r.status !== 0) {
    console.log(`\n${name}: FAILED at ${step} (${times.join(", ")})`);
    process.exit(r.status ?? 1);
  }
}
const total = ((Date.now() - started) / 1000).toFixed(0);
const next = slow ? "" : "; long runs: npm run test:slow";
console.log(`\n${name}: passed in ${total} s (${times.join(", ")})${next}`);
