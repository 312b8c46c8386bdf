// Types of doc-apps.mjs, for test/docs.test.ts.

/** A document's app: its files (path → text) and how many ts/tsx blocks the document has. */
export type DocApp = { files: Record<string, string>; blocks: number };

export const CODEGEN_DOC: string;
export const GENERIC_GENERATED: string[];
export class DocError extends Error {}
export function fencedBlocks(text: string): {
  lang: string;
  body: string;
  line: number;
  marker?: { file: string; continued: boolean };
}[];
export function docApps(texts: Record<string, string>): Record<string, DocApp>;
export function generatedApi(doc: string, files: Record<string, string>): string;
