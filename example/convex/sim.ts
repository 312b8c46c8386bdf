// Deterministic stand-ins for the outside world: whether an attempt fails and how long it takes
// follow from a seed passed in the job's arguments, never from Math.random, so every run of the
// tests and the demo is the same.

/** A number in [0, 1) determined by `seed`, `key` and `salt` (FNV-1a, then a mulberry32 round). */
export function chance(seed: number, key: string, salt: number): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (const ch of `${key}#${salt}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193);
  }
  let t = (h + 0x6d2b79f5) >>> 0;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

/** Whether attempt `attempt` (1-based) of job `key` fails, at rate `failRate`. */
export function attemptFails(
  seed: number,
  key: string,
  attempt: number,
  failRate: number,
): boolean {
  return chance(seed, key, attempt) < failRate;
}

/** How long job `key` works: `ms` give or take 25%, the same on every attempt. */
export function workMs(seed: number, key: string, ms: number): number {
  return Math.round(ms * (0.75 + 0.5 * chance(seed, key, 0)));
}

/**
 * Simulated work: sleeps (virtual time under the tests' fake clock). With `signal`, it stops when
 * the signal aborts and rejects with its reason, as `fetch` does.
 */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) throw signal.reason;
  if (ms <= 0) return;
  await new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Arguments that control a simulated job. */
export type SimArgs = { ms: number; failRate: number; seed: number };
