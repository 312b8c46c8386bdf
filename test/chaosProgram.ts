/**
 * What a chaos program of the model test (test/model.test.ts, FUZZ_CHAOS=1) draws beyond a plain
 * one: a job's values (arguments, context, return value, error message or data) as Convex sees
 * them — text, or arrays of integers, floats or bigints (9 bytes each to Convex, 2 to 25 as JSON),
 * of sizes from empty up to Convex's limits, and nested from shallow to past the 16 levels a
 * document holds — dedupe keys up to 4,096 characters, enqueues of up to 1,500 jobs in one
 * mutation due over seconds to minutes, `retry()` twice on a failed or canceled job, and faults of
 * the pool's own for the deployment-like backend (test/deployment.ts) to inject. Owns only the
 * arbitraries and the rules that follow from what was drawn.
 */
import fc from "fast-check";
import { WATCHDOG_INTERVAL_MS } from "../src/component/mainLoop/watchdog.js";
import {
  RECOVERY_INTERVAL_MS,
  RECOVERY_THRESHOLD_MS,
  TAKE_BACKS_FREE,
} from "../src/component/mainLoop/recovery.js";
import type { Fault, PoolFunction } from "./deployment.js";
import {
  CONVEX_LIMIT_BYTES_READ,
  CONVEX_LIMIT_BYTES_WRITTEN,
  CONVEX_LIMIT_DOCUMENTS_READ,
  CONVEX_LIMIT_DOCUMENTS_WRITTEN,
  CONVEX_LIMIT_FUNCTIONS_SCHEDULED,
  CONVEX_LIMIT_INDEX_RANGES,
} from "./passBudget.js";

/** How a job's drawn values are made (test/app/chaos.ts `valueOf`): "text", strings (as many
 * bytes to Convex as in JSON); "ints", "floats", "bigints": arrays of those (chunks of 8,000), 9
 * bytes each as Convex counts them, 2, up to 24 and about 25 bytes as JSON. A failing attempt
 * whose values are not text throws a ConvexError carrying its bytes as data. */
export type ValueForm = "text" | "ints" | "floats" | "bigints";

/** A job's values: their bytes as Convex counts them (padding of its args and context, its return
 * value, and the message or data of each failing attempt), their form, and how deep each nests
 * (objects and arrays, itself included; undefined: shallow). */
export type Sizes = {
  argsBytes: number;
  contextBytes: number;
  /** Undefined: the job returns its key. */
  returnBytes: number | undefined;
  errorBytes: number;
  form?: ValueForm;
  /** The args object's depth, a nested value in it included. */
  argsDepth?: number;
  /** The context object's depth. */
  contextDepth?: number;
  /** The return value's depth (it is then that nested value, not `returnBytes`). */
  returnDepth?: number;
};

/** The deepest a value may nest in a Convex document: what the pool can store of any value. */
export const STORED_DEPTH = 16;

/** Depths drawn: shallow, then around where the pool's rows embed values one to three levels
 * down (13 to 16), and past what any document holds (17, 20). */
const depth = fc.constantFrom(
  ...[undefined, undefined, undefined, undefined, 6],
  ...[13, 14, 14, 15, 15, 16, 17, 20],
);

/** The pool keeps args plus context up to this (bytes, Convex's limit on a function's arguments). */
export const MAX_PAYLOAD_BYTES = 1_000_000;
/** Room left in that budget for the job's own small fields. */
const PAYLOAD_SLACK = 2_000;
/** The pool keeps return values up to MAX_PAYLOAD_BYTES; larger ones fail the job. */
export const RETURN_OVER_LIMIT = 1_200_000;
/** Error messages are cut to 8 KiB with a note of how much was cut (docs/API-EXTENSIONS.md). */
export const MAX_STORED_ERROR = 8 * 1024;
/** What the note of a cut may add (a generous bound: the spec fixes the cut, not the note). */
export const CUT_NOTE_ALLOWANCE = 256;

