// What the bench app's jobs observe about themselves, shared in memory with the harness (same module
// instance under vitest). Jobs record when each attempt started and ended; enqueue records when each
// job was enqueued. Nothing here is written to the database, so it adds nothing to the counters.
export type Attempt = { key: string; start: number; end?: number };

export const probe = {
  enqueuedAt: new Map<string, number>(),
  attempts: [] as Attempt[],
  attemptsByKey: new Map<string, number>(),
  running: 0,
  maxRunning: 0,
  onCompleteCalls: 0,
  reset() {
    this.enqueuedAt.clear();
    this.attempts = [];
    this.attemptsByKey.clear();
    this.running = 0;
    this.maxRunning = 0;
    this.onCompleteCalls = 0;
  },
  /** Records the start of an attempt; returns its number (1-based) and the record to close. */
  enter(key: string): { attempt: number; record: Attempt } {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const attempt = (this.attemptsByKey.get(key) ?? 0) + 1;
    this.attemptsByKey.set(key, attempt);
    const record: Attempt = { key, start: Date.now() };
    this.attempts.push(record);
    return { attempt, record };
  },
  exit(record: Attempt) {
    this.running--;
    record.end = Date.now();
  },
};
