/**
 * The pool's typed errors. Expected failures are data: a ConvexError whose payload has a `kind`, with
 * an exported guard for each. Also what the pool keeps of errors user code throws: the message (cut
 * to a cap) and a ConvexError's data as `errorData` (under the value rules of `storableErrorData`).
 * Owns no state.
 */
import { ConvexError, convexToJson, type Value } from "convex/values";
import { inlineDepthLimit, measureValue, OBJECT_FIELDS_LIMIT } from "./valueMeasure.js";
import { MAX_DELAY_MS } from "./retry.js";

const INVALID_ARGUMENT = "workpool/InvalidArgument";
/** The wire form of a non-retryable error, shared with @convex-dev/workpool (API-COMPAT.md): a
 * ConvexError whose data is `{ __convexWorkpoolNonRetryable: true, message }`, so that each
 * package recognises the other's. */
const NON_RETRYABLE_MARKER = "__convexWorkpoolNonRetryable";
/** What our NonRetryableError carried before it took the peer's wire form (0.1.x): still
 * recognised, from code deployed before an upgrade. */
const NON_RETRYABLE_BEFORE = "workpool/NonRetryable";
const SNOOZE = "workpool/Snooze";
const UNAUTHORIZED = "workpool/Unauthorized";

/** The longest error message the pool stores, in UTF-8 bytes: the start of a longer one is kept,
 * with a note of how much was cut. An HTTP body in an error is common; 8 KiB keeps the cause and
 * keeps a batch of 50 failed reports (or a delivery row of 20 callbacks) far below Convex's 1 MiB
 * document and 16 MiB read limits. */
export const MAX_ERROR_MESSAGE_BYTES = 8 * 1024;

export type InvalidArgumentData = {
  kind: typeof INVALID_ARGUMENT;
  /** The argument that broke a rule, e.g. "retryBehavior.maxAttempts". */
  argument: string;
  /** What the rule is and what was given. */
  message: string;
};

/** The longest snooze: the pool's longest wait. */
export const MAX_SNOOZE_MS = MAX_DELAY_MS;

/** How much of a bad string value an error shows: enough to recognise it, never a whole 4 KiB key. */
const SHOWN_VALUE_LENGTH = 100;

/** What was given, described rather than shown (e.g. "17 levels" of nesting): `invalidArgument`
 * prints it as it is. */
export class Described {
  constructor(readonly text: string) {}
}

/** A description of what was given, for `invalidArgument` to print as it is. */
export function described(text: string): Described {
  return new Described(text);
}

/** How an error shows what was given: a number as it is; a string quoted and said to be one (so
 * that `"10"` is not mistaken for the number 10), cut to SHOWN_VALUE_LENGTH; anything else by its
 * type (never its content). */
function showGiven(given: unknown): string {
  if (given instanceof Described) return given.text;
  if (typeof given === "number") return String(given);
  if (typeof given === "string") {
    if (given.length <= SHOWN_VALUE_LENGTH) return `${JSON.stringify(given)} (a string)`;
    const start = JSON.stringify(given.slice(0, SHOWN_VALUE_LENGTH)).slice(0, -1);
    return `${start}…" (a string of ${given.length} characters)`;
  }
  if (given === null) return "null";
  if (Array.isArray(given)) return "an array";
  return typeof given;
}

/** Throws the error for bad input, naming the argument and the rule it broke, and saying what was
 * given (its type, for a value of the wrong one: `got "10" (a string)`). */
