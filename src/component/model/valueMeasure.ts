/**
 * One measure of a user value, Convex's own: its size as Convex counts a document
 * (`getConvexSize`: 9 bytes a number, 2 + UTF-8 bytes a string, …), how deep objects and arrays
 * nest in it, its widest object and its longest array; and, per kind of value the pool stores
 * (args, context, return value), the deepest row it is embedded in, hence the nesting it may have
 * inline. A value that does not fit inline goes to a `payloads` row, where it sits one level down
 * (as deep as the peer, `@convex-dev/workpool`, keeps args, and shallower than it keeps contexts
 * and return values), so the pool accepts every value the peer accepts. Pure; owns no state and
 * never reads or writes a row.
 */
import { getConvexSize } from "convex/values";
import { INLINE_VALUE_BYTES } from "./payloads.js";

// Convex's limits on one document (docs.convex.dev/production/state/limits).
/** The largest document, in bytes as `getConvexSize` counts them. */
export const DOCUMENT_BYTES_LIMIT = 1024 * 1024;
/** How deep objects and arrays may nest in a document (the document's own fields hold values at
 * level 1: a field `[[0]]` nests 2 levels). */
export const DOCUMENT_NESTING_LIMIT = 16;
/** Fields of one object, anywhere in a document. */
export const OBJECT_FIELDS_LIMIT = 1024;
/** Elements of one array, anywhere in a document. */
export const ARRAY_ELEMENTS_LIMIT = 8192;

/** A value as Convex counts it. `depth`: objects and arrays nested in it, itself included (0 for a
 * number or a string, 1 for `{}` or `[0]`, 2 for `[[0]]`). */
export type ValueMeasure = {
  bytes: number;
  depth: number;
  maxFields: number;
  maxArrayLength: number;
};

/** The kinds of user value the pool keeps in its rows. A task's args are `args`. */
export type ValueKind = "args" | "context" | "returnValue";

/**
 * Objects and arrays of the pool's own that hold a value of each kind, in the deepest row that
 * embeds it inline (the document itself not counted):
 * - args: `pendingCompletion.more[i].result.fnArgs` (a snooze or failure handing inline args back
 *   in an executor's report: `more`, the outcome, `result`) — deeper than `work.fnArgs` (0) and
 *   `handovers.tasks[i].fnArgs` (2);
 * - context: `deliveries.items[i].context` (2) — deeper than `work.onComplete.context` (1);
 * - returnValue: `deliveries.items[i].result.returnValue` and
 *   `pendingCompletion.more[i].result.returnValue` (3) — deeper than `work.state.result.returnValue`
 *   (2).
 */
export const INLINE_EMBEDDING: Record<ValueKind, number> = {
  args: 3,
  context: 2,
  returnValue: 3,
};
/** A value in a `payloads` row is one of the row's fields: nothing of the pool's above it. */
export const PAYLOAD_EMBEDDING = 0;

/** The deepest a value of `kind` may nest and still be kept inline in the pool's rows. */
export function inlineDepthLimit(kind: ValueKind): number {
  return DOCUMENT_NESTING_LIMIT - INLINE_EMBEDDING[kind];
}

/** The deepest any user value may nest: what a `payloads` row can hold. */
export const STORED_DEPTH_LIMIT = DOCUMENT_NESTING_LIMIT - PAYLOAD_EMBEDDING;

/** The size of a Convex value as Convex counts it (0 for undefined). Throws on a value that is not
 * a Convex value (a function, a class instance). */
export function valueSizeBytes(value: unknown): number {
  if (value === undefined) return 0;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- any value; Convex's own check
  return getConvexSize(value as any);
}

/** Measures a value (undefined measures as nothing). Throws on a value that is not a Convex value. */
export function measureValue(value: unknown): ValueMeasure {
  const measure: ValueMeasure = {
    bytes: valueSizeBytes(value),
    depth: 0,
    maxFields: 0,
    maxArrayLength: 0,
  };
  // Iterative, so that a value nested past any limit cannot overflow the stack.
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: at, depth } = stack.pop()!;
    if (typeof at !== "object" || at === null || at instanceof ArrayBuffer) continue;
    const level = depth + 1;
    if (level > measure.depth) measure.depth = level;
    if (Array.isArray(at)) {
      if (at.length > measure.maxArrayLength) measure.maxArrayLength = at.length;
      for (const element of at) stack.push({ value: element, depth: level });
    } else {
      const fields = Object.values(at).filter((field) => field !== undefined);
      if (fields.length > measure.maxFields) measure.maxFields = fields.length;
      for (const field of fields) stack.push({ value: field, depth: level });
    }
  }
  return measure;
}

/** True when a value so measured may stay in the pool's rows; otherwise it goes to a payload row. */
export function fitsInline(kind: ValueKind, measure: ValueMeasure): boolean {
  return measure.bytes <= INLINE_VALUE_BYTES && measure.depth <= inlineDepthLimit(kind);
}

/** Why a value so measured cannot be stored at all (even in a payload row of its own), as a
 * predicate ("is 1000001 bytes, over the limit of 1000000 bytes"), or undefined when it can.
 * `maxBytes`: the kind's own size limit, in bytes as Convex counts them. */
export function unstorableReason(measure: ValueMeasure, maxBytes: number): string | undefined {
  if (measure.bytes > maxBytes) {
    return `is ${measure.bytes} bytes, over the limit of ${maxBytes} bytes`;
  }
  if (measure.depth > STORED_DEPTH_LIMIT) {
    return `nests ${measure.depth} levels deep, over the limit of ${STORED_DEPTH_LIMIT}`;
  }
  if (measure.maxFields > OBJECT_FIELDS_LIMIT) {
    return `holds an object of ${measure.maxFields} fields, over the limit of ${OBJECT_FIELDS_LIMIT}`;
  }
  if (measure.maxArrayLength > ARRAY_ELEMENTS_LIMIT) {
    return `holds an array of ${measure.maxArrayLength} elements, over the limit of ${ARRAY_ELEMENTS_LIMIT}`;
  }
  return undefined;
}
