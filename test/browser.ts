/**
 * What the specs that drive Debian's Chromium share (test/demoReport.test.ts,
 * test/dashboardLive.test.ts): where the browser is, whether this run may skip without it (not under
 * CI), and the flags for a machine whose network is closed. Owns no test.
 */
import { existsSync } from "node:fs";

/** The browser: Debian's Chromium, or `CHROMIUM_PATH`. */
export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
export const haveBrowser = existsSync(CHROMIUM);
/** Under CI a missing browser fails the spec instead of skipping it. */
export const inCI = !["", "0", "false"].includes(process.env.CI ?? "");
export const SKIP_REASON = `no browser at ${CHROMIUM}; install Chromium to run it (Debian: apt-get install chromium)`;

/** Flags for a machine whose network is closed: no background connections that would fail. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
