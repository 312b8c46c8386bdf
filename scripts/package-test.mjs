#!/usr/bin/env node
// Package test: builds and packs convex-workpool, installs the tarball into a fresh temporary app
// (with the same convex, convex-test, vitest, @edge-runtime/vm and typescript versions as this repo),
// and checks what a user would do with it:
//   - every path in the `exports` map resolves to a file inside the installed package;
//   - the packed file list has no tests and has what `./test` needs (src/test.ts, src/component);
//   - convex's own bundler accepts the installed component directory (entry points + esbuild);
//   - README.md and docs/*.md: every TypeScript block is written into its document's app
//     (`apps/<doc>/`) as its `<!-- file: path -->` marker says (scripts/doc-apps.mjs has the
//     rules); all the apps type-check under `strict` in one tsc run (skipLibCheck off, so our .d.ts
//     files are checked too); an app that shows its own tsconfig.json type-checks with it as well,
//     one that shows a package.json names versions of its dependencies that the ones installed
//     here satisfy, and one that shows a vitest.config.ts runs its tests, which must pass; the
//     other entry points (`convex-workpool/convex.config`, `./test`, `./react`, the `ComponentApi` type)
//     type-check under moduleResolution Bundler and NodeNext;
//   - example/: a copy (`example/`) type-checks with its own tsconfig and its tests pass against
//     the installed package, and its package.json installs the tarball this build packs.
//
// Which versions: by default the repo's own (what `npm test` runs). `--end oldest` and `--end latest`
// (`npm run test:slow` runs both) install instead the oldest and the newest versions of the toolchain
// that README and docs/reference.md say we support (ENDS below), from the registry: the ranges we
// state are the ranges we test. A document's block that needs a newer package than an end has
// (`<!-- file: ... (needs convex-test 0.0.70) -->`, scripts/doc-apps.mjs) is left out there, and the
// log names it.
// Plain node (child_process), because `npm test`'s vitest runs in edge-runtime and can't spawn.
// Prints one PASS/FAIL line at the end and exits non-zero on failure. Temp dirs are removed unless
// KEEP_TMP=1.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { DocError, docApps } from "./doc-apps.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The ends of the ranges we support, each a set of versions installed together (the rest of DEPS at
 * the repo's versions). Oldest: the `convex` peer range's floor (the peer's too), the first
 * convex-test we ran on, vitest 4, TypeScript 5.9. Latest: today's releases (vitest 5 and convex 1.49
 * declare Node 22 in `engines`; they run on the Node 20 this repo and CI use).
 */
const ENDS = {
  oldest: {
    convex: "1.43.0",
    "convex-test": "0.0.60",
    vitest: "4.1.0",
    typescript: "5.9.2",
    "@types/node": "20.19.43",
  },
  latest: {
    convex: "1.49.0",
    "convex-test": "0.0.70",
    vitest: "5.1.1",
    typescript: "7.0.2",
    "@types/node": "22.20.5",
  },
};
const endArg = process.argv.indexOf("--end");
const END = endArg === -1 ? "repo" : process.argv[endArg + 1];
if (END !== "repo" && !(END in ENDS)) {
  console.error(`package-test: --end takes ${Object.keys(ENDS).join(" or ")}, not ${END}`);
  process.exit(2);
}
const started = Date.now();
const tmpDirs = [];
// @types/node: the app type-checks with skipLibCheck off (to check our .d.ts), and vitest/vite
// types need node types.
const DEPS = [
  "convex",
  "convex-test",
  "vitest",
  "@edge-runtime/vm",
  "typescript",
  "@types/node",
  // docs/operating.md's React admin page (src/AdminPage.tsx) is type-checked too,
  // and docs/migrating.md's app runs the peer's pool beside ours.
  "react",
  "@types/react",
  "@convex-dev/workpool",
  // Ours, pinned to one that agrees with our `convex` range: the peer's open range would otherwise
  // bring the newest, which at the oldest end asks for a newer convex than is installed.
  "convex-helpers",
];

function elapsed() {
  return `${((Date.now() - started) / 1000).toFixed(1)}s`;
}

function log(msg) {
  console.log(`[package-test${END === "repo" ? "" : ` ${END}`} ${elapsed()}] ${msg}`);
}

class Failure extends Error {}

