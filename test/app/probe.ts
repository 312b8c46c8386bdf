// Observations of user code made by the test app's jobs, shared with the tests (same module instance).
export const probe = {
  running: 0,
  maxRunning: 0,
  /** Attempts seen per job key. */
  attempts: new Map<string, number>(),
  /** Start times (virtual ms) per job key, one per attempt. */
  starts: new Map<string, number[]>(),
  /** Per group (the part of a job key before ":", e.g. the pool key "a" of job "a:3"): attempts
   * running now, the most at once, and the job keys in the order their attempts started. */
  groupRunning: new Map<string, number>(),
  groupMax: new Map<string, number>(),
  groupStarts: new Map<string, string[]>(),
  /** The time the last enqueue through the test app ran at, as its transaction saw it (the pool's
   * clock for that enqueue: convex-test 0.0.70 pins a transaction's `Date.now()` at or after the
   * last commit, rounded up to the ms, so the test's own `Date.now()` may be a millisecond behind). */
  enqueuedAt: 0,
  /** Records the calling transaction's time as the last enqueue's. */
  markEnqueue() {
    this.enqueuedAt = Date.now();
  },
  reset() {
    this.running = 0;
    this.maxRunning = 0;
    this.attempts.clear();
    this.starts.clear();
    this.groupRunning.clear();
    this.groupMax.clear();
    this.groupStarts.clear();
  },
  enter(key: string): number {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    this.starts.set(key, [...(this.starts.get(key) ?? []), Date.now()]);
    const group = groupOf(key);
    if (group !== undefined) {
      const running = (this.groupRunning.get(group) ?? 0) + 1;
      this.groupRunning.set(group, running);
      this.groupMax.set(group, Math.max(this.groupMax.get(group) ?? 0, running));
      this.groupStarts.set(group, [...(this.groupStarts.get(group) ?? []), key]);
    }
    return n;
  },
  exit(key: string) {
    this.running--;
    const group = groupOf(key);
    if (group !== undefined) this.groupRunning.set(group, (this.groupRunning.get(group) ?? 1) - 1);
  },
};

function groupOf(key: string): string | undefined {
  const at = key.indexOf(":");
  return at < 0 ? undefined : key.slice(0, at);
}
