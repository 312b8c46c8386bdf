// What the slow tier's drop-in checks share (peer-client-test.mjs, workflow-test.mjs): temporary
// folders removed at exit, commands run with their output kept for a failure, this package built
// and packed, another package's published tarball fetched with `npm pack`, installs from npm's cache
// first, and vitest's JSON report read as test names and states. Plain node; owns no test.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** A Convex app's usual compiler options (strict, Bundler resolution, vitest's types), for the
 * temporary apps' own code. */
export const APP_COMPILER_OPTIONS = {
  target: "ES2022",
  lib: ["ES2023", "DOM"],
  module: "ESNext",
  moduleResolution: "Bundler",
  strict: true,
  skipLibCheck: true,
  isolatedModules: true,
  noEmit: true,
  types: ["node", "vite/client"],
};

export class Failure extends Error {}

export function fail(message) {
  throw new Failure(message);
}

/** A logger that prefixes each line with the script's name and the seconds since it started. */
export function logger(name) {
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  return { log: (message) => console.log(`[${name} ${elapsed()}] ${message}`), elapsed };
}

/** Runs a command; returns { status, out, stdout }. Throws a Failure (with its output) unless
 * `allowFail`. */
export function run(cmd, args, cwd, { allowFail = false, env = {} } = {}) {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, CI: "1", FORCE_COLOR: "0", NO_COLOR: "1", ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.error) fail(`${cmd} ${args.join(" ")}: ${r.error.message}`);
  if (r.status !== 0 && !allowFail) {
    fail(`\`${cmd} ${args.join(" ")}\` in ${cwd} exited ${r.status}:\n${out}`);
  }
  return { status: r.status, out, stdout: r.stdout ?? "" };
}

const tmpDirs = [];

export function mkTmp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

export function write(root, rel, text) {
  const file = path.join(root, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

/** The version of a package installed in this repo's node_modules. */
export function repoVersion(name) {
  const file = path.join(repo, "node_modules", name, "package.json");
  return JSON.parse(fs.readFileSync(file, "utf8")).version;
}

/** Whether version `a` (x.y.z) is at least `b`. */
export function atLeast(a, b) {
  const pa = a.split(/[.-]/).map(Number);
  const pb = b.split(/[.-]/).map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] > pb[i];
  return true;
}

/** Builds and packs this package into a temporary folder; returns the tarball's path. */
export function packOurs(log) {
  log("npm run build");
  run("npm", ["run", "build"], repo);
  const dir = mkTmp("workpool-pack-");
  const packed = JSON.parse(
    run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], repo).stdout,
  )[0];
  log(`packed ${packed.filename}`);
  return path.join(dir, packed.filename);
}

/** Fetches a published package's tarball (`npm pack name@version`) and unpacks it; returns the
 * folder that holds its files (`package/`) and the tarball's path. */
export function fetchPublished(spec, log) {
  const dir = mkTmp("workpool-published-");
  log(`npm pack ${spec}`);
  const packed = JSON.parse(run("npm", ["pack", "--json", spec], dir).stdout)[0];
  const tarball = path.join(dir, packed.filename);
  run("tar", ["xzf", tarball, "-C", dir], dir);
  return { root: path.join(dir, "package"), tarball };
}

/** `npm install <args>` in `cwd` from npm's cache, or from the registry if the cache lacks some. */
export function npmInstall(cwd, args, log) {
  const installArgs = ["install", "--no-audit", "--no-fund", ...args];
  const offline = run("npm", [...installArgs, "--offline"], cwd, { allowFail: true });
  if (offline.status !== 0) {
    log("offline install failed; installing from the registry (--prefer-offline)");
    run("npm", [...installArgs, "--prefer-offline"], cwd);
  }
}

/**
 * Runs vitest in `dir` (its own binary under `app`) with a JSON report; returns every test as
 * `{ name, state, message }` (`name`: its file, describe blocks and title joined by " > "), and
 * the run's output.
 */
export function vitestResults(dir, app, args = []) {
  const report = path.join(dir, "vitest-report.json");
  const bin = path.join(app, "node_modules", ".bin", "vitest");
  const r = run(bin, ["run", "--reporter=json", `--outputFile=${report}`, ...args], dir, {
    allowFail: true,
  });
  if (!fs.existsSync(report)) fail(`vitest in ${dir} wrote no report:\n${r.out}`);
  const json = JSON.parse(fs.readFileSync(report, "utf8"));
  const tests = [];
  for (const file of json.testResults) {
    const rel = path.relative(dir, file.name);
    if (file.assertionResults.length === 0) {
      tests.push({ name: rel, state: "failed", message: file.message || "no tests ran" });
    }
    for (const a of file.assertionResults) {
      tests.push({
        name: [rel, ...a.ancestorTitles, a.title].join(" > "),
        state: a.status,
        message: (a.failureMessages ?? []).join("\n").split("\n").slice(0, 6).join("\n"),
      });
    }
  }
  return { tests, out: r.out };
}

/** Removes the temporary folders (unless KEEP_TMP=1, which lists them). */
export function cleanUp() {
  if (process.env.KEEP_TMP) console.log(`kept: ${tmpDirs.join(" ")}`);
  else for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
}

/** Runs `main`, prints one PASS/FAIL line, cleans up and exits with its status. */
export async function runScript(name, summary, main, elapsed) {
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => {
      cleanUp();
      console.log(`FAIL ${name}: interrupted by ${signal} (${elapsed()})`);
      process.exit(130);
    });
  }
  let code = 0;
  try {
    await main();
    console.log(`PASS ${name}: ${summary} (${elapsed()})`);
  } catch (e) {
    code = 1;
    console.error(e instanceof Failure ? e.message : e);
    console.log(`FAIL ${name} (${elapsed()})`);
  } finally {
    cleanUp();
  }
  process.exit(code);
}
