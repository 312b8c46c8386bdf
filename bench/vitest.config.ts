// Vitest config of `npm run bench` only (the root config includes bench/**/*.test.ts, never the
// *.bench-run.ts scenario files). convex-test and the peer pool are inlined so that their
// `import.meta.glob` module maps and convex-test's classes go through vite (one module instance,
// which bench/instrument.ts patches).
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    environment: "edge-runtime",
    server: {
      deps: { inline: ["convex-test", "@convex-dev/workpool", "@convex-dev/batch-worker"] },
    },
    include: ["bench/*.bench-run.ts"],
    reporters: ["dot"],
    testTimeout: 60 * 60_000,
    hookTimeout: 60_000,
    fileParallelism: false,
  },
});
