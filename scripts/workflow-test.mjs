#!/usr/bin/env node
// @convex-dev/workflow on this pool (slow tier, `npm run test:slow`). In a temporary app, installs
// workflow's published package (WORKFLOW_VERSION) with `@convex-dev/workpool` aliased to this
// package's tarball (an npm alias to a `file:` tarball), then:
//   - runs workflow's own test files, unchanged (its `src/`, laid out as in its repository, so that
//     its paths into node_modules/@convex-dev/workpool reach ours);
//   - runs our tour of its steps (test/workflow/*.test.ts: query, mutation, action with and without
//     retries, sleep, parallel steps, nested workflows, events, cancel), drained the standard way;
//   - type-checks workflow's `src/` against ours with the settings of its repository (its tsconfig is
//     not in the tarball: strict, lib ES2021, NodeNext, verbatimModuleSyntax, skipLibCheck), and the
//     tour with an app's usual settings.
// Then runs the same tour against the real @convex-dev/workpool (PEER_VERSION) as a control. Every
// case must pass in both apps. Plain node; temp dirs removed unless KEEP_TMP=1.
import fs from "node:fs";
import path from "node:path";
import {
  APP_COMPILER_OPTIONS,
  fail,
  fetchPublished,
  logger,
  mkTmp,
  npmInstall,
  packOurs,
  repo,
  repoVersion,
  run,
  runScript,
  vitestResults,
  write,
} from "./temp-app.mjs";

const WORKFLOW_VERSION = "0.4.8";
/** The pool workflow was made for, run under the same tour as the control. */
const PEER_VERSION = "0.4.16";
/** Workflow's own dependencies (its package.json), at the versions its range takes. */
const WORKFLOW_DEPS = ["async-channel@^0.2.0", `convex-helpers@${repoVersion("convex-helpers")}`];

const { log, elapsed } = logger("workflow-test");

const VITEST_CONFIG = `import { defineConfig } from "vitest/config";
export default defineConfig({
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
    include: ["src/**/*.test.ts", "tour/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
`;

/** Workflow's own type-check settings (its repository's tsconfig.json). */
const WORKFLOW_TSCONFIG = {
  compilerOptions: {
    target: "ES2021",
    lib: ["ES2021", "DOM"],
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
  },
  include: ["src"],
};

/** An app's usual settings, for the tour. */
const TOUR_TSCONFIG = { compilerOptions: APP_COMPILER_OPTIONS, include: ["tour"] };

/** A temporary app with workflow's tarball and `pool` (a tarball path, or a registry version) as
 * @convex-dev/workpool; the tour's files in tour/, and workflow's src/ when `withSource`. */
function makeApp(prefix, workflow, pool, withSource) {
  const app = mkTmp(prefix);
  const tools = [
    "convex",
    "convex-test",
    "vitest",
    "@edge-runtime/vm",
    "typescript",
    "@types/node",
  ];
  const dependencies = {
    "@convex-dev/workflow": `file:${workflow.tarball}`,
    "@convex-dev/workpool": pool,
    ...Object.fromEntries(WORKFLOW_DEPS.map((d) => d.match(/^(@?[^@]+)@(.+)$/).slice(1))),
    ...Object.fromEntries(tools.map((name) => [name, repoVersion(name)])),
  };
  write(
    app,
    "package.json",
    JSON.stringify({ name: "workflow-on-pool", private: true, type: "module", dependencies }),
  );
  write(app, "vitest.config.ts", VITEST_CONFIG);
  write(app, "tsconfig.tour.json", JSON.stringify(TOUR_TSCONFIG, null, 2));
  const tourDir = path.join(repo, "test", "workflow");
  fs.mkdirSync(path.join(app, "tour"));
  for (const f of fs.readdirSync(tourDir).filter((f) => f.endsWith(".ts"))) {
    fs.copyFileSync(path.join(tourDir, f), path.join(app, "tour", f));
  }
  if (withSource) {
    fs.cpSync(path.join(workflow.root, "src"), path.join(app, "src"), { recursive: true });
    write(app, "tsconfig.json", JSON.stringify(WORKFLOW_TSCONFIG, null, 2));
  }
  log(`${prefix}: npm install (workpool: ${pool})`);
  // --legacy-peer-deps: workflow's peer range names @convex-dev/workpool ^0.4.4, which the alias
  // to this package (version 0.1.x) does not meet by number.
  npmInstall(app, ["--legacy-peer-deps"], log);
  return app;
}

/** Fails with every case that did not pass; returns how many ran. */
function expectAllPass(where, tests, out) {
  if (tests.length === 0) fail(`${where}: no tests ran:\n${out}`);
  const failed = tests.filter((t) => t.state !== "passed");
  if (failed.length) {
    fail(
      failed
        .map((t) => `${where}: ${t.state}: ${t.name}\n    ${t.message.replaceAll("\n", "\n    ")}`)
        .join("\n"),
    );
  }
  return tests.length;
}

let summary = "";

async function main() {
  const ours = packOurs(log);
  const workflow = fetchPublished(`@convex-dev/workflow@${WORKFLOW_VERSION}`, log);

  const app = makeApp("workflow-ours-", workflow, `file:${ours}`, true);
  const tsc = path.join(app, "node_modules", ".bin", "tsc");
  log("tsc: workflow's src/ against ours (strict, ES2021, NodeNext, verbatimModuleSyntax)");
  run(tsc, ["--noEmit", "-p", "tsconfig.json"], app);
  log("tsc: the tour");
  run(tsc, ["--noEmit", "-p", "tsconfig.tour.json"], app);
  log("vitest: workflow's own tests and the tour, on ours");
  const onOurs = vitestResults(app, app);
  const own = onOurs.tests.filter((t) => t.name.startsWith("src/"));
  const tour = onOurs.tests.filter((t) => t.name.startsWith("tour/"));
  log(
    `on ours: workflow's own ${own.filter((t) => t.state === "passed").length}/${own.length}, ` +
      `tour ${tour.filter((t) => t.state === "passed").length}/${tour.length}`,
  );

  const control = makeApp("workflow-peer-", workflow, PEER_VERSION, false);
  log(`vitest: the tour on @convex-dev/workpool ${PEER_VERSION} (control)`);
  const onPeer = vitestResults(control, control);
  const passedOnPeer = onPeer.tests.filter((t) => t.state === "passed").length;
  log(`on the peer: tour ${passedOnPeer}/${onPeer.tests.length}`);

  expectAllPass("control (the peer)", onPeer.tests, onPeer.out);
  expectAllPass("on ours", onOurs.tests, onOurs.out);
  summary =
    `workflow ${WORKFLOW_VERSION} on this pool: its own ${own.length} tests and the tour's ` +
    `${tour.length} pass, its src/ type-checks; the tour passes on the peer ${PEER_VERSION} too`;
}

await runScript("workflow-test", { toString: () => summary }, main, elapsed);
