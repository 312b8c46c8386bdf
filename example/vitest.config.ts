// Vitest settings for running this app's tests on its own (`npm test` in example/): convex-test
// runs the app's functions in the edge runtime, and is inlined so its `import.meta.glob` module maps
// load through vite. Inside the repository, the root vitest.config.ts runs these tests instead.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
  },
});
