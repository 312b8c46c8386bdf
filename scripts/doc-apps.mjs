// The apps the documentation's code blocks make, for the package test (package-test.mjs, which
// type-checks them and runs their tests against the packed package) and for test/docs.test.ts
// (which checks the markers without building anything). Pure: reads nothing, writes nothing.
//
// How a document says what its blocks are:
//   - `<!-- file: convex/emails.ts -->` right before a fenced block: the block is that file of the
//     document's app (a new file, or one that replaces the base app's file of that path);
//   - `<!-- file: convex/emails.ts (continued) -->`: the block is appended to that file (the
//     document's own, or its base app's);
//   - `<!-- file: convex/app.test.ts (needs convex-test 0.0.70) -->`: a file that needs at least
//     that version of a package (a newer API, such as convex-test's `defineTestApp`); the package
//     test's run at the oldest versions we support leaves it out (and its continuations), and says
//     so in its log;
//   - `<!-- app: builds on docs/getting-started.md -->` anywhere: the app starts from that
//     document's app (its files, with its own base's), and this document's blocks are laid over it.
// Every ts/tsx block needs a file marker; a block in another language (json, sh, text) is written
// only when it has one. What no document shows, an app gets as `npx convex dev` would write it:
// `convex/_generated/api.ts` lists the app's modules and the components its convex.config.ts
// installs, and `server.ts` / `dataModel.ts` are the generic ones docs/testing.md shows.

/** The document that shows codegen's generic `_generated/server.ts` and `dataModel.ts`. */
export const CODEGEN_DOC = "docs/testing.md";
export const GENERIC_GENERATED = ["convex/_generated/server.ts", "convex/_generated/dataModel.ts"];

const TS_LANGS = new Set(["ts", "typescript", "tsx"]);

export class DocError extends Error {}

/**
 * The fenced blocks of a markdown text, in order: `{ lang, body, line, marker }`, where `marker`
 * is the `<!-- file: ... -->` right before the block (`{ file, continued }`) or undefined.
 */
export function fencedBlocks(text) {
  const blocks = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = fence.exec(text)) !== null) {
    const before = text.slice(0, m.index).trimEnd();
    const marker =
      /<!-- file: (\S+)( \(continued\))?(?: \(needs (\S+) (\d+\.\d+\.\d+)\))? -->$/.exec(before);
    blocks.push({
      lang: m[1],
      body: m[2],
      line: text.slice(0, m.index).split("\n").length,
      marker: marker
        ? {
            file: marker[1],
            continued: Boolean(marker[2]),
            needs: marker[3] ? { name: marker[3], version: marker[4] } : undefined,
          }
        : undefined,
    });
  }
  return blocks;
}

/**
 * One document's own part of its app: `{ base, files, blocks, skipped }` — the document its app
 * builds on (or undefined), its files as `{ path: { text, continued } }` in the order they appear
 * (a continued entry appends to the base's file), how many ts/tsx blocks it has, and the files
 * left out because they need a newer package than `versions` (name → installed version) has.
 */
export function docPart(doc, text, versions = {}) {
  const baseMatch = /<!-- app: builds on (\S+) -->/.exec(text);
  const files = {};
  const skipped = [];
  let blocks = 0;
  for (const block of fencedBlocks(text)) {
    const isTs = TS_LANGS.has(block.lang);
    if (isTs) blocks++;
    if (!block.marker) {
      if (isTs) {
        throw new DocError(
          `${doc}:${block.line}: a TypeScript block without a <!-- file: --> marker`,
        );
      }
      continue;
    }
    const { file, continued, needs } = block.marker;
    if (needs && continued)
      throw new DocError(`${doc}:${block.line}: "needs" goes on a file's first block`);
    const installed = needs && versions[needs.name];
    if (skipped.includes(file) || (installed && olderThan(installed, needs.version))) {
      if (!skipped.includes(file)) skipped.push(file);
      continue;
    }
    if (continued) {
      if (file in files) files[file].text += `\n${block.body}`;
      else files[file] = { text: block.body, continued: true };
    } else {
      if (file in files) throw new DocError(`${doc}:${block.line}: ${file} started twice`);
      files[file] = { text: block.body, continued: false };
    }
  }
  return { base: baseMatch?.[1], files, blocks, skipped };
}

/** Whether version `a` (x.y.z) is below `b`. */
function olderThan(a, b) {
  const [x, y] = [a, b].map((v) => v.split(/[.-]/).slice(0, 3).map(Number));
  return x[0] - y[0] < 0 || (x[0] === y[0] && (x[1] - y[1] < 0 || (x[1] === y[1] && x[2] < y[2])));
}

/**
 * Every document's app, whole: `{ [doc]: { files: { path: text }, blocks } }` for each document
 * with at least one file block, with `skipped`: the files left out as needing newer packages than
 * `versions` (name → installed version; all are kept without it). `texts` maps each document's
 * path to its text.
 */
