// @vitest-environment node
// The documentation's own checks, fast enough for every `npm test` run: every relative link in
// README.md, docs/*.md and example/README.md leads to a file that exists, and every #anchor to a
// heading of its page (GitHub's heading ids); every repository path they quote as code exists; the
// README stays a front page that reaches every guide in one click; and the code blocks carry the
// markers the package test builds its apps from (scripts/doc-apps.mjs; the package test then
// type-checks those apps and runs their tests). Node environment: it reads files.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { docApps } from "../scripts/doc-apps.mjs";

const ROOT = path.resolve(import.meta.dirname, "..");
const read = (rel: string) => fs.readFileSync(path.join(ROOT, rel), "utf8");

const GUIDES = fs
  .readdirSync(path.join(ROOT, "docs"))
  .filter((f) => f.endsWith(".md"))
  .sort()
  .map((f) => `docs/${f}`);
const DOCS = ["README.md", ...GUIDES, "example/README.md"];

/** The README's size limit: a front page, read in two minutes; the rest lives in docs/. */
const README_MAX_LINES = 350;

/** A markdown text without its fenced code blocks (their lines blanked, so line numbers hold). */
function withoutFences(text: string): string {
  return text.replace(/^```[\s\S]*?^```$/gm, (block) => block.replace(/[^\n]/g, ""));
}

/** GitHub's id for a heading: lower case, markup and punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\\(.)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The ids of a page's headings, with GitHub's -1, -2 … for repeats. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const ids = new Set<string>();
  for (const m of withoutFences(text).matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    ids.add(n === 0 ? base : `${base}-${n}`);
  }
  return ids;
}

type Link = { target: string; line: number };

/** The inline links of a page outside code: `[text](target)`. */
function linksOf(text: string): Link[] {
  const prose = withoutFences(text).replace(/`[^`\n]*`/g, (span) => " ".repeat(span.length));
  const links: Link[] = [];
  for (const m of prose.matchAll(/\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
    links.push({ target: m[1], line: prose.slice(0, m.index).split("\n").length });
  }
  return links;
}

/** What is wrong with one link of `doc`, or undefined when it leads somewhere. */
function brokenLink(doc: string, target: string): string | undefined {
  if (/^[a-z][a-z+.-]*:/i.test(target)) return undefined; // https:, mailto:
  const [file, anchor] = target.split("#", 2);
  const resolved =
    file === "" ? doc : path.posix.normalize(path.posix.join(path.posix.dirname(doc), file));
  if (resolved.startsWith("..")) return `${target} leaves the repository`;
  if (!fs.existsSync(path.join(ROOT, resolved))) return `${target}: no file ${resolved}`;
  if (anchor === undefined) return undefined;
  if (!resolved.endsWith(".md")) return `${target}: an anchor into a file that is not markdown`;
  if (!anchorsOf(read(resolved)).has(anchor))
    return `${target}: ${resolved} has no heading #${anchor}`;
  return undefined;
}

describe("links", () => {
  it.each(DOCS)("every relative link and anchor in %s resolves", (doc) => {
    const text = read(doc);
    const broken = linksOf(text)
      .map(({ target, line }) => {
        const why = brokenLink(doc, target);
        return why && `${doc}:${line}: ${why}`;
      })
      .filter(Boolean);
    expect(broken).toEqual([]);
  });

  it.each(DOCS)("every repository path %s quotes as code exists", (doc) => {
    const missing = [];
    for (const m of read(doc).matchAll(
      /`((?:src|test|docs|bench|example|scripts|demo)\/[\w./-]+)`/g,
    )) {
      if (!fs.existsSync(path.join(ROOT, m[1]))) missing.push(m[1]);
    }
    expect(missing).toEqual([]);
  });

  it("catches what it should: a missing file, a missing heading, a link in code is not one", () => {
    expect(brokenLink("docs/README.md", "nowhere.md")).toMatch(/no file docs\/nowhere\.md/);
    expect(brokenLink("docs/README.md", "testing.md#no-such-heading")).toMatch(/no heading/);
    expect(brokenLink("README.md", "docs/testing.md#vitestconfigts")).toBeUndefined();
    expect(brokenLink("README.md", "#why-switch")).toBeUndefined();
    expect(linksOf("`[a](b)`\n```md\n[c](d)\n```\n[e](f)")).toEqual([{ target: "f", line: 5 }]);
    expect(slug("Which jobs? `list`")).toBe("which-jobs-list");
    expect(slug("convex/\\_generated, by hand")).toBe("convex_generated-by-hand");
    expect([...anchorsOf("# A\n## A\n```\n# not a heading\n```")]).toEqual(["a", "a-1"]);
  });
});

