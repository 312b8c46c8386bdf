// Vitest config of `npm run demo` only (the root config does not include demo files). A quiet
// reporter: the demo prints its own progress and report; this prints only errors.
import { fileURLToPath } from "node:url";
import type { Reporter } from "vitest/reporters";
import { defineConfig } from "vitest/config";
import { packageAliases } from "../vitest.shared.js";

const errorsOnly: Reporter = {
  onTestRunEnd(testModules, unhandledErrors) {
    const errors = [...unhandledErrors];
    for (const mod of testModules) {
      errors.push(...mod.errors());
      for (const test of mod.children.allTests()) errors.push(...(test.result().errors ?? []));
    }
    for (const error of errors) {
      process.stderr.write(`\ndemo failed: ${error.stack ?? error.message}\n`);
    }
  },
};

export default defineConfig({
  resolve: { alias: packageAliases },
  test: {
    root: fileURLToPath(new URL("..", import.meta.url)),
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
    include: ["demo/**/*.demo.ts"],
    reporters: [errorsOnly],
    testTimeout: 30 * 60_000,
  },
});
