/**
 * The pool's typed errors. Expected failures are data: a ConvexError whose payload has a `kind`, with
 * an exported guard for each. Owns no state.
 */
import { ConvexError } from "convex/values";

const INVALID_ARGUMENT = "workpool/InvalidArgument";
const NON_RETRYABLE = "workpool/NonRetryable";
const SNOOZE = "workpool/Snooze";

export type InvalidArgumentData = {
  kind: typeof INVALID_ARGUMENT;
  /** The argument that broke a rule, e.g. "retryBehavior.maxAttempts". */
  argument: string;
  /** What the rule is and what was given. */
  message: string;
};

/** Throws the error for bad input, naming the argument and the rule it broke. */
export function invalidArgument(argument: string, rule: string, given: unknown): never {
  const shown =
    typeof given === "number" || typeof given === "string" ? String(given) : typeof given;
  throw new ConvexError<InvalidArgumentData>({
    kind: INVALID_ARGUMENT,
    argument,
    message: `workpool: invalid ${argument}: ${rule} (got ${shown})`,
  });
}

/** True for the error `invalidArgument` throws (also after it crossed a function boundary). */
export function isInvalidArgumentError(error: unknown): error is ConvexError<InvalidArgumentData> {
  return (
    error instanceof ConvexError &&
    typeof error.data === "object" &&
    error.data !== null &&
    (error.data as { kind?: unknown }).kind === INVALID_ARGUMENT
  );
}

/**
 * Throw this from an action run by the pool to fail the attempt without any retry: onComplete gets
 * `{ kind: "failed", error: message }`.
 */
export class NonRetryableError extends ConvexError<{
  kind: typeof NON_RETRYABLE;
  message: string;
}> {
  constructor(message: string) {
    super({ kind: NON_RETRYABLE, message });
    this.name = "NonRetryableError";
    this.message = message;
  }
}

/**
 * Throw this from a job's function to give its slot back and run it again `delayMs` later, without
 * spending an attempt: the job goes back to pending (a keyed job keeps its key's slot, as during a
 * retry's backoff). For actions, mutations and queries alike; a mutation's writes are rolled back.
 */
export class SnoozeError extends ConvexError<{
  kind: typeof SNOOZE;
  delayMs: number;
  message: string;
}> {
  constructor(delayMs: number) {
    if (typeof delayMs !== "number" || !Number.isFinite(delayMs) || delayMs < 0) {
      invalidArgument("SnoozeError delayMs", "must be a finite number ≥ 0", delayMs);
    }
    const message = `workpool: snoozed for ${delayMs} ms`;
    super({ kind: SNOOZE, delayMs, message });
    this.name = "SnoozeError";
    this.message = message;
  }
}

/** The delay of a `SnoozeError` (also after it crossed a function boundary), else undefined. */
export function snoozeDelayMs(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const data = (error as { data?: unknown }).data;
  if (typeof data !== "object" || data === null) return undefined;
  const { kind, delayMs } = data as { kind?: unknown; delayMs?: unknown };
  return kind === SNOOZE && typeof delayMs === "number" ? delayMs : undefined;
}

/** True for a `NonRetryableError`, including one that crossed a function boundary as ConvexError. */
export function isNonRetryableError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const data = (error as { data?: unknown }).data;
  return (
    typeof data === "object" && data !== null && (data as { kind?: unknown }).kind === NON_RETRYABLE
  );
}

/** The message to report for a failed attempt. */
export function errorMessage(error: unknown): string {
  if (isNonRetryableError(error)) {
    return (error as { data: { message: string } }).data.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}