function fail(msg) {
  throw new Failure(msg);
}

/** Runs a command; returns { status, out }. Throws a Failure (with its output) unless allowed. */
function run(cmd, args, cwd, { allowFail = false, quiet = false } = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "1", FORCE_COLOR: "0", NO_COLOR: "1" },
    maxBuffer: 64 * 1024 * 1024,
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.error) fail(`${cmd} ${args.join(" ")}: ${r.error.message}`);
  if (r.status !== 0 && !allowFail) {
    fail(`\`${cmd} ${args.join(" ")}\` in ${cwd} exited ${r.status}:\n${out}`);
  }
  if (!quiet && r.status === 0 && process.env.VERBOSE) console.log(out);
  return { status: r.status, out, stdout: r.stdout ?? "" };
}

function mkTmp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

function write(root, rel, text) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** Every string leaf of an exports map, with its condition path. */
function exportTargets(exportsMap) {
  const out = [];
  const walk = (key, node) => {
    if (typeof node === "string") out.push({ key, target: node });
    else if (node && typeof node === "object") {
      for (const [k, v] of Object.entries(node)) walk(`${key} ${k}`, v);
    }
  };
  for (const [k, v] of Object.entries(exportsMap)) walk(k, v);
  return out;
}

// ---------------------------------------------------------------------------------------------
// The temporary app: dependencies at its root, the documents' apps in apps/, the entry-point checks
// in entrypoints/, the example in a folder of its own (all resolve packages from the root's
// node_modules, but the example, which installs its own).

const ROOT_PACKAGE_JSON = JSON.stringify(
  { name: "workpool-package-test-app", private: true, type: "module" },
  null,
  2,
);

/** What no document shows: the settings of the one tsc run over every app, and the type-level
 * checks of the package's other entry points. */
const PACKAGE_CHECKS = {
  "tsconfig.json": JSON.stringify(
    {
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023", "DOM"],
        module: "ESNext",
        moduleResolution: "Bundler",
        strict: true,
        skipLibCheck: false,
        isolatedModules: true,
        noEmit: true,
        jsx: "react-jsx",
        types: ["node"],
      },
      include: ["entrypoints", "apps"],
    },
    null,
    2,
  ),

  // The package's entry points under Node's own resolution (what a non-bundler TS setup sees).
  "tsconfig.nodenext.json": JSON.stringify(
    {
      extends: "./tsconfig.json",
      // Declaration files were checked by the first pass; this one is about resolution only.
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", skipLibCheck: true },
      include: ["entrypoints"],
    },
    null,
    2,
  ),

  // Type-level checks of the other entry points (never run).
  "entrypoints/entrypoints.ts": `import type { ComponentApi } from "convex-workpool/_generated/component.js";
import type { WorkpoolComponent } from "convex-workpool";
import workpoolConfig from "convex-workpool/convex.config";
import workpoolConfigJs from "convex-workpool/convex.config.js";
import workpoolTest, {
  loadModules,
  register,
  runPool,
  type RegisterOptions,
  type RunPoolOptions,
} from "convex-workpool/test";

export const sameConfig: typeof workpoolConfigJs = workpoolConfig;
export const component: ComponentApi = null as unknown as WorkpoolComponent;
export const registerFn: typeof register = workpoolTest.register;
export const loadFn: typeof loadModules = workpoolTest.loadModules;
export const runFn: typeof runPool = workpoolTest.runPool;
export const steps: RunPoolOptions = { stepMs: 20 };
export const quiet: RegisterOptions = { logLevel: "WARN" };
export const hasSchema: object = workpoolTest.schema;
export const hasModules: Record<string, () => Promise<unknown>> = workpoolTest.modules;
`,

  // convex-workpool/react: the dashboard takes what pool.adminApi exports, as an app's api names it.
  "entrypoints/react.tsx": `import type { FilterApi, FunctionReference, ApiFromModules } from "convex/server";
import { Workpool, type WorkpoolComponent } from "convex-workpool";
import {
  DashboardView,
  WorkpoolDashboard,
  useWorkpoolDashboard,
  type DashboardViewProps,
  type WorkpoolAdminApi,
} from "convex-workpool/react";

const pool = new Workpool(null as unknown as WorkpoolComponent);
const admin = pool.adminApi({ authorize: async (ctx) => (await ctx.auth.getUserIdentity()) !== null });
type Api = FilterApi<ApiFromModules<{ workpoolAdmin: typeof admin }>, FunctionReference<any, "public">>;
declare const api: Api;

export const refs: WorkpoolAdminApi = api.workpoolAdmin;
export const page = <WorkpoolDashboard api={api.workpoolAdmin} title="emails" />;
export const hook: typeof useWorkpoolDashboard = useWorkpoolDashboard;
export const view = (props: DashboardViewProps) => <DashboardView {...props} />;
`,
};

