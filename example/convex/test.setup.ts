// What the example app's test files share: a convex-test backend with its pools registered, on a
// fake clock that the tests step. (Two dots in the name: Convex does not take it for a module.)
/// <reference types="vite/client" />
import { convexTest } from "convex-test";
import { afterEach, beforeAll, vi } from "vitest";
import { loadModules, register } from "convex-workpool/test";
import schema from "./schema.js";

const modules = import.meta.glob("./**/*.ts");

/**
 * Call once at the top of a test file. Stepping the fake clock gives convex-test no real turn of
 * the event loop to import a module the first time it is used, so every module is imported first;
 * and each test's fake clock is put back after it.
 */
export function useExampleApp(): void {
  beforeAll(async () => {
    await loadModules(modules);
  });
  afterEach(() => {
    vi.useRealTimers();
  });
}

/** A fresh backend with the app and its three pools, on a fake clock. */
export function setup() {
  vi.useFakeTimers();
  const t = convexTest(schema, modules);
  register(t, "emailPool");
  register(t, "scrapePool");
  register(t, "llmPool");
  return t;
}
export type T = ReturnType<typeof setup>;

/** Advances the fake clock by `ms`; the pools' scheduled functions run as their times come. */
export async function runFor(ms: number) {
  await vi.advanceTimersByTimeAsync(ms);
}

/** A signed-in admin by the app's rule (operators.ts: the "admin" role claim): what the operator
 * functions of admin.ts and jobs.ts, and the dashboard's, let through. */
export const ADMIN = { subject: "admin-in-tests", role: "admin" };

/** `t` as the signed-in ADMIN. */
export function asAdmin(t: T) {
  return t.withIdentity(ADMIN);
}
