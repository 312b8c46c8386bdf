/**
 * Vitest setup (vitest.config.ts `test.setupFiles`): after every test, real timers again and every
 * spy restored, so that no test's virtual clock or console spy leaks into the next one.
 */
import { afterEach, vi } from "vitest";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});
