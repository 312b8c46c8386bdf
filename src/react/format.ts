/**
 * How the dashboard writes numbers and durations: one place, so that every view (and the demo's
 * tests, which compare what the page shows with what the pool returned) agree. Pure functions;
 * no React, no state.
 */

/** A count with thousands separators: 1,234,567 (the same in every locale, for tests). */
export function formatCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A duration for a person: 850 ms, 4.2 s, 3 min 05 s, 2 h 10 min. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) {
    return `${minutes} min ${String(Math.floor((ms % 60_000) / 1000)).padStart(2, "0")} s`;
  }
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** An instant as a time of day in UTC (HH:MM:SS), the same for every viewer. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}