export const sizes: fc.Arbitrary<Sizes> = fc
  .record({
    argsBytes: fc.constantFrom(0, 1_000, 9_000, 200_000, 600_000, 990_000),
    contextBytes: fc.constantFrom(0, 1_000, 9_000, 300_000, 990_000),
    // 35,000: inline by a JSON count when the value is integers (7.8 KB), not as Convex counts.
    returnBytes: fc.constantFrom(undefined, 0, 9_000, 35_000, 300_000, 990_000, RETURN_OVER_LIMIT),
    errorBytes: fc.constantFrom(0, 9_000, 100_000, 300_000, 1_000_000),
    form: fc.constantFrom<ValueForm>("text", "text", "ints", "floats", "bigints"),
    argsDepth: depth,
    contextDepth: depth,
    returnDepth: depth,
  })
  .map((s) => (s.form === "text" ? s : numbersCapped(s)))
  .map((s) => ({
    ...s,
    // Args plus context within the pool's limit: the context gives way.
    contextBytes: Math.max(
      0,
      Math.min(s.contextBytes, MAX_PAYLOAD_BYTES - PAYLOAD_SLACK - s.argsBytes),
    ),
  }));

/** The most bytes of one value drawn as numbers (but a return value over the limit): an array of
 * 33,000 numbers costs the test backend as much as a string of megabytes (every call copies it
 * element by element), and text already takes values to the limits. */
const NUMBERS_MAX_BYTES = 300_000;

function numbersCapped(s: Sizes): Sizes {
  const cap = (bytes: number) => Math.min(bytes, NUMBERS_MAX_BYTES);
  return {
    ...s,
    argsBytes: cap(s.argsBytes),
    contextBytes: cap(s.contextBytes),
    errorBytes: cap(s.errorBytes),
    returnBytes:
      s.returnBytes === undefined || s.returnBytes === RETURN_OVER_LIMIT
        ? s.returnBytes
        : cap(s.returnBytes),
  };
}

/** Dedupe keys: a short one, one of about 300 characters and one of 4,090 (a long url). */
export const DEDUPE_KEYS: Record<string, string> = {
  d1: "d1",
  d2: `d2/${"segment/".repeat(37)}`,
  d3: `https://example.com/${"a".repeat(4_070)}`,
};

/** Enqueue of many jobs in one mutation, job i due `firstDelayMs + i * spacingMs` from now. */
export type Bulk = {
  op: "bulk";
  n: number;
  /** "task": tasks of the test app's executor (test/app/tasks.ts `model`). */
  kind: "action" | "mutation" | "query" | "task";
  firstDelayMs: number;
  spacingMs: number;
  withOnComplete: boolean;
  /** Every job fails its one attempt with a message of this many bytes (a dependency down). */
  failWithBytes: number | undefined;
  /** Every job returns a value of this form and size (Convex bytes), if drawn: many small results
   * finishing together share delivery rows. */
  returns: { form: ValueForm; bytes: number } | undefined;
  /** The pool's maxParallelism from this enqueue on (above the start batch: the loop runs hot). */
  maxParallelism: number | undefined;
  /** A fault of the loop's armed right after the enqueue: a loop that only enqueue wake-ups took
   * out of idle, and then died, with no later enqueue to wake it (review finding 2). */
  faultAfter: Fault | undefined;
  /** Heavy loads only: job i runs under the pool key `${poolKeyPrefix}${i}`. */
  poolKeyPrefix?: string;
  /** Heavy loads only: a field name Convex refuses, in every job's arguments, return value or
   * error data (test/app/chaos.ts `enqueueSpread`). */
  fieldName?: { where: "args" | "result" | "errorData"; name: string };
};

/** The most jobs of a bulk of "a few dozen" (the common draw, and every one returning values). */
const FEW_DOZEN_JOBS = 60;

/** How many jobs a bulk whose jobs return drawn values has (one of a few dozen): from 10 to 60,
 * due within 10 ms of each other, so that a pass often settles more than 33 of them at once (H2:
 * 33 results of 35,000 bytes fill a delivery row past 1 MiB). 1,500 results of 35 KB each would
 * cost a program minutes of real time: hundreds or more jobs return their keys. */
const bulkReturnsJobs = fc.integer({ min: 10, max: FEW_DOZEN_JOBS });

/** Mostly a few dozen jobs; now and then hundreds; one bulk in seven more than 1,000 (the
 * largest cost seconds of real time each: about 13 ms a job). */
