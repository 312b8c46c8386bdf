// @vitest-environment node
// Type-level parity with @convex-dev/workpool 0.4.16: the fixture app (test/app/parity.ts and
// parityJobs.ts, which import this package and which `tsc -p tsconfig.json` checks) also compiles,
// with the same expected errors, when its imports point at the peer; and it uses every name the
// peer's client exports, values and types.
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..");
const FIXTURE = ["test/app/parity.ts", "test/app/parityJobs.ts"].map((f) => path.join(ROOT, f));
const OURS = '"../../src/client/index.js"';
const PEER = '"@convex-dev/workpool"';

/** A program of the fixture with its imports of this package pointed at the peer. */
function peerProgram(): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, "tsconfig.json"), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    },
  })!;
  const options = { ...config.options, noEmit: true };
  const host = ts.createCompilerHost(options);
  const isFixture = (file: string) => FIXTURE.includes(path.resolve(file));
  const readFile = host.readFile.bind(host);
  host.readFile = (file) => {
    const text = readFile(file);
    return text !== undefined && isFixture(file) ? text.replaceAll(OURS, PEER) : text;
  };
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (file, language, onError, create) =>
    isFixture(file)
      ? ts.createSourceFile(file, host.readFile(file)!, language)
      : getSourceFile(file, language, onError, create);
  return ts.createProgram({ rootNames: FIXTURE, options, host });
}

describe("the parity fixture against @convex-dev/workpool", () => {
  const program = peerProgram();

  it("imports the peer (not this package)", () => {
    const files = program.getSourceFiles().map((f) => f.fileName);
    expect(files.some((f) => f.endsWith("@convex-dev/workpool/dist/client/index.d.ts"))).toBe(true);
    expect(files.some((f) => f.includes("/src/client/"))).toBe(false);
  });

  it("type-checks, with the same expected errors (every @ts-expect-error is used)", () => {
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (f) => f,
      getCurrentDirectory: () => ROOT,
      getNewLine: () => "\n",
    });
    expect(text).toBe("");
  });

  it("uses every value and type the peer's client exports", () => {
    const checker = program.getTypeChecker();
    const peerIndex = program
      .getSourceFiles()
      .find((f) => f.fileName.endsWith("@convex-dev/workpool/dist/client/index.d.ts"))!;
    const exported = checker
      .getExportsOfModule(checker.getSymbolAtLocation(peerIndex)!)
      .map((symbol) => symbol.name)
      .sort();
    const imported = new Set<string>();
    for (const file of FIXTURE) {
      const source = program.getSourceFile(file)!;
      for (const statement of source.statements) {
        if (
          ts.isImportDeclaration(statement) &&
          (statement.moduleSpecifier as ts.StringLiteral).text === "@convex-dev/workpool"
        ) {
          const bindings = statement.importClause?.namedBindings;
          if (bindings && ts.isNamedImports(bindings)) {
            for (const element of bindings.elements) imported.add(element.name.text);
          }
        }
      }
    }
    expect(exported.length).toBeGreaterThan(20);
    expect(exported.filter((name) => !imported.has(name))).toEqual([]);
  });
});
