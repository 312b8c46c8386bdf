#!/usr/bin/env node
// The peer's own client test, run against this package (slow tier, `npm run test:slow`): fetches
// @convex-dev/workpool's published tarball (PEER_VERSION), takes its `src/client/index.test.ts`
// into a temporary app, rewrites only its imports of the peer's own files to this package (packed
// and installed as an app installs it), then type-checks it (strict) and runs it with vitest.
// Every case must pass but the accepted differences listed below by name, each of which must fail
// (a listed case that passes means the list is stale): the script fails otherwise. Not copied into
// the repo: the peer's file is its own, and fetched fresh. Plain node; temp dirs removed unless
// KEEP_TMP=1.
import fs from "node:fs";
import path from "node:path";
import {
  APP_COMPILER_OPTIONS,
  atLeast,
  fail,
  fetchPublished,
  logger,
  npmInstall,
  packOurs,
  repoVersion,
  run,
  runScript,
  vitestResults,
  write,
  mkTmp,
} from "./temp-app.mjs";

/** The peer release whose test runs: the one API-COMPAT.md matches. */
const PEER_VERSION = "0.4.16";
/** The test uses convex-test's `defineTestApp`, which came with this version. */
const MIN_CONVEX_TEST = "0.0.70";

/**
 * The peer's cases we fail on purpose, by name (file > describe > title), each with what we do
 * instead and the spec of ours that asserts it.
 */
const ACCEPTED_DIFFERENCES = {
  "peer/index.test.ts > completion callbacks through the client and scheduler > rejects invalid result kinds at runtime (batch: false)":
    'we reject a bad onCompleteExcludeKinds before the call with our named InvalidArgument ("workpool: invalid onCompleteExcludeKinds[0]: ..."), where the peer relies on Convex\'s "Validator error" (test/badInput.test.ts)',
  "peer/index.test.ts > completion callbacks through the client and scheduler > rejects invalid result kinds at runtime (batch: true)":
    "the same, for a batch enqueue (test/badInput.test.ts)",
};

/** How the peer's test imports its own files, and what each becomes here. */
const IMPORTS = {
  "../test.js": "convex-workpool/test",
  "./index.js": "convex-workpool",
  // The component's own generated API (for a type test: its enqueue args equal the client's
  // view); not in the package's exports, so reached by path.
  "../component/_generated/api.js":
    "../node_modules/convex-workpool/src/component/_generated/api.js",
};

const { log, elapsed } = logger("peer-client-test");

/** The peer's test with its imports of its own files pointed at ours; fails on any other relative
 * import, or when an expected one is missing (the peer's file changed shape). */
function rewriteImports(text) {
  let out = text;
  for (const [from, to] of Object.entries(IMPORTS)) {
    const pattern = new RegExp(`from "${from.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}"`, "g");
    if (!pattern.test(out)) fail(`the peer's test no longer imports "${from}"`);
    out = out.replace(pattern, `from "${to}"`);
  }
  const left = [...out.matchAll(/from "(\.\.?\/[^"]+)"/g)]
    .map((m) => m[1])
    .filter((spec) => !Object.values(IMPORTS).includes(spec));
  if (left.length)
    fail(`the peer's test imports files of its own we do not map: ${left.join(", ")}`);
  return out;
}

async function main() {
  const tarball = packOurs(log);
  const peer = fetchPublished(`@convex-dev/workpool@${PEER_VERSION}`, log);
  const source = fs.readFileSync(path.join(peer.root, "src/client/index.test.ts"), "utf8");

  const app = mkTmp("workpool-peer-client-");
  write(
    app,
    "package.json",
    JSON.stringify({ name: "peer-client-test", private: true, type: "module" }),
  );
  write(app, "peer/index.test.ts", rewriteImports(source));
  write(
    app,
    "vitest.config.ts",
    `import { defineConfig } from "vitest/config";
export default defineConfig({
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
    include: ["peer/**/*.test.ts"],
  },
});
`,
  );
  write(
    app,
    "tsconfig.json",
    JSON.stringify({ compilerOptions: APP_COMPILER_OPTIONS, include: ["peer"] }, null, 2),
  );
  const convexTest = atLeast(repoVersion("convex-test"), MIN_CONVEX_TEST)
    ? repoVersion("convex-test")
    : MIN_CONVEX_TEST;
  const deps = [
    `convex@${repoVersion("convex")}`,
    `convex-test@${convexTest}`,
    `vitest@${repoVersion("vitest")}`,
    `@edge-runtime/vm@${repoVersion("@edge-runtime/vm")}`,
    `typescript@${repoVersion("typescript")}`,
    `@types/node@${repoVersion("@types/node")}`,
  ];
  log(`npm install ${deps.join(" ")} + our tarball`);
  npmInstall(app, ["--no-save", tarball, ...deps], log);

  log("tsc --noEmit (strict) on the peer's test");
  run(path.join(app, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "tsconfig.json"], app);

  log("vitest run on the peer's test");
  const { tests, out } = vitestResults(app, app);
  if (tests.length === 0) fail(`no tests ran:\n${out}`);
  const failed = tests.filter((t) => t.state !== "passed");
  const unexpected = failed.filter((t) => !(t.name in ACCEPTED_DIFFERENCES));
  const stale = Object.keys(ACCEPTED_DIFFERENCES).filter(
    (name) => !failed.some((t) => t.name === name),
  );
  for (const name of Object.keys(ACCEPTED_DIFFERENCES)) {
    if (!tests.some((t) => t.name === name)) log(`listed but not in the peer's test: ${name}`);
  }
  log(
    `${tests.length} cases: ${tests.length - failed.length} passed, ` +
      `${failed.length - unexpected.length} accepted differences failed as listed`,
  );
  if (unexpected.length || stale.length) {
    const lines = [
      ...unexpected.map(
        (t) => `unexpected failure: ${t.name}\n    ${t.message.replaceAll("\n", "\n    ")}`,
      ),
      ...stale.map((name) => `listed as an accepted difference, but it did not fail: ${name}`),
    ];
    fail(lines.join("\n"));
  }
  summary = `the peer's ${PEER_VERSION} client test: ${tests.length - failed.length} of ${tests.length} cases pass, the other ${failed.length} are the listed differences; it type-checks`;
}

let summary = "";
await runScript("peer-client-test", { toString: () => summary }, main, elapsed);