export const bulk: fc.Arbitrary<Bulk> = fc
  .record({
    op: fc.constant("bulk" as const),
    n: fc.oneof(
      { weight: 10, arbitrary: fc.integer({ min: 1, max: FEW_DOZEN_JOBS }) },
      { weight: 3, arbitrary: fc.integer({ min: 200, max: 400 }) },
      { weight: 2, arbitrary: fc.integer({ min: 1_001, max: 1_500 }) },
    ),
    kind: fc.constantFrom(
      "query" as const,
      "mutation" as const,
      "action" as const,
      "task" as const,
    ),
    firstDelayMs: fc.constantFrom(0, 500, 5_000),
    // Due together, or spread over seconds to minutes (1,500 jobs a second apart: 25 minutes).
    spacingMs: fc.constantFrom(0, 0, 10, 100, 1_000),
    withOnComplete: fc.constantFrom(true, true, true, false),
    failWithBytes: fc.constantFrom(undefined, undefined, 100, 300_000, 1_000_000),
    // Many small results finishing together: integers of 35,000 bytes are 7.8 KB as JSON, so a
    // JSON count would keep dozens of them in one delivery row (review H2).
    returns: fc.oneof(
      { weight: 1, arbitrary: fc.constant(undefined) },
      {
        weight: 2,
        arbitrary: fc.record({
          form: fc.constantFrom<ValueForm>(
            "text",
            "ints",
            "ints",
            "ints",
            "ints",
            "floats",
            "bigints",
          ),
          bytes: fc.constantFrom(1_000, 9_000, 35_000, 35_000, 35_000),
        }),
      },
    ),
    returnsJobs: bulkReturnsJobs,
    maxParallelism: fc.constantFrom(undefined, 50, 200),
    faultAfter: fc.option(
      fc.oneof(
        fc.record({
          kind: fc.constant("passThrows" as const),
          stage: fc.integer({ min: 1, max: 40 }),
        }),
        fc.record({ kind: fc.constant("commitFails" as const), fn: fc.constant("main" as const) }),
      ),
      { nil: undefined },
    ),
  })
  .map(({ returnsJobs, ...b }) =>
    b.returns === undefined
      ? b
      : b.n > FEW_DOZEN_JOBS
        ? { ...b, returns: undefined }
        : { ...b, n: returnsJobs, spacingMs: Math.min(b.spacingMs, 10) },
  );

const poolFunction = fc.constantFrom<PoolFunction>(
  "main",
  "main",
  "complete",
  "deliver",
  "worker",
  "check",
  "checkWakes",
  "sweep",
  "report",
);

/** The name the model test gives the deployment-like backend for its executor action (test/app/
 * tasks.ts `model`): an `actionDies` fault that names it hits an executor at one of its reports. */
export const EXECUTOR_ACTION = "executor";

/** One fault of the pool's own (test/deployment.ts `Fault`). */
export const fault: fc.Arbitrary<Fault> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant("commitFails" as const), fn: poolFunction }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("passThrows" as const),
      stage: fc.integer({ min: 1, max: 40 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("actionDies" as const),
      at: fc.integer({ min: 1, max: 3 }),
      after: fc.boolean(),
      mode: fc.constantFrom("hang" as const, "hang" as const, "throw" as const),
      noticedAfterMs: fc.constantFrom(0, 2_000, 20_000),
      // Whichever action comes first (a worker or an executor), or an executor: programs without
      // tasks have far more workers, and an executor's death is the one that takes many tasks.
      action: fc.constantFrom(undefined, undefined, EXECUTOR_ACTION),
    }),
  },
);

/** The backend's latest start of a scheduled function (test/deployment.ts default). */
export const MAX_START_DELAY_MS = 3_000;

/**
 * How long after a loop pass failed (or, if later, after the last pass a fault failed: each is a
 * death of its own) another must have committed, while the pool has work: the watchdog's
 * interval, its promise. Its checks come twice per interval, so a check that starts
 * late and the pass it schedules (each up to MAX_START_DELAY_MS late) still fit.
 */
export const STALL_LIMIT_MS = WATCHDOG_INTERVAL_MS;

/** How long the model lets a chaos program settle after its last job is due. */
export const SETTLE_MS = 6 * 60_000;

/**
 * How long a task of the executor that fails at every start (a `brokenTask`) may keep a
 * maxParallelism slot before it ends: each of its executors' failures is found by a recovery
 * cycle (its interval, its threshold, and the cycle's and the executor's late starts), the first
 * TAKE_BACKS_FREE of them give it back free and each further one is an attempt (with a backoff of
 * well under a second). The task keeps its place in line, so at maxParallelism 1 the broken tasks
 * of a program take the slot one after another, ahead of the jobs due after them: their times add
 * up (seed 1174222989, program 59: four broken tasks held the only slot for 9.5 minutes, then 18
 * jobs drained under a rate limit of 1 start a second).
 */
export function brokenTaskDrainMs(maxAttempts: number): number {
  const cycleMs = RECOVERY_INTERVAL_MS + RECOVERY_THRESHOLD_MS + 2 * MAX_START_DELAY_MS + 1_000;
  return (TAKE_BACKS_FREE + maxAttempts) * cycleMs;
}