export function invalidArgument(argument: string, rule: string, given: unknown): never {
  const shown = showGiven(given);
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

type NonRetryableErrorData = { [NON_RETRYABLE_MARKER]: true; message: string };

/**
 * Throw this from an action run by the pool to fail the attempt without any retry: onComplete gets
 * `{ kind: "failed", error: message }`. Its wire form is @convex-dev/workpool's, so either package's
 * `isNonRetryableError` recognises the other's.
 */
export class NonRetryableError extends ConvexError<NonRetryableErrorData> {
  /** @param options `cause`: the error behind this one, as for any `Error` (not sent anywhere). */
  constructor(message: string, options?: { cause?: unknown }) {
    super({ [NON_RETRYABLE_MARKER]: true, message });
    this.name = "NonRetryableError";
    this.message = message;
    // Set through a cast: `Error.cause` is ES2022, and a consumer may compile this file (through
    // the `/test` entry) with `lib: ES2021`.
    if (options?.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
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
    if (delayMs > MAX_SNOOZE_MS) {
      invalidArgument(
        "SnoozeError delayMs",
        `must be at most ${MAX_SNOOZE_MS} ms (30 days)`,
        delayMs,
      );
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

/** The message of a non-retryable error in any of the forms the pool recognises, else undefined:
 * the wire form (ours or the peer's NonRetryableError, or a ConvexError built by hand, also after it
 * crossed a function boundary), our form before 0.2.0, and, as the peer does, an `Error` (or any
 * thrown object) that carries the marker itself (`Object.assign(new Error(m), { __convexWorkpoolNonRetryable: true })`;
 * its own properties survive only where the pool sees the thrown object itself: a task, or a
 * function convex-test runs in the same process). */
function nonRetryableMessage(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const own = error as Record<string, unknown>;
  if (own[NON_RETRYABLE_MARKER] === true) {
    return typeof own.message === "string" ? own.message : "non-retryable error";
  }
  if (!(error instanceof Error)) return undefined;
  const data = (error as { data?: unknown }).data;
  if (typeof data !== "object" || data === null) return undefined;
  const fields = data as Record<string, unknown>;
  if (fields[NON_RETRYABLE_MARKER] !== true && fields.kind !== NON_RETRYABLE_BEFORE)
    return undefined;
  return typeof fields.message === "string" ? fields.message : error.message;
}

/** True for a `NonRetryableError` (ours or @convex-dev/workpool's), including one that crossed a
 * function boundary as a ConvexError, for any ConvexError in its wire form, and for an `Error`
 * carrying the marker as its own property. */
export function isNonRetryableError(error: unknown): boolean {
  return nonRetryableMessage(error) !== undefined;
}

const encoder = new TextEncoder();

/** Runs of UTF-16 units that are not ASCII. Maximal runs, so that two halves of a surrogate pair
 * are never split between runs and two lone halves with ASCII between them never join. */
const NON_ASCII_RUNS = /[\u0080-\uffff]+/g;

/** The UTF-8 length of `text` as TextEncoder would encode it (a lone surrogate becomes U+FFFD, 3
 * bytes), counted without encoding it: a failed attempt's message may be a megabyte. A byte per
 * unit, plus what each run of non-ASCII units adds: the runs are found by the regex engine,
 * which skips ASCII a few times faster than a loop over the units (measured on a megabyte: 0.5 ms
 * against 2.2 ms), and most messages are ASCII. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (const [run] of text.matchAll(NON_ASCII_RUNS)) bytes += runExtraBytes(run);
  return bytes;
}

/** The bytes past one a unit that a run of non-ASCII units takes in UTF-8. */
function runExtraBytes(run: string): number {
  let extra = 0;
  for (let i = 0; i < run.length; i++) {
    const unit = run.charCodeAt(i);
    if (unit < 0x800) extra += 1;
    else if (
      unit >= 0xd800 &&
      unit <= 0xdbff &&
      i + 1 < run.length &&
      (run.charCodeAt(i + 1) & 0xfc00) === 0xdc00
    ) {
      // A pair: 4 bytes for 2 units.
      extra += 2;
      i++;
    } else extra += 2;
  }
  return extra;
}

/**
 * `message` cut to `maxBytes` (default MAX_ERROR_MESSAGE_BYTES) of UTF-8, note included: the start
 * is kept (on a character boundary) and the note says how many bytes were cut. Shorter messages
 * are unchanged. Only the part kept is encoded (a UTF-16 unit is at least one byte, so the first
 * `maxBytes + 1` units hold every byte of it, whole characters up to the cut).
 */
export function capErrorMessage(message: string, maxBytes = MAX_ERROR_MESSAGE_BYTES): string {
  // At most 3 bytes a UTF-16 unit: short enough whatever it holds.
  if (message.length * 3 <= maxBytes) return message;
  const total = utf8Length(message);
  if (total <= maxBytes) return message;
  const note = (cut: number) => ` … [workpool: ${cut} of ${total} bytes cut]`;
  // The note's length depends on the number it shows; the longest it can be bounds the cut.
  let keep = maxBytes - utf8Length(note(total));
  const bytes = encoder.encode(message.slice(0, maxBytes + 1));
  // Back up to the start of a character: UTF-8 continuation bytes are 10xxxxxx.
  while (keep > 0 && (bytes[keep] & 0xc0) === 0x80) keep--;
  const start = new TextDecoder().decode(bytes.subarray(0, keep));
  return start + note(total - keep);
}

/** The message to store for a failed attempt, cut to MAX_ERROR_MESSAGE_BYTES. */
export function errorMessage(error: unknown): string {
  let message = nonRetryableMessage(error);
  if (message === undefined && error instanceof Error) message = error.message;
  if (message === undefined) {
    try {
      message = String(error);
    } catch {
      message = `a thrown ${typeof error} that has no message`;
    }
  }
  return capErrorMessage(typeof message === "string" ? message : String(message));
}

/** How ConvexError marks its instances (convex/values): recognised across copies of the convex
 * package, where `instanceof` is not (the app's copy and the component's). */
const CONVEX_ERROR_MARK = Symbol.for("ConvexError");

/** The data of a thrown ConvexError (`data ?? null`, as the peer's `errorData`), else undefined. */
export function convexErrorData(error: unknown): unknown {
  if (typeof error !== "object" || error === null) return undefined;
  if (
    !(error instanceof ConvexError) &&
    (error as Record<symbol, unknown>)[CONVEX_ERROR_MARK] !== true
  )
    return undefined;
  return (error as { data?: unknown }).data ?? null;
}

/** The largest `errorData` the pool keeps, in bytes as Convex counts them (model/valueMeasure.ts):
 * as much as an error message (MAX_ERROR_MESSAGE_BYTES), for the same reason — every outcome row,
 * completion row and delivery row carries it inline. */
export const MAX_ERROR_DATA_BYTES = 8 * 1024;

/** How many objects and arrays deep an `errorData` may nest. It sits where a return value does (a
 * `deliveries` row's `items[i].result.errorData`, a `pendingCompletion` row's
 * `more[i].result.errorData`), so it could nest as deep as an inline return value
 * (`inlineDepthLimit("returnValue")`, 13); one level is kept to spare. */
export const MAX_ERROR_DATA_NESTING = inlineDepthLimit("returnValue") - 1;

/**
 * What the pool stores of a failed run's `errorData`, under the value rules every stored user value
 * follows: a Convex value of at most MAX_ERROR_DATA_BYTES nesting at most MAX_ERROR_DATA_NESTING
 * deep is kept as it is; anything else is stored as `null`, and `note` says why (the caller adds it
 * to the error message). Never changes whether the failure is retried.
 */
export function storableErrorData(data: unknown): { errorData: Value; note?: string } {
  const dropped = (why: string) => ({
    errorData: null,
    note: `[workpool: errorData not kept: ${why}]`,
  });
  let measure: ReturnType<typeof measureValue>;
  try {
    // The field-name rules (ASCII, no leading "$") and `undefined` in arrays, which getConvexSize
    // does not check: an executor's live error data crosses no function boundary before its
    // report, whose arguments Convex would refuse (the whole report, not this one value).
    convexToJson((data ?? null) as Value);
    measure = measureValue(data ?? null);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return dropped(`not a Convex value (${reason.slice(0, SHOWN_VALUE_LENGTH)})`);
  }
  if (measure.bytes > MAX_ERROR_DATA_BYTES) {
    return dropped(`${measure.bytes} bytes, over the limit of ${MAX_ERROR_DATA_BYTES}`);
  }
  if (measure.depth > MAX_ERROR_DATA_NESTING) {
    return dropped(`nested over ${MAX_ERROR_DATA_NESTING} levels deep`);
  }
  if (measure.maxFields > OBJECT_FIELDS_LIMIT) {
    return dropped(
      `an object of ${measure.maxFields} fields, over the limit of ${OBJECT_FIELDS_LIMIT}`,
    );
  }
  return { errorData: (data ?? null) as Value };
}

export type UnauthorizedData = {
  kind: typeof UNAUTHORIZED;
  /** The admin function refused, e.g. "retry". */
  operation: string;
  message: string;
};

/** Throws the error of a call to an admin function (`pool.adminApi`) that `authorize` refused. */
export function unauthorized(operation: string): never {
  throw new ConvexError<UnauthorizedData>({
    kind: UNAUTHORIZED,
    operation,
    message: `workpool: not authorized to call ${operation}`,
  });
}

/** True for the error of a call `authorize` refused (also after it crossed a function boundary,
 * and on the client, where `convex/react` rethrows it). */
export function isUnauthorizedError(error: unknown): error is ConvexError<UnauthorizedData> {
  if (!(error instanceof Error)) return false;
  const data = (error as { data?: unknown }).data;
  return (
    typeof data === "object" && data !== null && (data as { kind?: unknown }).kind === UNAUTHORIZED
  );
}