/** Documents whose apps must have tests that run (a guide that teaches testing, say). */
const DOCS_WITH_TESTS = ["docs/testing.md"];

/** The documents whose code blocks make apps: README.md and docs/*.md. */
function readDocs() {
  const docs = ["README.md"];
  for (const f of fs.readdirSync(path.join(repo, "docs")).sort()) {
    if (f.endsWith(".md")) docs.push(`docs/${f}`);
  }
  return Object.fromEntries(docs.map((d) => [d, fs.readFileSync(path.join(repo, d), "utf8")]));
}

/** A document's app folder: `apps/readme`, `apps/docs-testing`, ... */
function appDirName(doc) {
  return doc === "README.md" ? "readme" : doc.replace(/\.md$/, "").replaceAll("/", "-");
}

/** Whether `version` (x.y.z) satisfies `range`; only caret ranges (^x.y.z), as npm writes them. */
function satisfiesCaret(version, range) {
  const m = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range);
  if (!m) return false;
  const want = m.slice(1).map(Number);
  const have = version.split(/[.-]/).slice(0, 3).map(Number);
  const cmp = have[0] - want[0] || have[1] - want[1] || have[2] - want[2];
  if (cmp < 0) return false;
  if (want[0] > 0) return have[0] === want[0];
  if (want[1] > 0) return have[0] === 0 && have[1] === want[1];
  return have[0] === 0 && have[1] === 0 && have[2] === want[2];
}

/** A document's package.json installs what the package test installed: the packed tarball, and
 * versions of the tools that the repo's satisfy. */
function checkAppPackageJson(doc, text, tarballName, installedVersions) {
  const pkg = JSON.parse(text);
  const deps = { ...pkg.dependencies, ...pkg.devDependencies };
  for (const [name, range] of Object.entries(deps)) {
    if (name === "convex-workpool") {
      if (!range.startsWith("file:") || path.basename(range) !== tarballName) {
        fail(
          `${doc}: package.json installs convex-workpool from ${range}, not the ${tarballName} npm pack writes`,
        );
      }
      continue;
    }
    const version = installedVersions[name];
    if (version === undefined)
      fail(`${doc}: package.json needs ${name}, which the package test does not install`);
    if (!satisfiesCaret(version, range))
      fail(`${doc}: package.json wants ${name}@${range}; the repo's is ${version}`);
  }
}

/** Copies example/ (without the in-repo tsconfig overlay or an install) to `target`. */
function copyExample(target) {
  fs.cpSync(path.join(repo, "example"), target, {
    recursive: true,
    filter: (src) => !/(^|\/)(node_modules|package-lock\.json|tsconfig\.repo\.json)$/.test(src),
  });
}

/** `npm install <args>` in `cwd` from npm's cache, or from the registry if the cache lacks some. */
function npmInstall(cwd, args) {
  const installArgs = ["install", "--no-audit", "--no-fund", ...args];
  const inst = run("npm", [...installArgs, "--offline"], cwd, { allowFail: true, quiet: true });
  if (inst.status !== 0) {
    log("offline install failed; installing from the registry (--prefer-offline)");
    run("npm", [...installArgs, "--prefer-offline"], cwd);
  }
}

/** The "Tests N passed" line of a vitest run's output; fails unless every test passed. */
function passedSummary(out, where) {
  const passedLine = out.split("\n").find((l) => /Tests\s+\d+ passed/.test(l));
  if (!passedLine) fail(`vitest in ${where} has no passing summary:\n${out}`);
  if (/\d+ (failed|skipped)/.test(passedLine)) fail(`vitest in ${where}: ${passedLine}`);
  return passedLine.trim();
}

