// Types of doc-apps.mjs, for test/docs.test.ts.

/** A document's app: its files (path → text), how many ts/tsx blocks the document has, and the
 * files left out as needing newer packages than the versions given. */
export type DocApp = { files: Record<string, string>; blocks: number; skipped: string[] };

export const CODEGEN_DOC: string;
export const GENERIC_GENERATED: string[];
export class DocError extends Error {}
export function fencedBlocks(text: string): {
  lang: string;
  body: string;
  line: number;
  marker?: {
    file: string;
    continued: boolean;
    needs?: { name: string; version: string };
  };
}[];
export function docApps(
  texts: Record<string, string>,
  versions?: Record<string, string>,
): Record<string, DocApp>;
export function generatedApi(doc: string, files: Record<string, string>): string;
