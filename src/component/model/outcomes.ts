/**
 * What user code's run ends as, as data for the pool: a success (unless its return value cannot be
 * recorded), or a failure (with a thrown ConvexError's data as `errorData`), a snooze or a
 * non-retryable failure from what it threw. Shared by the
 * workers (runners/worker.ts) and executors (src/client/executor.ts). Pure; owns no state.
 */
import {
  capErrorMessage,
  convexErrorData,
  errorMessage,
  isNonRetryableError,
  MAX_ERROR_MESSAGE_BYTES,
  snoozeDelayMs,
  storableErrorData,
} from "./errors.js";
import { convexToJson, type Value } from "convex/values";
import { measureValue, unstorableReason, type ValueMeasure } from "./valueMeasure.js";
import { MAX_PAYLOAD_BYTES } from "./validate.js";
import type { AttemptResult } from "./validators.js";

/** The largest return value the pool keeps, as Convex counts it: a payload row holds it, and a
 * document is at most 1 MiB. */
export const MAX_RETURN_VALUE_BYTES = MAX_PAYLOAD_BYTES;

/** The outcome of user code that threw. A snooze hands the job's inline args back (`fnArgs`;
 * undefined when they live in a payload row, which stays). */
export function attemptFailure(error: unknown, fnArgs: unknown): AttemptResult {
  const delayMs = snoozeDelayMs(error);
  if (delayMs !== undefined) return { kind: "snoozed", delayMs, fnArgs };
  const failure = withErrorData(errorMessage(error), convexErrorData(error));
  return isNonRetryableError(error)
    ? { kind: "failed", ...failure, nonRetryable: true, fnArgs }
    : { kind: "failed", ...failure, fnArgs };
}

/** A failure's message, with the ConvexError's data as `errorData` when it threw one (undefined:
 * not a ConvexError) under its value rules (`storableErrorData`; the note of a dropped one ends
 * the message). */
export function withErrorData(error: string, data: unknown): { error: string; errorData?: Value } {
  if (data === undefined) return { error };
  const { errorData, note } = storableErrorData(data);
  if (note === undefined) return { error, errorData };
  // The note is what says where the data went: the message gives way to it.
  const room = MAX_ERROR_MESSAGE_BYTES - new TextEncoder().encode(` ${note}`).length;
  return { error: `${capErrorMessage(error, room)} ${note}`, errorData };
}

/** A success, unless its return value cannot be recorded (not a Convex value, or past what a
 * Convex document holds as valueMeasure.ts counts it: over the size limit, nested too deep, an
 * object or array too wide): then a failure of this attempt alone that says why and is not retried
 * (running it again returns the same). */
export function attemptSuccess(returnValue: unknown): AttemptResult {
  const value = returnValue ?? null;
  let measure: ValueMeasure;
  try {
    convexToJson(value as Value); // the field-name rules getConvexSize does not check
    measure = measureValue(value);
  } catch (error) {
    return {
      kind: "failed",
      error: errorMessage(
        `workpool: the return value is not a Convex value: ${errorMessage(error)}`,
      ),
      nonRetryable: true,
    };
  }
  const reason = unstorableReason(measure, MAX_RETURN_VALUE_BYTES);
  if (reason !== undefined) {
    return {
      kind: "failed",
      error: `workpool: the return value ${reason}`,
      nonRetryable: true,
    };
  }
  return { kind: "success", returnValue: value };
}