/**
 * A heavy load, drawn by about one chaos program in HEAVY_LOAD_ONE_IN: what meets Convex's count
 * limits, which no common draw reaches (review 2026-11-27: a reviewer found H1 by hand).
 *
 * - `failedDeliveries`: thousands of mutations with onComplete, finishing a hundred at a time (so
 *   delivery rows of 50 callbacks), while every deliverer fails for a few seconds (H1: the check
 *   that splits failed rows scheduled 2,500 functions in one pass).
 * - `massCancel`: thousands of jobs, due in a minute, canceled by one cancelAll.
 * - `manyKeysPaused`: thousands of keys, each paused (in mutations of KEYS_PAUSED_PER_MUTATION),
 *   with one job each coming due while paused, then all resumed.
 * - `refusedFieldNames`: a few dozen jobs whose arguments, return value or error data hold a
 *   field name Convex refuses (non-ASCII, or starting with `$`).
 */
export type HeavyLoad =
  | { op: "failedDeliveries"; n: number; failForMs: number }
  | { op: "massCancel"; n: number; kind: "mutation" | "action"; withOnComplete: boolean }
  | { op: "manyKeysPaused"; keys: number; holdMs: number }
  | {
      op: "refusedFieldNames";
      n: number;
      kind: "action" | "mutation" | "query" | "task";
      where: "args" | "result" | "errorData";
      name: string;
    };

/** One chaos program in this many draws a heavy load: each costs tens of seconds of real time. */
export const HEAVY_LOAD_ONE_IN = 20;
/** Keys paused or resumed per mutation: one pause is a few index ranges and writes of the pool's,
 * so a mutation of 500 stays well within a transaction's limits. */
export const KEYS_PAUSED_PER_MUTATION = 500;
/** Jobs per bulk-enqueue mutation of a heavy load (as the common bulk's most). */
export const HEAVY_JOBS_PER_MUTATION = 1_250;

export const heavyLoad: fc.Arbitrary<HeavyLoad> = fc.oneof(
  fc.record({
    op: fc.constant("failedDeliveries" as const),
    n: fc.integer({ min: 1_100, max: 3_000 }),
    failForMs: fc.constantFrom(2_000, 4_000, 6_000),
  }),
  fc.record({
    op: fc.constant("massCancel" as const),
    n: fc.constantFrom(2_000, 5_000),
    kind: fc.constantFrom("mutation" as const, "action" as const),
    withOnComplete: fc.boolean(),
  }),
  fc.record({
    op: fc.constant("manyKeysPaused" as const),
    keys: fc.constantFrom(1_000, 2_500, 5_000),
    holdMs: fc.constantFrom(1_000, 5_000),
  }),
  fc.record({
    op: fc.constant("refusedFieldNames" as const),
    n: fc.integer({ min: 1, max: 40 }),
    kind: fc.constantFrom(
      "action" as const,
      "mutation" as const,
      "query" as const,
      "task" as const,
    ),
    where: fc.constantFrom("args" as const, "result" as const, "errorData" as const),
    name: fc.constantFrom("größe", "$x"),
  }),
);

/** A program's heavy load, if drawn, and where among its operations it goes (an index, taken
 * modulo their number plus one). Drawn after the rest of the program, so that the programs of a
 * seed stay what they were before heavy loads (replays of older findings hold). */
export const heavyDraw: fc.Arbitrary<{ load: HeavyLoad; at: number } | undefined> = fc.oneof(
  { weight: HEAVY_LOAD_ONE_IN - 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.record({ load: heavyLoad, at: fc.nat({ max: 11 }) }) },
);

/**
 * Convex's per-transaction count limits, tightened for about one chaos program in
 * TIGHT_LIMITS_ONE_IN so that a common program's loop passes meet them. At the real limits only
 * thousands of jobs at once reach a count (the heavy loads above, and of those only the failed
 * deliveries: every other stage takes batches of 100, sized to stay under the real limits), so
 * the budget's stops at the start, hand-over, cancel, delivery, recovery and sweep stages were
 * reached only by test/stageBudgets.test.ts's hand-made loads. Tightened, the budget (a share of
 * the limits the platform reports) shrinks with them and every stage must stop within it and go
 * on in the next pass, under the program's faults, with every invariant kept. The app's own
 * mutations meet the same limits, so programs with a heavy load do not draw them, a bulk enqueue
 * goes in several mutations under them (test/model.test.ts `bulkChunk`), and none is tighter
 * than one operation of a program needs (an enqueue of a
 * megabyte payload writes about 1 MiB; a cancelAll of a program's few dozen jobs writes a few
 * rows each; the model's heaviest onComplete reads 700 rows or writes 400).
 */