export function docApps(texts, versions = {}) {
  const parts = {};
  for (const [doc, text] of Object.entries(texts)) parts[doc] = docPart(doc, text, versions);
  const resolved = {};
  const resolve = (doc, seen) => {
    if (resolved[doc]) return resolved[doc];
    if (seen.includes(doc))
      throw new DocError(`apps build on each other: ${[...seen, doc].join(" → ")}`);
    const part = parts[doc];
    if (!part)
      throw new DocError(`${seen.at(-1)} builds on ${doc}, which is not a checked document`);
    const files = part.base ? { ...resolve(part.base, [...seen, doc]).files } : {};
    for (const [file, { text, continued }] of Object.entries(part.files)) {
      if (continued) {
        if (!(file in files))
          throw new DocError(`${doc}: continues ${file}, which no block started`);
        files[file] += `\n${text}`;
      } else {
        files[file] = text;
      }
    }
    resolved[doc] = { files, blocks: part.blocks, skipped: part.skipped };
    return resolved[doc];
  };
  for (const doc of Object.keys(parts)) {
    if (Object.keys(parts[doc].files).length > 0) resolve(doc, []);
  }
  const generic = resolved[CODEGEN_DOC]?.files ?? {};
  for (const file of GENERIC_GENERATED) {
    if (!(file in generic)) throw new DocError(`${CODEGEN_DOC} shows no ${file}`);
  }
  for (const [doc, app] of Object.entries(resolved)) {
    if (!Object.keys(app.files).some((f) => f.startsWith("convex/"))) continue;
    for (const file of GENERIC_GENERATED) app.files[file] ??= generic[file];
    app.files["convex/_generated/api.ts"] ??= generatedApi(doc, app.files);
  }
  return resolved;
}

/** Convex's rule for a function module: a .ts file under convex/, outside _generated, whose name
 * has one dot (so not convex.config.ts nor a test), other than the schema. */
function functionModules(files) {
  return Object.keys(files)
    .filter((f) => /^convex\/.+\.tsx?$/.test(f) && !f.startsWith("convex/_generated/"))
    .map((f) => f.slice("convex/".length).replace(/\.tsx?$/, ""))
    .filter((m) => !m.split("/").at(-1).includes(".") && m !== "schema")
    .sort();
}

/** The components a convex.config.ts installs, `[name, package]`: `app.use(x, { name: "..." })`
 * (or `app.use(x)`, named "workpool") where `x` is imported from `<package>/convex.config(.js)`. */
function installedComponents(doc, config) {
  if (config === undefined) throw new DocError(`${doc}: its app has no convex/convex.config.ts`);
  const packages = {};
  for (const m of config.matchAll(/import (\w+) from "([^"]+)\/convex\.config(?:\.js)?";/g)) {
    packages[m[1]] = m[2];
  }
  const components = [];
  for (const m of config.matchAll(
    /app\.use\(\s*(\w+)\s*(?:,\s*\{\s*name:\s*"([^"]+)"\s*\})?\s*\)/g,
  )) {
    const pkg = packages[m[1]];
    if (pkg === undefined)
      throw new DocError(
        `${doc}: convex.config.ts uses ${m[1]}, imported from no package's convex.config`,
      );
    components.push([m[2] ?? "workpool", pkg]);
  }
  if (components.length === 0)
    throw new DocError(`${doc}: its convex.config.ts installs no component`);
  return components;
}

/** `convex/_generated/api.ts` in the shape `npx convex dev` writes for these modules and pools. */
export function generatedApi(doc, files) {
  const modules = functionModules(files);
  const alias = (m) => m.replaceAll("/", "_");
  const components = installedComponents(doc, files["convex/convex.config.ts"]);
  return [
    "/* eslint-disable */",
    "// Written by the package test, as `npx convex dev` would.",
    ...modules.map((m) => `import type * as ${alias(m)} from "../${m}.js";`),
    "",
    'import type { ApiFromModules, FilterApi, FunctionReference } from "convex/server";',
    'import { anyApi, componentsGeneric } from "convex/server";',
    "",
    "const fullApi: ApiFromModules<{",
    ...modules.map((m) => `  ${JSON.stringify(m)}: typeof ${alias(m)};`),
    "}> = anyApi as any;",
    'export const api: FilterApi<typeof fullApi, FunctionReference<any, "public">> = anyApi as any;',
    "export const internal: FilterApi<",
    "  typeof fullApi,",
    '  FunctionReference<any, "internal">',
    "> = anyApi as any;",
    "export const components = componentsGeneric() as unknown as {",
    ...components.map(
      ([name, pkg]) =>
        `  ${name}: import("${pkg}/_generated/component.js").ComponentApi<${JSON.stringify(name)}>;`,
    ),
    "};",
    "",
  ].join("\n");
}
