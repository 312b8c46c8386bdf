/**
 * Inside this repository the package's own entry points resolve to its source, so the example app
 * (example/convex) imports `convex-workpool` exactly as an installed app does. Used by the vitest
 * configs (tests, demo); example/tsconfig.repo.json maps the same names for the type checker.
 */
import { fileURLToPath } from "node:url";

const source = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url));

export const packageAliases = [
  { find: /^convex-workpool$/, replacement: source("client/index.ts") },
  {
    find: /^convex-workpool\/convex\.config(\.js)?$/,
    replacement: source("component/convex.config.ts"),
  },
  { find: /^convex-workpool\/test$/, replacement: source("test.ts") },
];