/** Runs vitest in `dir` with the app's binary; returns its "Tests N passed" line. */
function vitestIn(dir, app) {
  return passedSummary(
    run(path.join(app, "node_modules", ".bin", "vitest"), ["run"], dir).out,
    dir,
  );
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8"));

  log("npm run build");
  run("npm", ["run", "build"], repo);

  const packDir = mkTmp("workpool-pack-");
  log("npm pack");
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", packDir], repo, {
      quiet: true,
    }).stdout,
  )[0];
  const tarball = path.join(packDir, packed.filename);
  const packedFiles = new Set(packed.files.map((f) => f.path));
  log(`packed ${packed.filename}: ${packedFiles.size} files, ${packed.size} bytes`);

  // The packed file list: what `./test` needs is there, tests are not.
  const testFiles = [...packedFiles].filter((f) => /\.test\.|(^|\/)test\/.*\.test/.test(f));
  if (testFiles.length) fail(`tests are packed: ${testFiles.join(", ")}`);
  for (const need of [
    "dist/component/convex.config.js",
    "dist/component/_generated/component.d.ts",
  ]) {
    if (!packedFiles.has(need)) fail(`not packed: ${need}`);
  }
  const srcComponent = [...packedFiles].filter((f) => f.startsWith("src/component/"));
  const distComponent = [...packedFiles].filter(
    (f) => f.startsWith("dist/component/") && f.endsWith(".js"),
  );
  for (const f of srcComponent) {
    if (!f.endsWith(".ts")) continue;
    const js = f.replace(/^src\//, "dist/").replace(/\.ts$/, ".js");
    if (!packedFiles.has(js)) fail(`${f} is packed but its build ${js} is not`);
  }
  if (distComponent.length < 3)
    fail(`too few component modules packed: ${distComponent.join(", ")}`);

  // A fresh app, with the tarball and the repo's versions of the tools.
  const app = mkTmp("workpool-app-");
  write(app, "package.json", ROOT_PACKAGE_JSON);
  for (const [rel, text] of Object.entries(PACKAGE_CHECKS)) write(app, rel, text);
  const deps = DEPS.map((name) => {
    const v = END === "repo" ? undefined : ENDS[END][name];
    return `${name}@${
      v ??
      JSON.parse(fs.readFileSync(path.join(repo, "node_modules", name, "package.json"), "utf8"))
        .version
    }`;
  });
  const installedVersions = Object.fromEntries(
    deps.map((d) => d.match(/^(@?[^@]+)@(.+)$/).slice(1)),
  );
  let apps;
  try {
    apps = docApps(readDocs(), installedVersions);
  } catch (e) {
    if (e instanceof DocError) fail(e.message);
    throw e;
  }
  for (const [doc, { files }] of Object.entries(apps)) {
    for (const [rel, text] of Object.entries(files))
      write(path.join(app, "apps", appDirName(doc)), rel, text);
  }
  for (const doc of DOCS_WITH_TESTS) if (!(doc in apps)) fail(`${doc} shows no app to test`);
  for (const [doc, { skipped }] of Object.entries(apps)) {
    if (skipped.length > 0)
      log(`${doc}: left out at this end (they need newer packages): ${skipped.join(", ")}`);
  }
  const blockCount = Object.values(apps).reduce((n, a) => n + a.blocks, 0);
  log(
    `docs: ${blockCount} TypeScript blocks in ${Object.keys(apps).length} apps (${Object.entries(
      apps,
    )
      .map(([doc, a]) => `${doc} ${a.blocks}`)
      .join(", ")})`,
  );
  // example/README.md's "Deploying it for real": the tarball beside a copy of example/.
  const exampleParent = mkTmp("workpool-example-");
  fs.copyFileSync(tarball, path.join(exampleParent, packed.filename));
  const exampleApp = path.join(exampleParent, "workpool-example");
  copyExample(exampleApp);
  const exampleDep = JSON.parse(fs.readFileSync(path.join(exampleApp, "package.json"), "utf8"))
    .dependencies?.["convex-workpool"];
  if (exampleDep !== `file:../${packed.filename}`) {
    fail(
      `example/package.json installs convex-workpool from ${exampleDep}, not file:../${packed.filename}`,
    );
  }
  log(`npm install ${deps.join(" ")} + tarball`);
  npmInstall(app, ["--no-save", tarball, ...deps]);
  const installed = path.join(app, "node_modules", "convex-workpool");
  if (!fs.existsSync(path.join(installed, "package.json"))) fail("convex-workpool not installed");

  // Every target of the exports map exists in the installed package.
  const installedPkg = JSON.parse(fs.readFileSync(path.join(installed, "package.json"), "utf8"));
  for (const { key, target } of exportTargets(installedPkg.exports ?? {})) {
    if (!fs.existsSync(path.join(installed, target))) {
      fail(`exports "${key}" -> ${target}: missing from the installed package`);
    }
  }
  if (JSON.stringify(installedPkg.exports) !== JSON.stringify(pkg.exports)) {
    fail("installed package.json exports differ from the repo's");
  }

  // Node resolves the runtime entry points (ESM, default condition) and loads the JS ones.
  log("node import of the entry points");
  run(
    "node",
    [
      "--input-type=module",
      "-e",
      `const m = await import("convex-workpool");
       if (typeof m.Workpool !== "function") throw new Error("no Workpool export");
       if (typeof m.NonRetryableError !== "function") throw new Error("no NonRetryableError export");
       const react = await import("convex-workpool/react");
       if (typeof react.WorkpoolDashboard !== "function") throw new Error("no WorkpoolDashboard export");
       for (const spec of ["convex-workpool/convex.config.js", "convex-workpool/convex.config"]) {
         const c = (await import(spec)).default;
         if (!c || typeof c.export !== "function") throw new Error(spec + ": not a component definition");
       }`,
    ],
    app,
  );

  // Convex's bundler accepts the installed component directory: entry points found and bundled.
  log("convex bundler on the installed component directory");
  const componentDir = path.dirname(
    createRequire(path.join(app, "package.json")).resolve("convex-workpool/convex.config.js"),
  );
  await checkConvexBundler(app, componentDir, distComponent);

  const tsc = path.join(app, "node_modules", ".bin", "tsc");
  log("docs' apps: tsc --noEmit (strict, moduleResolution Bundler)");
  run(tsc, ["--noEmit", "-p", "tsconfig.json"], app);
  log("the entry points under moduleResolution NodeNext");
  run(tsc, ["--noEmit", "-p", "tsconfig.nodenext.json"], app);
  for (const [doc, { files }] of Object.entries(apps)) {
    const dir = path.join(app, "apps", appDirName(doc));
    if ("package.json" in files && END === "repo") {
      checkAppPackageJson(doc, files["package.json"], packed.filename, installedVersions);
    }
    if ("tsconfig.json" in files) {
      log(`${doc}: tsc --noEmit with the app's own tsconfig.json`);
      run(tsc, ["--noEmit", "-p", "tsconfig.json"], dir);
    }
    const tests = Object.keys(files).filter((f) => /\.test\.tsx?$/.test(f));
    if (tests.length === 0) {
      if (DOCS_WITH_TESTS.includes(doc)) fail(`${doc} shows no test file`);
      continue;
    }
    if (!("vitest.config.ts" in files))
      fail(`${doc}: tests (${tests.join(", ")}) but no vitest.config.ts`);
    log(`${doc}: vitest run: ${vitestIn(dir, app)}`);
  }
  log("example: npm install (its package.json: convex, and the tarball)");
  npmInstall(exampleApp, []);
  if (END !== "repo") {
    const exampleDeps = deps.filter((d) =>
      /^(convex|convex-test|vitest|typescript|@types\/node)@/.test(d),
    );
    log(`example: at this end, ${exampleDeps.join(" ")}`);
    npmInstall(exampleApp, ["--no-save", ...exampleDeps]);
  }
  log("example: npm run typecheck");
  run("npm", ["run", "typecheck"], exampleApp);
  log(`example: npm test: ${passedSummary(run("npm", ["test"], exampleApp).out, "example")}`);
}

