// What the bench app's jobs observe about themselves, shared in memory with the harness (same module
// instance under vitest). Jobs record when each attempt started and ended, and how many attempts of
// each pool key ran at once; enqueue records when each job was enqueued (in enqueue order), its
// pool key, its priority and its tenant. Nothing here is written to the database, so it adds nothing to the
// counters.
import type { Priority } from "../../src/client/index.js";

export type Attempt = { key: string; start: number; end?: number };

export const probe = {
  /** Job key → when it was enqueued; iterates in enqueue order. */
  enqueuedAt: new Map<string, number>(),
  /** Job key → the pool's `key` option it was enqueued with (keyed jobs only). */
  poolKeyOf: new Map<string, string>(),
  /** Job key → the `priority` enqueue option it was enqueued with (jobs given one only). */
  priorityOf: new Map<string, Priority>(),
  /** Job key → the tenant it was enqueued for (the fair-share scenarios only): the app's label,
   * on both pools, whether or not it is also the job's pool key. */
  tenantOf: new Map<string, string>(),
  attempts: [] as Attempt[],
  attemptsByKey: new Map<string, number>(),
  running: 0,
  maxRunning: 0,
  /** Attempts running at once per pool key, and the most any one pool key ever had. */
  runningByPoolKey: new Map<string, number>(),
  maxRunningOneKey: { poolKey: "", running: 0 },
  onCompleteCalls: 0,
  reset() {
    this.enqueuedAt.clear();
    this.poolKeyOf.clear();
    this.priorityOf.clear();
    this.tenantOf.clear();
    this.attempts = [];
    this.attemptsByKey.clear();
    this.running = 0;
    this.maxRunning = 0;
    this.runningByPoolKey.clear();
    this.maxRunningOneKey = { poolKey: "", running: 0 };
    this.onCompleteCalls = 0;
  },
  /** Records the start of an attempt; returns its number (1-based) and the record to close. */
  enter(key: string): { attempt: number; record: Attempt } {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    this.countPoolKey(key, 1);
    const attempt = (this.attemptsByKey.get(key) ?? 0) + 1;
    this.attemptsByKey.set(key, attempt);
    const record: Attempt = { key, start: Date.now() };
    this.attempts.push(record);
    return { attempt, record };
  },
  exit(record: Attempt) {
    this.running--;
    this.countPoolKey(record.key, -1);
    record.end = Date.now();
  },
  countPoolKey(key: string, delta: 1 | -1) {
    const poolKey = this.poolKeyOf.get(key);
    if (poolKey === undefined) return;
    const running = (this.runningByPoolKey.get(poolKey) ?? 0) + delta;
    this.runningByPoolKey.set(poolKey, running);
    if (running > this.maxRunningOneKey.running) this.maxRunningOneKey = { poolKey, running };
  },
};

export type Probe = typeof probe;
