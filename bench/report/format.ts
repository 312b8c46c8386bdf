/**
 * How the report writes things: numbers, virtual times, ratios, markdown tables, a scenario's name
 * and description, lists in words, a heading's anchor. Pure string formatting of values it is given: it never reads a
 * run's measurements or decides what a figure is (bench/report/figures.ts does), and never writes
 * a file.
 */
import { MIN_ACHIEVED_RATE } from "../checks.js";
import type { Scenario } from "../harness.js";

/** The least achieved rate, as the document writes it ("0.90"). */
export const MIN_RATE = MIN_ACHIEVED_RATE.toFixed(2);

export function fmt(n: number | undefined, digits = 2): string {
  if (n === undefined || Number.isNaN(n)) return "—";
  if (!Number.isFinite(n)) return String(n);
  return Math.abs(n) >= 1000 ? n.toFixed(0) : n.toFixed(digits);
}

export function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return "—";
  if (ms < 1000) return `${ms.toFixed(0)} ms`;
  return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

/** ours / peer, or undefined when either is missing or not a number. */
export function ratioOf(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b)) return undefined;
  if (b === 0) return a === 0 ? 1 : Infinity;
  return a / b;
}

export function fmtRatio(x: number | undefined): string {
  if (x === undefined) return "—";
  if (!Number.isFinite(x)) return "∞";
  if (x >= 100) return x.toFixed(0);
  if (x > 0 && x < 0.1) return String(Number(x.toPrecision(2)));
  return x.toFixed(2);
}

export const fmtTimes = (x: number) => (x >= 10 ? x.toFixed(0) : x.toFixed(1));

export function table(header: string[], align: string[], rows: string[][]): string {
  return [header, align, ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

/** "+45 %", "−3 %": how far a ratio is from 1. */
export const signedPct = (x: number) =>
  `${x >= 1 ? "+" : "−"}${Math.round(Math.abs(x - 1) * 100)} %`;

/** "a", "a and b", "a, b and c". */
export const listed = (items: string[]) =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;

export const shortName = (sc: Scenario) => `${sc.id}. ${sc.short ?? sc.title}`;

/** A scenario's description, as a paragraph (or nothing). */
export const aboutOf = (sc: Scenario) => (sc.about ? `${sc.about}\n\n` : "");

/** The anchor GitHub gives a heading: lower case, punctuation but hyphens dropped, spaces to
 * hyphens ("Keys: ours keyed" → "keys-ours-keyed"). */
export const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

/** A markdown link to the section headed `heading`, with `text`: into the detail document from
 * the summary, within the page in the console report. */
export type SectionLink = (text: string, heading: string) => string;

/** Whether the scenario is one the peer runs too (older runs did not record `sides`: all were). */
export const vsPeer = (sc: Scenario) => (sc.sides ?? ["ours", "peer"]).includes("peer");