/**
 * What `npx convex dev` does with the component directory, offline: convex's entry-point rules
 * (convex/dist/esm/bundler/index.js `entryPoints`; its module can't be imported directly, as it
 * needs the CLI's bundled deps) and its esbuild options (bundler/debugBundle.js `innerEsbuild`),
 * run with the esbuild that the installed convex depends on. Also checks convex.config.js is a
 * component definition named "workpool" and the schema bundles.
 */
async function checkConvexBundler(app, componentDir, distComponent) {
  if (!fs.existsSync(path.join(componentDir, "convex.config.js"))) {
    fail(`no convex.config.js in ${componentDir}`);
  }
  if (fs.existsSync(path.join(componentDir, "convex.config.ts"))) {
    fail(`${componentDir} has a convex.config.ts: convex would compile the TS, not our JS`);
  }
  const EXT = [".js", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".jsx"];
  const entries = [];
  const walk = (dir) => {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!fs.existsSync(path.join(full, "convex.config.ts"))) walk(full);
        continue;
      }
      const rel = path.relative(componentDir, full);
      const base = e.name;
      if (rel.startsWith("_deps" + path.sep)) fail(`${rel}: _deps is reserved by convex`);
      if (!EXT.some((x) => rel.endsWith(x))) continue;
      if (rel.startsWith("_generated" + path.sep)) continue;
      if (base.startsWith(".") || base.startsWith("#")) continue;
      if (base === "schema.ts" || base === "schema.js") continue;
      if ((base.match(/\./g) || []).length > 1) continue;
      if (rel.includes(" ")) continue;
      if (base.endsWith(".ts") || base.endsWith(".tsx")) {
        fail(`${rel}: a TypeScript module in the shipped component directory`);
      }
      entries.push(full);
    }
  };
  walk(componentDir);
  const rel = entries.map((e) => path.relative(componentDir, e)).sort();
  const expected = distComponent
    .map((f) => path.relative("dist/component", f))
    .filter((f) => !f.startsWith("_generated/") && f !== "schema.js" && f.split(".").length === 2)
    .sort();
  if (JSON.stringify(rel) !== JSON.stringify(expected)) {
    fail(
      `convex entry points ${JSON.stringify(rel)} != packed modules ${JSON.stringify(expected)}`,
    );
  }
  for (const need of ["_generated/api.js", "_generated/server.js", "schema.js"]) {
    if (!fs.existsSync(path.join(componentDir, need))) fail(`component directory lacks ${need}`);
  }

  const requireFromConvex = createRequire(path.join(app, "node_modules", "convex", "package.json"));
  const esbuild = requireFromConvex("esbuild");
  const build = (entryPoints, splitting) =>
    esbuild.build({
      entryPoints,
      absWorkingDir: app,
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "esnext",
      jsx: "automatic",
      outdir: "out",
      outbase: componentDir,
      conditions: ["convex", "module"],
      write: false,
      splitting,
      chunkNames: "_deps/[hash]",
      treeShaking: true,
      minifySyntax: true,
      minifyIdentifiers: true,
      keepNames: true,
      define: { "process.env.NODE_ENV": '"production"' },
      metafile: true,
      logLevel: "silent",
    });
  let result;
  try {
    result = await build(entries, true);
    await build([path.join(componentDir, "schema.js")], false);
    await build([path.join(componentDir, "convex.config.js")], false);
  } catch (e) {
    fail(`esbuild (convex's options) failed on the component directory:\n${e.message}`);
  }
  const outModules = result.outputFiles
    .map((f) => path.relative(path.join(app, "out"), f.path))
    .filter((f) => !f.startsWith("_deps"));
  if (outModules.length !== entries.length) {
    fail(`esbuild produced ${outModules.length} modules for ${entries.length} entry points`);
  }
  // The definition evaluates to a component named "workpool" (what `app.use` needs).
  const def = (await import(pathToFileURL(path.join(componentDir, "convex.config.js")).href))
    .default;
  const analysis = typeof def?.export === "function" ? def.export() : undefined;
  if (analysis?.name !== "workpool") {
    fail(`convex.config.js: not a component definition named "workpool" (${analysis?.name})`);
  }
  log(`convex bundler: ${entries.length} entry points bundled`);
}

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
    console.log(`FAIL package-test: interrupted by ${signal} (${elapsed()})`);
    process.exit(130);
  });
}

let code = 0;
try {
  await main();
  console.log(
    `PASS package-test: built, packed, installed and used convex-workpool (${elapsed()})`,
  );
} catch (e) {
  code = 1;
  console.error(e instanceof Failure ? e.message : e);
  console.log(`FAIL package-test (${elapsed()})`);
} finally {
  if (process.env.KEEP_TMP) console.log(`kept: ${tmpDirs.join(" ")}`);
  else for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
}
process.exit(code);
