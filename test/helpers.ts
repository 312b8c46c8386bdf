/**
 * Shared test setup. Tests drive a virtual clock: `vi.useFakeTimers()`, then `runFor` advances it in
 * small steps so that scheduled functions (the loop, workers, sleeping actions) run as time passes.
 */
import { convexTest } from "convex-test";
import { vi } from "vitest";
import { register } from "../src/test.js";
import schema from "./app/schema.js";
import { probe } from "./app/probe.js";

/** Real timers, kept before faking them, to let real I/O (lazy module imports) happen. */
const realSetTimeout = globalThis.setTimeout;
const realTick = () => new Promise<void>((resolve) => realSetTimeout(resolve, 0));

export const appModules = import.meta.glob("./app/**/*.ts");

export type T = ReturnType<typeof convexTest<typeof schema.tables>>;

/** A fresh app with the pool installed as "workpool", at a fixed start time. */
export function setup() {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "Date"] });
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
  probe.reset();
  const t = convexTest({ schema, modules: appModules, transactionLimits: true });
  register(t as any);
  return t;
}

/** Advances virtual time by `ms` in steps of `stepMs`, letting due functions run at each step. */
export async function runFor(t: any, ms: number, stepMs = 10) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await vi.advanceTimersByTimeAsync(Math.min(stepMs, end - Date.now()));
    await realTick();
  }
}

/** Runs the component's tables through a callback (reads in the component's context). */
export async function inComponent<R>(t: any, fn: (ctx: any) => Promise<R>): Promise<R> {
  return await t.runInComponent("workpool", fn);
}

