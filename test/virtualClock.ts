/**
 * The virtual clock every convex-test run here uses (tests, the example's tests, the demo, the bench):
 * fake timers and Date, starting at a fixed instant, advanced in small steps with one real tick
 * after each so that real I/O (convex-test's lazy module imports) can happen between steps.
 */
import { vi } from "vitest";

/** Real timers, kept before they are faked. */
const realSetTimeout = globalThis.setTimeout;

/** Lets real I/O run once (fake timers do not advance it). */
export function realTick(): Promise<void> {
  return new Promise<void>((resolve) => realSetTimeout(resolve, 0));
}

/** Fakes timers and Date (not microtasks or setImmediate) and sets the clock to a fixed instant. */
export function startVirtualClock(start = new Date("2026-01-01T00:00:00Z")): void {
  vi.useFakeTimers({
    toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"],
  });
  vi.setSystemTime(start);
}

/** Advances virtual time by `ms`, letting due timers run, then one real tick. */
export async function step(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await realTick();
}

/**
 * Advances virtual time by `ms`, letting due timers run, then lets the I/O already waiting run
 * (`setImmediate`, which the fake timers leave real): no timer's minimum delay, which in Node is
 * a millisecond of idle per step. For long runs of many steps whose checks do not depend on when a
 * lazily imported module arrives (the model test: a fifth of a chaos program's wall time was that
 * idle); a module still loading arrives a few steps later instead.
 */
export async function stepWithoutDelay(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await new Promise<void>((resolve) => setImmediate(resolve));
}

/** Advances virtual time by `ms` in steps of at most `stepMs`. */
export async function advance(ms: number, stepMs = 10): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) await step(Math.min(stepMs, end - Date.now()));
}
