/**
 * What the fair-share scenarios (11a to 11g) record and check, as pure functions of what a run
 * recorded: each tenant's waits (enqueue to its first attempt's start), from the jobs' own records;
 * and whether keys of different weights got starts in the ratio of their weights over every run of
 * `SHARE_WINDOW_STARTS` consecutive starts (API-EXTENSIONS §13), from the order in which the pool
 * started attempts. No I/O, so bench/counters.test.ts can feed them hand-made inputs and
 * bench/report/ can use the thresholds.
 */
import type { Probe } from "./app/probe.js";

/** Consecutive starts over which §13 promises the weights' ratio: 100. */
export const SHARE_WINDOW_STARTS = 100;
/** How far a key's starts in a window may be from its weighted share, as a fraction of that share
 * (§13: ±10 %), plus `SHARE_SLACK_STARTS`. */
export const SHARE_TOLERANCE = 0.1;
/** §13's "plus one": a window's edge can cut a turn in two, so one start more or fewer is allowed
 * on top of the tolerance. */
export const SHARE_SLACK_STARTS = 1;

/** One tenant's jobs' waits (virtual ms, enqueue to the first attempt's start, in enqueue order;
 * jobs that never started are left out). */
export type TenantWaits = { tenant: string; jobs: number; waits: number[] };

/** Each tenant's waits, tenants in the order their first job was enqueued. */
export function tenantWaits(
  recorded: Pick<Probe, "enqueuedAt" | "tenantOf" | "attempts">,
): TenantWaits[] {
  const firstStart = new Map<string, number>();
  for (const a of recorded.attempts) if (!firstStart.has(a.key)) firstStart.set(a.key, a.start);
  const byTenant = new Map<string, TenantWaits>();
  for (const [job, at] of recorded.enqueuedAt) {
    const tenant = recorded.tenantOf.get(job);
    if (tenant === undefined) continue;
    const entry = byTenant.get(tenant) ?? { tenant, jobs: 0, waits: [] };
    entry.jobs++;
    const start = firstStart.get(job);
    if (start !== undefined) entry.waits.push(start - at);
    byTenant.set(tenant, entry);
  }
  return [...byTenant.values()];
}

/** How a weighted split went, from the keys of the attempts the pool started, in start order. */
export type ShareChecks = {
  /** Attempts started, per key. */
  starts: Record<string, number>;
  /** Starts while every key still had a job to start (up to the first key's last start): the
   * stretch §13's promise covers. */
  contested: number;
  /** Windows of `SHARE_WINDOW_STARTS` consecutive starts within `contested` (0 when it is
   * shorter than a window). */
  windows: number;
  /** Windows in which some key's starts were off its share by more than the tolerance allows. */
  outside: number;
  /** The window and key furthest from its share, relative to what the tolerance allows
   * (`deviation / allowed`; at most 1 passes). */
  worst?: { from: number; key: string; starts: number; share: number; ratio: number };
};

/** The starts a key of `weight` should get in a window, out of `totalWeight`, and how far off it
 * may be. */
export function shareOf(weight: number, totalWeight: number) {
  const share = (SHARE_WINDOW_STARTS * weight) / totalWeight;
  return { share, allowed: SHARE_TOLERANCE * share + SHARE_SLACK_STARTS };
}

/** Checks the keys of the attempts the pool started (`keysInStartOrder`) against `weights` (every
 * key that took part, with its weight): every window of `SHARE_WINDOW_STARTS` consecutive starts
 * made while each key still had jobs to start holds each key's weighted share, within the
 * tolerance. */
export function shareChecks(
  keysInStartOrder: readonly string[],
  weights: Readonly<Record<string, number>>,
): ShareChecks {
  const keys = Object.keys(weights);
  const totalWeight = keys.reduce((sum, k) => sum + weights[k], 0);
  const starts: Record<string, number> = Object.fromEntries(keys.map((k) => [k, 0]));
  const last = new Map<string, number>();
  keysInStartOrder.forEach((k, i) => {
    starts[k] = (starts[k] ?? 0) + 1;
    last.set(k, i);
  });
  // A key that never started was never contested; otherwise the stretch ends with the first key's
  // last start (after it, that key had nothing left to start).
  const contested = keys.every((k) => last.has(k))
    ? Math.min(...keys.map((k) => last.get(k)!)) + 1
    : 0;
  const windows = Math.max(0, contested - SHARE_WINDOW_STARTS + 1);
  const inWindow = new Map(keys.map((k) => [k, 0]));
  let outside = 0;
  let worst: ShareChecks["worst"];
  for (let i = 0; i < contested; i++) {
    const k = keysInStartOrder[i];
    inWindow.set(k, (inWindow.get(k) ?? 0) + 1);
    if (i >= SHARE_WINDOW_STARTS) {
      const gone = keysInStartOrder[i - SHARE_WINDOW_STARTS];
      inWindow.set(gone, inWindow.get(gone)! - 1);
    }
    if (i < SHARE_WINDOW_STARTS - 1) continue;
    const from = i - SHARE_WINDOW_STARTS + 1;
    let off = false;
    for (const key of keys) {
      const { share, allowed } = shareOf(weights[key], totalWeight);
      const n = inWindow.get(key) ?? 0;
      const ratio = Math.abs(n - share) / allowed;
      if (ratio > 1) off = true;
      if (!worst || ratio > worst.ratio) worst = { from, key, starts: n, share, ratio };
    }
    if (off) outside++;
  }
  return { starts, contested, windows, outside, worst };
}
