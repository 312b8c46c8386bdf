#!/usr/bin/env node
// `npm test`: the checks every change must pass, in order — types, lint, the vitest suite, the
// package test — stopping at the first failure, then one summary line with each step's time.
// When the output is not a terminal (a pipe, a CI log) colour is turned off, so logs stay plain.
// The long runs are `npm run test:slow` (CI runs both).
import { spawnSync } from "node:child_process";

const STEPS = [
  ["typecheck", ["run", "typecheck"]],
  ["lint", ["run", "lint"]],
  ["vitest", ["exec", "--", "vitest", "run"]],
  ["package test", ["run", "test:package"]],
];

const env = { ...process.env };
if (!process.stdout.isTTY) {
  env.NO_COLOR = "1";
  delete env.FORCE_COLOR;
}

const started = Date.now();
const times = [];
for (const [name, args] of STEPS) {
  const t0 = Date.now();
  const r = spawnSync("npm", args, { stdio: "inherit", env });
  times.push(`${name} ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  if (r.status !== 0) {
    console.log(`\nnpm test: FAILED at ${name} (${times.join(", ")})`);
    process.exit(r.status ?? 1);
  }
}
const total = ((Date.now() - started) / 1000).toFixed(0);
console.log(`\nnpm test: passed in ${total} s (${times.join(", ")}); long runs: npm run test:slow`);
