/**
 * Vitest setup (vitest.config.ts `test.setupFiles`): every test fails if any top-level `mainLoop/main:main`
 * pass it ran exceeded the per-pass budget of test/passBudget.ts. Hears passes through convex-test's
 * own transaction metrics (bench/instrument.ts), so it does not depend on console output, and reads
 * no timers, so tests that spy on console or fake timers do not affect it.
 */
import { afterEach, beforeEach } from "vitest";
import { checkPassBudget, recordedPasses, startPassRecording } from "./passBudget.js";

// Installs the hooks once per worker (idempotent), before any test builds a backend.
startPassRecording();

beforeEach(() => {
  startPassRecording();
});

afterEach(() => {
  checkPassBudget(recordedPasses());
});
