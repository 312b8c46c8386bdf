import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "edge-runtime",
    server: { deps: { inline: ["convex-test"] } },
    include: [
      "src/**/*.test.ts",
      "test/**/*.test.ts",
      "example/**/*.test.ts",
      "bench/**/*.test.ts",
    ],
    testTimeout: 60_000,
  },
});
