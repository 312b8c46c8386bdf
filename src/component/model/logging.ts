/**
 * Logging at the configured level. Every line is one JSON object with an `event` name, so log search
 * can filter on it. Owns no state; never throws.
 */
import type { LogLevel } from "./validators.js";

const LEVEL_ORDER: Record<LogLevel, number> = {
  DEBUG: 0,
  TRACE: 1,
  INFO: 2,
  REPORT: 3,
  WARN: 4,
  ERROR: 5,
};

/** The level a pool logs at until told otherwise: periodic reports and above. */
export const DEFAULT_LOG_LEVEL: LogLevel = "REPORT";

/** What a pool without a configured level logs at in this isolate: DEFAULT_LOG_LEVEL, except
 * under `convex-workpool/test`, whose `register` lowers the noise of tests (src/test.ts). */
let unconfiguredLevel: LogLevel = DEFAULT_LOG_LEVEL;

/** The level of a pool whose config sets none. */
export function unconfiguredLogLevel(): LogLevel {
  return unconfiguredLevel;
}

/** For the test helper only: the level pools without a configured level log at in this isolate.
 * Never called by the component's functions, so a deployment always uses DEFAULT_LOG_LEVEL. */
export function setUnconfiguredLogLevel(level: LogLevel): void {
  unconfiguredLevel = level;
}

export type Logger = {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  report(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
};

/** True when a line at `level` should be printed by a pool configured at `configured`. */
export function shouldLog(configured: LogLevel, level: LogLevel): boolean {
  return LEVEL_ORDER[level] >= LEVEL_ORDER[configured];
}

export function createLogger(configured: LogLevel): Logger {
  const emit = (level: LogLevel, event: string, fields?: Record<string, unknown>) => {
    if (!shouldLog(configured, level)) return;
    const line = JSON.stringify({ component: "workpool", level, event, ...fields });
    if (level === "ERROR") console.error(line);
    else if (level === "WARN") console.warn(line);
    else if (level === "DEBUG" || level === "TRACE") console.debug(line);
    else console.info(line);
  };
  return {
    debug: (event, fields) => emit("DEBUG", event, fields),
    info: (event, fields) => emit("INFO", event, fields),
    report: (event, fields) => emit("REPORT", event, fields),
    warn: (event, fields) => emit("WARN", event, fields),
    error: (event, fields) => emit("ERROR", event, fields),
  };
}