describe("README.md, the front page", () => {
  const readme = read("README.md");

  it(`stays short: at most ${README_MAX_LINES} lines`, () => {
    expect(readme.split("\n").length - 1).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it("links every page of docs/ directly", () => {
    const linked = new Set(linksOf(readme).map(({ target }) => target.split("#")[0]));
    expect(GUIDES.filter((guide) => !linked.has(guide))).toEqual([]);
  });

  it("shows how to run the tests and the demo", () => {
    expect(readme).toContain("npm test");
    expect(readme).toContain("npm run demo");
  });
});

describe("code blocks", () => {
  const texts = Object.fromEntries(["README.md", ...GUIDES].map((doc) => [doc, read(doc)]));
  const texts0 = texts["docs/testing.md"];
  const apps = docApps(texts);

  it("every TypeScript block is a file of its document's app (the package test builds them)", () => {
    expect(Object.keys(apps)).toContain("README.md");
    expect(Object.keys(apps)).toContain("docs/testing.md");
    for (const app of Object.values(apps)) {
      expect(Object.keys(app.files)).toContain("convex/_generated/api.ts");
    }
  });

  it("leaves out a file that needs a newer package than the one installed, with its continuations", () => {
    const doc = [
      "<!-- file: convex/a.ts -->",
      "```ts\nexport const a = 1;\n```",
      "<!-- file: convex/b.test.ts (needs convex-test 0.0.70) -->",
      "```ts\nexport const b = 1;\n```",
      "<!-- file: convex/b.test.ts (continued) -->",
      "```ts\nexport const c = 1;\n```",
    ].join("\n");
    const config = [
      "<!-- file: convex/convex.config.ts -->",
      '```ts\nimport workpool from "convex-workpool/convex.config.js";\napp.use(workpool);\n```',
    ].join("\n");
    const texts = { "docs/testing.md": texts0, "docs/x.md": `${config}\n${doc}` };
    const at = (version: string) => docApps(texts, { "convex-test": version })["docs/x.md"];
    expect(at("0.0.60").skipped).toEqual(["convex/b.test.ts"]);
    expect(Object.keys(at("0.0.60").files)).not.toContain("convex/b.test.ts");
    expect(at("0.0.70").skipped).toEqual([]);
    expect(at("0.0.70").files["convex/b.test.ts"]).toContain("export const c = 1;");
    expect(docApps(texts)["docs/x.md"].skipped).toEqual([]);
  });

  it("the testing guide's app is the one Getting started builds, whole", () => {
    const testing = apps["docs/testing.md"].files;
    const started = apps["docs/getting-started.md"].files;
    for (const file of ["convex/convex.config.ts", "convex/schema.ts", "convex/emails.ts"]) {
      expect(testing[file], file).toBe(started[file]);
    }
    for (const file of [
      "package.json",
      "tsconfig.json",
      "vitest.config.ts",
      "convex/emails.test.ts",
    ]) {
      expect(Object.keys(testing)).toContain(file);
    }
    for (const file of ["api.ts", "server.ts", "dataModel.ts"]) {
      expect(texts["docs/testing.md"]).toContain(`<!-- file: convex/_generated/${file} -->`);
    }
  });
});

// What a newcomer follows to the letter (issue 37's snags): the testing guide's install commands
// get what its package.json names, its tsconfig compiles the guides' .tsx pages, and Getting
// started says plainly which Node the latest packages need.
describe("a newcomer's first app", () => {
  const testing = read("docs/testing.md");

  it("the testing guide's install commands ask for exactly its package.json's ranges", () => {
    const pkg = JSON.parse(
      docApps({ "docs/testing.md": testing })["docs/testing.md"].files["package.json"],
    );
    const wanted = { ...pkg.dependencies, ...pkg.devDependencies } as Record<string, string>;
    const commands = /```sh\n(npm install convex[\s\S]*?)```/
      .exec(testing)![1]
      .replace(/\\\n/g, " ");
    const asked: Record<string, string> = {};
    for (const word of commands.split(/\s+/)) {
      const m = /^(@?[^@\s]+)@(\S+)$/.exec(word);
      if (m) asked[m[1]] = m[2];
      else if (word.endsWith(".tgz")) asked["convex-workpool"] = `file:${word}`;
    }
    expect(asked).toEqual(wanted);
  });

  it("the testing guide's tsconfig compiles .tsx pages", () => {
    const tsconfig = /<!-- file: tsconfig.json -->\s*```json\n([\s\S]*?)```/.exec(testing)![1];
    expect(JSON.parse(tsconfig).compilerOptions.jsx).toBe("react-jsx");
  });

  it("Getting started says the latest vitest and convex need Node 22", () => {
    const what = /## What you need([\s\S]*?)\n## /.exec(read("docs/getting-started.md"))![1];
    expect(what.replace(/\s+/g, " ")).toMatch(/`convex` 1\.49 and vitest 5 need Node 22/);
  });
});
