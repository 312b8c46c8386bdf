import { configDefaults, defineConfig } from "vitest/config";
import { packageAliases } from "./vitest.shared.js";

export default defineConfig({
  resolve: { alias: packageAliases },
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
    include: [
      "src/**/*.test.ts",
      "src/**/*.test.tsx",
      "test/**/*.test.ts",
      "example/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    // @convex-dev/workflow's tour of its steps on this pool runs in the slow tier's temporary app,
    // where workflow is installed (scripts/workflow-test.mjs); it is no dependency of this repo.
    exclude: [...configDefaults.exclude, "test/workflow/**"],
    // A faster table scan for the full-scale runs (test/fastTables.setup.ts); fails any test
    // whose loop:main passes exceed the per-pass budget (test/passBudget.ts).
    setupFiles: ["test/fastTables.setup.ts", "test/cleanup.setup.ts", "test/passBudget.setup.ts"],
    testTimeout: 60_000,
    // Vitest runs one file per core less one: on a 2-core machine (ours, CI) that is one at a time.
    // The tests are single-threaded and spend much of their time awaiting, so use both cores.
    maxWorkers: 2,
    // A young generation of 128 MiB a semi-space (V8's default is 16): the tests allocate short-
    // lived values at a high rate (every syscall's JSON), and fewer scavenges saved 9 % of a long
    // chaos program's time (seed 2026120201 programs 576 and 118: 22 s to 20 s each). Memory is
    // not short here (24 GiB, two workers).
    execArgv: ["--max-semi-space-size=128"],
  },
});
