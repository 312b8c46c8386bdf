// Observations of user code made by the test app's jobs, shared with the tests (same module instance).
export const probe = {
  running: 0,
  maxRunning: 0,
  /** Attempts seen per job key. */
  attempts: new Map<string, number>(),
  /** Start times (virtual ms) per job key, one per attempt. */
  starts: new Map<string, number[]>(),
  reset() {
    this.running = 0;
    this.maxRunning = 0;
    this.attempts.clear();
    this.starts.clear();
  },
  enter(key: string): number {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const n = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, n);
    this.starts.set(key, [...(this.starts.get(key) ?? []), Date.now()]);
    return n;
  },
  exit() {
    this.running--;
  },
};
