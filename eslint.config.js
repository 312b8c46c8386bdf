// ESLint flat config: typescript-eslint's recommended rules everywhere, and the Convex plugin's
// recommended rules on Convex function code. The plugin scopes its rules to `**/convex/**`; our
// component's functions live in src/component (and the test app's in test/app), so they get the
// same rules explicitly.
import js from "@eslint/js";
import convexPlugin from "@convex-dev/eslint-plugin";
import { defineConfig, globalIgnores } from "eslint/config";
import tseslint from "typescript-eslint";

const [convexRecommended] = convexPlugin.configs.recommended;

export default defineConfig([
  globalIgnores([
    "**/node_modules/",
    "dist/",
    "**/_generated/**",
    "demo-out/",
    "docs/",
    "coverage/",
    "bench/out/",
  ]),
  js.configs.recommended,
  tseslint.configs.recommended,
  ...convexPlugin.configs.recommended,
  {
    ...convexRecommended,
    files: ["src/component/**/*.ts", "test/app/**/*.ts"],
  },
  {
    // Tests drive convex-test and component internals through loosely typed handles; the public
    // client's validator generics are `Validator<any, ...>` by design (they mirror the peer's types).
    files: [
      "**/*.test.ts",
      "test/**/*.ts",
      "bench/**/*.ts",
      "demo/**/*.ts",
      "src/component/model/validators.ts",
    ],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
  {
    files: ["**/*.{js,mjs,cjs}"],
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
      },
    },
  },
]);
