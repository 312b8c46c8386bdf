// How the report writes its figures (report.ts, reportFigures.ts, reportComparison.ts): a figure's
// shape, counts and durations, the same everywhere and not in the reader's locale. Pure.

/** A number the page shows, marked `data-figure="<name>"` in it. */
export type Figure = {
  name: string;
  label: string;
  value: string;
  /** Where it comes from or what it means, in small print. */
  note?: string;
};

/** 12345 → "12,345" (fixed, not the reader's locale). */
export const count = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** A duration for people: "850 ms", "1.25 s", "12.3 s", "4 min 05 s". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, "0")} s`;
}