export type TightLimits = Record<
  | "functionsScheduled"
  | "databaseQueries"
  | "documentsRead"
  | "documentsWritten"
  | "bytesRead"
  | "bytesWritten",
  number
>;
/** One chaos program in this many draws tightened limits. */
export const TIGHT_LIMITS_ONE_IN = 10;
const MEBIBYTE = 1 << 20;
/** Tightened limits of one of two kinds: all six at once (`everyLimitTightened`), where the
 * schedule limit, the tightest, stops a pass before any other; or one squeezed alone
 * (`oneLimitSqueezed`), the others at Convex's, so that the passes meet that one. */
export const tightLimits: fc.Arbitrary<TightLimits> = fc
  .boolean()
  .chain((squeeze) => (squeeze ? oneLimitSqueezed : everyLimitTightened));

/** Convex's per-transaction limits (convex-test's defaults). */
export const REAL_LIMITS: TightLimits = {
  functionsScheduled: CONVEX_LIMIT_FUNCTIONS_SCHEDULED,
  databaseQueries: CONVEX_LIMIT_INDEX_RANGES,
  documentsRead: CONVEX_LIMIT_DOCUMENTS_READ,
  documentsWritten: CONVEX_LIMIT_DOCUMENTS_WRITTEN,
  bytesRead: CONVEX_LIMIT_BYTES_READ,
  bytesWritten: CONVEX_LIMIT_BYTES_WRITTEN,
};

/** Each limit squeezed as far as the program's own operations allow: above the deliverer's
 * reserve (DELIVERY_RESERVE: 200 reads, 100 writes, 50 index ranges, 3 MiB read, 2 MiB written)
 * with room beside it for the model's heaviest onComplete (700 reads, 400 writes) and a callback
 * of a megabyte result; above a cancelAll's 500 jobs a transaction (one write and about two index
 * ranges each) and the 250 filler rows of a seeding mutation. The loop's share (half) of each is
 * then below what its stages' batches can take in one pass (100 starts of three or four writes
 * and reads each, with their keys' rows; 50 completion rows and their jobs). */
export const SQUEEZED_LIMITS: Partial<TightLimits> = {
  // (Not the schedule limit: with every limit tightened it is already the one passes meet.)
  databaseQueries: 1_200,
  documentsRead: 1_200,
  documentsWritten: 700,
  bytesRead: 5 * MEBIBYTE,
  bytesWritten: 3 * MEBIBYTE,
};

const oneLimitSqueezed: fc.Arbitrary<TightLimits> = fc
  .constantFrom(...(Object.keys(SQUEEZED_LIMITS) as Array<keyof TightLimits>))
  .map((metric) => ({ ...REAL_LIMITS, [metric]: SQUEEZED_LIMITS[metric] }));

const everyLimitTightened: fc.Arbitrary<TightLimits> = fc.record({
  // Above what a deliverer keeps back for itself (DELIVERY_RESERVE: 52 schedules, 100 writes,
  // 50 index ranges, 3 MiB read, 2 MiB written): the pool's reserves are sized against the real
  // limits, so a limit below one would fail every callback, not test the budget.
  functionsScheduled: fc.constantFrom(60, 120, 240),
  // (A cancelAll marks 500 jobs a transaction, about 2 index ranges and 2 writes each.)
  databaseQueries: fc.constantFrom(1_200, 2_400),
  // Above what one onComplete of the model's heavy handlers does (700 reads, 400 writes) beside
  // that reserve.
  documentsRead: fc.constantFrom(3_000, 6_000),
  documentsWritten: fc.constantFrom(1_200, 2_400),
  // And room for a callback of a megabyte result.
  bytesRead: fc.constantFrom(6 * MEBIBYTE, 8 * MEBIBYTE),
  bytesWritten: fc.constantFrom(5 * MEBIBYTE, 8 * MEBIBYTE),
});
/** A program's tightened limits, if drawn (after everything else, so that a seed's programs stay
 * what they were before: `fc.constant` draws nothing, so a replay that leaves them out holds). */
export const tightLimitsDraw: fc.Arbitrary<TightLimits | undefined> = fc.oneof(
  { weight: TIGHT_LIMITS_ONE_IN - 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: tightLimits },
);
