/**
 * The bad-input catalogue: every public component function and every client method, called with each
 * kind of invalid argument (wrong type, NaN, ±Infinity, negative, fractional where a whole number is
 * needed, over-size, malformed ids, both runAt and runAfter, unknown field names). Each case must be
 * rejected with an error that names the argument, and must leave every table unchanged: all component
 * tables, the component's scheduled functions and the app's tables are compared before and after.
 *
 * Client cases go through `pool.callClient` (a mutation, or `callClientQuery` for status) with raw
 * arguments, so the real client path runs; component cases go through `pool.callComponent`, straight
 * to the component function, for what the client would refuse earlier or never sends. In arguments,
 * "$ref:jobs.action" stands for a function reference and "$handle:jobs.action" for a function handle.
 *
 * Time: the virtual clock is never advanced here. One backend is seeded in `beforeAll` with a job in
 * each state (running, pending, delayed with a large payload, finished, cancel requested) and shared
 * by all cases: a case that wrote anything would fail its own before/after comparison.
 *
 * Wrong-type cases (`typeOnly`) are rejected by Convex's argument validator. A deployment's message
 * names the path (`Path: .config.maxParallelism`); convex-test's omits it and names only the expected
 * type and the value, so those cases assert the value and type instead of the name.
 */
import { anyApi } from "convex/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { componentRows, enqueue, inComponent, runFor, runUntil, setup, type T } from "./helpers.js";

type Call =
  | { via: "client"; method: string; poolOptions?: object; args: unknown[] }
  | { via: "component"; fn: string; args: unknown };

type Case = {
  /** What is wrong, e.g. "runAt NaN". */
  name: string;
  call: Call;
  /** The error message must match this: the argument's name (or, for `typeOnly`, the value). */
  names: RegExp;
  /** Rejected by Convex's argument validator for a wrong type (see the header). */
  typeOnly?: boolean;
};

const QUERIES = new Set([
  "groupStatus",
  "getSchedule",
  "listSchedules",
  "schedules.get",
  "schedules.list",
  "status",
  "statusBatch",
  "info",
  "lib.info",
  "keyStatus",
  "lib.status",
  "lib.statusBatch",
  "keys.keyStatus",
  "list",
  "stats",
  "inspect.list",
  "inspect.stats",
  "inspect.overview",
]);

/** Filled in by `beforeAll`: ids of the seeded backend. */
const seeded = { pendingId: "", finishedId: "", otherTableId: "" };
const PENDING_ID = "$seed:pendingId";
const FINISHED_ID = "$seed:finishedId";
const OTHER_TABLE_ID = "$seed:otherTableId";

function withSeedIds(value: unknown): unknown {
  if (value === PENDING_ID) return seeded.pendingId;
  if (value === FINISHED_ID) return seeded.finishedId;
  if (value === OTHER_TABLE_ID) return seeded.otherTableId;
  if (Array.isArray(value)) return value.map(withSeedIds);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, withSeedIds(x)]));
  }
  return value;
}

async function call(t: T, c: Call): Promise<unknown> {
  if (c.via === "client") {
    const args = { method: c.method, poolOptions: c.poolOptions, args: withSeedIds(c.args) };
    return QUERIES.has(c.method)
      ? await t.query(anyApi.pool.callClientQuery, args)
      : await t.mutation(anyApi.pool.callClient, args);
  }
  const args = { fn: c.fn, args: withSeedIds(c.args) };
  return QUERIES.has(c.fn)
    ? await t.query(anyApi.pool.callComponentQuery, args)
    : await t.mutation(anyApi.pool.callComponent, args);
}

/** Every component table, the component's scheduled functions, and the app's tables. */
async function allRows(t: T) {
  const app = await t.run(async (ctx: any) => ({
    effects: await ctx.db.query("effects").collect(),
    completions: await ctx.db.query("completions").collect(),
  }));
  return { component: await componentRows(t), app };
}

const BIG = "y".repeat(1_000_001);
const JOB = {
  action: "$ref:jobs.action",
  mutation: "$ref:jobs.mutation",
  query: "$ref:jobs.query",
};
const typeError = (type: string, got: string) =>
  new RegExp(`Validator error: Expected \`?${type}\`?, got \`${got}\``);

// ---------------------------------------------------------------------------------------------------
// Invalid values, each with the argument name its error must carry (relative to the option object).

/** Invalid `runAt` / `runAfter` options (and over-size args or context), for every enqueue method. */
const SCHEDULE_CASES: Array<[string, object, string]> = [
  ["runAt NaN", { runAt: NaN }, "runAt"],
  ["runAt Infinity", { runAt: Infinity }, "runAt"],
  ["runAt -Infinity", { runAt: -Infinity }, "runAt"],
  ["runAt a string", { runAt: "soon" }, "runAt"],
  ["runAt null", { runAt: null }, "runAt"],
  ["runAfter NaN", { runAfter: NaN }, "runAfter"],
  ["runAfter Infinity", { runAfter: Infinity }, "runAfter"],
  ["runAfter a string", { runAfter: "1s" }, "runAfter"],
  ["both runAt and runAfter", { runAt: 0, runAfter: 5 }, "runAt/runAfter"],
  ["context over the size limit", { context: BIG, onComplete: "$ref:jobs.onComplete" }, "fnArgs"],
];

/** Invalid retry behaviors (actions only), as `retry` at enqueue or `retryBehavior` in the component. */
const RETRY_CASES: Array<[string, object, string]> = [
  ["maxAttempts 0", { maxAttempts: 0, initialBackoffMs: 10, base: 2 }, "maxAttempts"],
  ["maxAttempts negative", { maxAttempts: -1, initialBackoffMs: 10, base: 2 }, "maxAttempts"],
  ["maxAttempts fractional", { maxAttempts: 2.5, initialBackoffMs: 10, base: 2 }, "maxAttempts"],
  ["maxAttempts NaN", { maxAttempts: NaN, initialBackoffMs: 10, base: 2 }, "maxAttempts"],
  ["maxAttempts Infinity", { maxAttempts: Infinity, initialBackoffMs: 10, base: 2 }, "maxAttempts"],
  [
    "initialBackoffMs negative",
    { maxAttempts: 2, initialBackoffMs: -1, base: 2 },
    "initialBackoffMs",
  ],
  ["initialBackoffMs NaN", { maxAttempts: 2, initialBackoffMs: NaN, base: 2 }, "initialBackoffMs"],
  [
    "initialBackoffMs Infinity",
    { maxAttempts: 2, initialBackoffMs: Infinity, base: 2 },
    "initialBackoffMs",
  ],
  ["initialBackoffMs missing", { maxAttempts: 2, base: 2 }, "initialBackoffMs"],
  ["base < 1", { maxAttempts: 2, initialBackoffMs: 10, base: 0.5 }, "base"],
  ["base 0", { maxAttempts: 2, initialBackoffMs: 10, base: 0 }, "base"],
  ["base negative", { maxAttempts: 2, initialBackoffMs: 10, base: -2 }, "base"],
  ["base NaN", { maxAttempts: 2, initialBackoffMs: 10, base: NaN }, "base"],
  ["base Infinity", { maxAttempts: 2, initialBackoffMs: 10, base: Infinity }, "base"],
  ...(
    [
      ["negative", -1],
      ["NaN", NaN],
      ["Infinity", Infinity],
    ] as Array<[string, unknown]>
  ).map(([name, maxBackoffMs]): [string, object, string] => [
    `maxBackoffMs ${name}`,
    { maxAttempts: 2, initialBackoffMs: 10, base: 2, maxBackoffMs },
    "maxBackoffMs",
  ]),
];

/** Invalid `maxParallelism` values (constructor, config.update, the config an enqueue carries). */
const PARALLELISM_CASES: Array<[string, unknown]> = [
  ["negative", -1],
  ["fractional", 1.5],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
];

/** Invalid `statusTtl` values. */
const TTL_CASES: Array<[string, unknown]> = [
  ["negative", -1],
  ["NaN", NaN],
  ["-Infinity", -Infinity],
];

/** Malformed WorkIds. */
const BAD_IDS: Array<[string, string]> = [
  ["not an id", "not-a-work-id"],
  ["empty", ""],
  ["an id of another table", OTHER_TABLE_ID],
];

/** Invalid `limit` values of cancelAll. */
const LIMIT_CASES: Array<[string, unknown]> = [
  ["0", 0],
  ["negative", -1],
  ["fractional", 1.5],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
  ["over 1,000", 1001],
];

/** Invalid keys (1 to 256 characters). */
const KEY_CASES: Array<[string, unknown]> = [
  ["empty", ""],
  ["of 257 characters", "k".repeat(257)],
];

/** Invalid dedupe keys (1 to 4,096 characters). */
const DEDUPE_KEY_CASES: Array<[string, unknown]> = [
  ["empty", ""],
  ["of 4,097 characters", "d".repeat(4097)],
];

/** Invalid page sizes for `list` (whole number from 1 to 1,000). */
const PAGE_SIZE_CASES: Array<[string, unknown]> = [
  ["0", 0],
  ["negative", -1],
  ["fractional", 1.5],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["over 1,000", 1001],
];

/** Invalid key parallelism values (whole number ≥ 1). */
const KEY_PARALLELISM_CASES: Array<[string, unknown]> = [
  ["0", 0],
  ["negative", -1],
  ["fractional", 1.5],
  ["NaN", NaN],
  ["Infinity", Infinity],
];

/** Invalid rate limits (both numbers whole and ≥ 1), with the field each breaks. */
const RATE_LIMIT_CASES: Array<[string, unknown, string]> = [
  ["starts 0", { starts: 0, periodMs: 1000 }, "rateLimit.starts"],
  ["starts fractional", { starts: 1.5, periodMs: 1000 }, "rateLimit.starts"],
  ["starts NaN", { starts: NaN, periodMs: 1000 }, "rateLimit.starts"],
  ["periodMs 0", { starts: 5, periodMs: 0 }, "rateLimit.periodMs"],
  ["periodMs negative", { starts: 5, periodMs: -1000 }, "rateLimit.periodMs"],
  ["periodMs Infinity", { starts: 5, periodMs: Infinity }, "rateLimit.periodMs"],
];

/** Bad shares for `setKeyShare` (API-EXTENSIONS section 13), with the argument each names. */
const KEY_SHARE_CASES: Array<[string, unknown, string]> = [
  ["weight 0", { weight: 0 }, "share.weight"],
  ["weight 101", { weight: 101 }, "share.weight"],
  ["weight fractional", { weight: 1.5 }, "share.weight"],
  ["reserve negative", { reserve: -1 }, "share.reserve"],
  ["reserve 1001", { reserve: 1001 }, "share.reserve"],
  ["reserve fractional", { weight: 2, reserve: 0.5 }, "share.reserve"],
];

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** The pool's own message for a bad argument: "workpool: invalid <argument>: <rule> (got ...)". */
const named = (argument: string) => new RegExp(`invalid ${esc(argument)}(?![\\w.[])`);

// ---------------------------------------------------------------------------------------------------
// The client's methods.

function clientCases(): Case[] {
  const cases: Case[] = [];
  const client = (method: string, args: unknown[], poolOptions?: object): Call => ({
    via: "client",
    method,
    args,
    poolOptions,
  });

  // The constructor (`method: "constructor"` only constructs; every method constructs first).
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `new Workpool: maxParallelism ${what}`,
      call: client("constructor", [], { maxParallelism: value }),
      names: named("maxParallelism"),
    });
  }
  cases.push(
    {
      name: "new Workpool: maxParallelism a string",
      call: client("constructor", [], { maxParallelism: "3" }),
      names: named("maxParallelism"),
    },
    {
      name: "new Workpool: maxParallelism null",
      call: client("constructor", [], { maxParallelism: null }),
      names: named("maxParallelism"),
    },
    {
      name: "new Workpool: statusTtl a string",
      call: client("constructor", [], { statusTtl: "1d" }),
      names: named("statusTtl"),
    },
    {
      name: "new Workpool: defaultRetryBehavior a string",
      call: client("constructor", [], { defaultRetryBehavior: "often" }),
      names: named("defaultRetryBehavior.maxAttempts"),
    },
    {
      name: "new Workpool (before enqueueAction): maxParallelism negative",
      call: client("enqueueAction", [JOB.action, { key: "x" }], { maxParallelism: -1 }),
      names: named("maxParallelism"),
    },
    {
      name: "new Workpool (before cancel): statusTtl negative",
      call: client("cancel", [PENDING_ID], { statusTtl: -1 }),
      names: named("statusTtl"),
    },
  );
  for (const [what, value, argument] of RATE_LIMIT_CASES) {
    cases.push({
      name: `new Workpool: rateLimit ${what}`,
      call: client("constructor", [], { rateLimit: value }),
      names: named(argument),
    });
  }
  for (const [what, value, argument] of RATE_LIMIT_CASES) {
    cases.push({
      name: `new Workpool: keyRateLimit ${what}`,
      call: client("constructor", [], { keyRateLimit: value }),
      names: named(argument.replace("rateLimit", "keyRateLimit")),
    });
  }
  cases.push({
    name: "new Workpool: fairness not share or due",
    call: client("constructor", [], { fairness: "fair" }),
    names: named("fairness"),
  });
  for (const [what, value] of KEY_PARALLELISM_CASES) {
    cases.push({
      name: `new Workpool: keyParallelism ${what}`,
      call: client("constructor", [], { keyParallelism: value }),
      names: named("keyParallelism"),
    });
  }
  for (const [what, value] of TTL_CASES) {
    cases.push({
      name: `new Workpool: statusTtl ${what}`,
      call: client("constructor", [], { statusTtl: value }),
      names: named("statusTtl"),
    });
  }
  for (const [what, behavior, field] of RETRY_CASES) {
    cases.push({
      name: `new Workpool: defaultRetryBehavior ${what}`,
      call: client("constructor", [], { defaultRetryBehavior: behavior }),
      names: named(`defaultRetryBehavior.${field}`),
    });
  }
  // The constructor accepts these; the error comes only at the first call, and does not name the
  // option (a validator error for logLevel; "invalid retryBehavior.maxAttempts ... (got undefined)"
  // for retryActionsByDefault).
  cases.push(
    {
      name: "new Workpool: logLevel unknown",
      call: client("constructor", [], { logLevel: "LOUD" }),
      names: named("logLevel"),
    },
    {
      name: "new Workpool: retryActionsByDefault not a boolean",
      call: client("constructor", [], { retryActionsByDefault: "yes" }),
      names: named("retryActionsByDefault"),
    },
  );

  // Every enqueue method, single and batch (a batch of one, and of three where the error names the
  // item: items[0]).
  const forms: Array<{ kind: keyof typeof JOB; method: string; size: number }> = [];
  for (const kind of ["action", "mutation", "query"] as const) {
    const cap = kind[0].toUpperCase() + kind.slice(1);
    forms.push({ kind, method: `enqueue${cap}`, size: 1 });
    forms.push({ kind, method: `enqueue${cap}Batch`, size: 1 });
    forms.push({ kind, method: `enqueue${cap}Batch`, size: 3 });
  }
  for (const { kind, method, size } of forms) {
    const batch = method.endsWith("Batch");
    const label = batch ? `${method} of ${size}` : method;
    const prefix = size > 1 ? "items[0]." : "";
    const argsOf = (argsList: object[]) => (batch ? argsList : argsList[0]);
    const small = Array.from({ length: size }, (_, i) => ({ key: `bad${i}` }));
    const enqueueCall = (options: object, argsList: object[] = small) =>
      client(method, [JOB[kind], argsOf(argsList), options]);
    for (const [what, options, argument] of SCHEDULE_CASES) {
      cases.push({
        name: `${label}: ${what}`,
        call: enqueueCall(options),
        names: named(`${prefix}${argument}`),
      });
    }
    for (const [what, key] of KEY_CASES) {
      cases.push({
        name: `${label}: key ${what}`,
        call: enqueueCall({ key }),
        names: named(`${prefix}key`),
      });
    }
    if (batch) {
      cases.push({
        name: `${label}: a dedupeKey (batches do not dedupe)`,
        call: enqueueCall({ dedupeKey: "doc-1" }),
        names: named("dedupeKey"),
      });
    } else {
      for (const [what, dedupeKey] of DEDUPE_KEY_CASES) {
        cases.push({
          name: `${label}: dedupeKey ${what}`,
          call: enqueueCall({ dedupeKey }),
          names: named("dedupeKey"),
        });
      }
      cases.push(
        {
          name: `${label}: onDuplicate without a dedupeKey`,
          call: enqueueCall({ onDuplicate: "replace" }),
          names: named("onDuplicate"),
        },
        {
          name: `${label}: onDuplicate neither keep nor replace`,
          call: enqueueCall({ dedupeKey: "doc-1", onDuplicate: "merge" }),
          names: named("onDuplicate"),
        },
      );
    }
    for (const priority of ["urgent", "HIGH", 1]) {
      cases.push({
        name: `${label}: priority ${JSON.stringify(priority)}`,
        call: enqueueCall({ priority }),
        names: named(`${prefix}priority`),
      });
    }
    // Over-size arguments: in the last item, so a batch's error names that item.
    const last = size - 1;
    const bigArgs = small.map((args, i) => (i === last ? { ...args, value: BIG } : args));
    cases.push({
      name: `${label}: args over the size limit`,
      call: enqueueCall({}, bigArgs),
      names: named(`${size > 1 ? `items[${last}].` : ""}fnArgs`),
    });
    if (kind === "action") {
      for (const [what, behavior, field] of RETRY_CASES) {
        cases.push({
          name: `${label}: retry ${what}`,
          call: enqueueCall({ retry: behavior }),
          names: named(`${prefix}retryBehavior.${field}`),
        });
      }
      cases.push({
        name: `${label}: retry with an unknown field`,
        call: enqueueCall({ retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2, jitter: 1 } }),
        names: /Unexpected field `jitter`/,
      });
      // Rejected as "invalid retryBehavior.maxAttempts ... (got undefined)": `retry` is not named.
      cases.push({
        name: `${label}: retry neither a boolean nor a behavior`,
        call: enqueueCall({ retry: "yes" }),
        names: named("retry"),
      });
    }
    cases.push({
      name: `${label}: name not a string`,
      call: enqueueCall({ name: 5 }),
      names: named(`${prefix}name`),
      typeOnly: true,
    });
    for (const [what, name] of [
      ["empty", ""],
      ["of 1,025 characters", "n".repeat(1025)],
    ]) {
      cases.push({
        name: `${label}: name ${what}`,
        call: enqueueCall({ name }),
        names: named(`${prefix}name`),
      });
    }
    // Accepted and written; the job fails when it runs.
    cases.push({
      name: `${label}: args not an object`,
      call: client(method, [JOB[kind], batch ? small.map(() => 5) : 5, {}]),
      names: named(`${size > 1 ? "items[0]." : ""}fnArgs`),
    });
  }

  // cancel, status, statusBatch: malformed ids (the component checks them for the client).
  for (const [what, id] of BAD_IDS) {
    cases.push(
      { name: `cancel: id ${what}`, call: client("cancel", [id]), names: named("id") },
      { name: `status: id ${what}`, call: client("status", [id]), names: named("id") },
      {
        name: `statusBatch: ids[1] ${what}`,
        call: client("statusBatch", [[PENDING_ID, id, FINISHED_ID]]),
        names: named("ids[1]"),
      },
    );
  }
  cases.push(
    {
      name: "cancel: id a number",
      call: client("cancel", [5]),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "status: id a number",
      call: client("status", [5]),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    { name: "retry: id not a WorkId", call: client("retry", ["not-an-id"]), names: named("id") },
    { name: "info: id not a WorkId", call: client("info", ["not-an-id"]), names: named("id") },
    { name: "retry: a pending job", call: client("retry", [PENDING_ID]), names: named("id") },
    {
      name: "retry: a job that succeeded",
      call: client("retry", [FINISHED_ID]),
      names: named("id"),
    },
    {
      name: "retry: an id of another table",
      call: client("retry", [OTHER_TABLE_ID]),
      names: named("id"),
    },
    {
      name: "statusBatch: ids not an array",
      call: client("statusBatch", ["not-an-array"]),
      names: typeError("Array", "not-an-array"),
      typeOnly: true,
    },
    {
      name: "statusBatch: over 1,000 ids",
      call: client("statusBatch", [Array.from({ length: 1001 }, () => PENDING_ID)]),
      names: named("ids"),
    },
  );

  // cancelAll: its limit.
  for (const [what, limit] of LIMIT_CASES) {
    cases.push({
      name: `cancelAll: limit ${what}`,
      call: client("cancelAll", [{ limit }]),
      names: named("limit"),
    });
  }
  cases.push({
    name: "cancelAll: limit a string",
    call: client("cancelAll", [{ limit: "10" }]),
    names: typeError("number", "10"),
    typeOnly: true,
  });

  // Groups (section 12).
  cases.push(
    {
      name: "createGroup: name over 1,024 characters",
      call: client("createGroup", [{ name: "n".repeat(1025) }]),
      names: named("name"),
    },
    {
      name: "closeGroup: id not a GroupId",
      call: client("closeGroup", ["not-a-group"]),
      names: named("id"),
    },
    {
      name: "closeGroup: a WorkId",
      call: client("closeGroup", [PENDING_ID]),
      names: named("id"),
    },
    {
      name: "groupStatus: id not a GroupId",
      call: client("groupStatus", ["not-a-group"]),
      names: named("id"),
    },
    {
      name: "cancelGroup: id not a GroupId",
      call: client("cancelGroup", ["not-a-group"]),
      names: named("id"),
    },
    {
      name: "cancelGroup: limit 0",
      call: client("cancelGroup", ["not-a-group", { limit: 0 }]),
      names: named("limit"),
    },
    {
      name: "enqueueAction: group not a GroupId",
      call: client("enqueueAction", [JOB.action, { key: "x" }, { group: "not-a-group" }]),
      names: named("group"),
    },
    {
      name: "enqueueActionBatch: group not a GroupId",
      call: client("enqueueActionBatch", [
        JOB.action,
        [{ key: "x" }, { key: "y" }],
        { group: "g" },
      ]),
      names: named("items[0].group"),
    },
  );

  // Manual completion (section 11): the enqueue option and `complete`.
  cases.push(
    {
      name: "enqueueQuery: manualCompletion on a query",
      call: client("enqueueQuery", [
        JOB.query,
        { key: "x" },
        { manualCompletion: { timeoutMs: 5000 } },
      ]),
      names: named("manualCompletion"),
    },
    ...[999, 7 * 24 * 3600_000 + 1, 1500.5, Number.NaN, Number.POSITIVE_INFINITY].map(
      (timeoutMs) => ({
        name: `enqueueAction: manualCompletion.timeoutMs ${timeoutMs}`,
        call: client("enqueueAction", [
          JOB.action,
          { key: "x" },
          { manualCompletion: { timeoutMs } },
        ]),
        names: named("manualCompletion.timeoutMs"),
      }),
    ),
    {
      name: "complete: id not a WorkId",
      call: client("complete", ["not-an-id", { kind: "success" }]),
      names: named("id"),
    },
    {
      name: "complete: an outcome of another kind",
      call: client("complete", [PENDING_ID, { kind: "canceled" }]),
      names: named("outcome"),
    },
    {
      name: "complete: a failure without its error",
      call: client("complete", [PENDING_ID, { kind: "failed" }]),
      names: named("outcome"),
    },
    {
      name: "complete: a returnValue over the size limit",
      call: client("complete", [
        PENDING_ID,
        { kind: "success", returnValue: "r".repeat(1_100_000) },
      ]),
      names: named("returnValue"),
    },
    {
      name: "complete: attempt fractional",
      call: client("complete", [PENDING_ID, { kind: "success" }, { attempt: 0.5 }]),
      names: named("options.attempt"),
    },
  );

  // Keys and pause: the key, and a key's parallelism.
  for (const [what, key] of KEY_CASES) {
    cases.push(
      {
        name: `cancelAll: key ${what}`,
        call: client("cancelAll", [{ key }]),
        names: named("key"),
      },
      {
        name: `setKeyParallelism: key ${what}`,
        call: client("setKeyParallelism", [key, 2]),
        names: named("key"),
      },
      { name: `keyStatus: key ${what}`, call: client("keyStatus", [key]), names: named("key") },
      { name: `pause: key ${what}`, call: client("pause", [{ key }]), names: named("key") },
      { name: `resume: key ${what}`, call: client("resume", [{ key }]), names: named("key") },
    );
  }
  for (const [what, value] of KEY_PARALLELISM_CASES) {
    cases.push({
      name: `setKeyParallelism: parallelism ${what}`,
      call: client("setKeyParallelism", ["k", value]),
      names: named("parallelism"),
    });
  }
  // A key's share and rate limit (section 13).
  for (const [what, key] of KEY_CASES) {
    cases.push(
      {
        name: `setKeyShare: key ${what}`,
        call: client("setKeyShare", [key, { weight: 2 }]),
        names: named("key"),
      },
      {
        name: `setKeyRateLimit: key ${what}`,
        call: client("setKeyRateLimit", [key, { starts: 1, periodMs: 1000 }]),
        names: named("key"),
      },
    );
  }
  for (const [what, share, argument] of KEY_SHARE_CASES) {
    cases.push({
      name: `setKeyShare: ${what}`,
      call: client("setKeyShare", ["k", share]),
      names: named(argument),
    });
  }
  for (const [what, value, argument] of RATE_LIMIT_CASES) {
    cases.push({
      name: `setKeyRateLimit: rateLimit ${what}`,
      call: client("setKeyRateLimit", ["k", value]),
      names: named(argument),
    });
  }
  cases.push({
    name: "setKeyParallelism: parallelism a string",
    call: client("setKeyParallelism", ["k", "2"]),
    names: /Validator error/,
    typeOnly: true,
  });
  // The operator's maxParallelism: the client checks it before calling the component.
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `setMaxParallelism: maxParallelism ${what}`,
      call: client("setMaxParallelism", [value]),
      names: named("maxParallelism"),
    });
  }
  cases.push({
    name: "setMaxParallelism: maxParallelism a string",
    call: client("setMaxParallelism", ["4"]),
    names: named("maxParallelism"),
  });

  // list: the page size, the filters and the cursor.
  const page = (numItems: unknown, cursor: unknown = null) => ({ numItems, cursor });
  const list = (args: Record<string, unknown>) =>
    client("list", [{ paginationOpts: page(10), ...args }]);
  for (const [what, numItems] of PAGE_SIZE_CASES) {
    cases.push({
      name: `list: numItems ${what}`,
      call: list({ paginationOpts: page(numItems) }),
      names: named("paginationOpts.numItems"),
    });
  }
  for (const [what, key] of KEY_CASES) {
    cases.push({ name: `list: key ${what}`, call: list({ key }), names: named("key") });
  }
  cases.push(
    {
      name: "list: an outcome with a state other than finished",
      call: list({ state: "pending", outcome: "failed" }),
      names: named("state"),
    },
    {
      name: "list: cursor not one a page returned",
      call: list({ paginationOpts: page(10, "not-a-cursor") }),
      names: named("paginationOpts.cursor"),
    },
    {
      name: "list: an unknown state",
      call: list({ state: "done" }),
      names: named("state"),
    },
    {
      name: "list: an unknown outcome",
      call: list({ outcome: "ok" }),
      names: named("outcome"),
    },
    {
      name: "list: numItems a string",
      call: list({ paginationOpts: page("10") }),
      names: typeError("number", "10"),
      typeOnly: true,
    },
    {
      name: "list: an unknown filter",
      call: list({ status: "pending" }),
      names: /Validator error/,
      typeOnly: true,
    },
  );
  return cases;
}

// ---------------------------------------------------------------------------------------------------
// The component's public functions, called directly.

/** A value `depth` arrays deep. */
function nestedDeep(depth: number): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** A valid lib.enqueue request: each case changes one thing. */
const ITEM = {
  fnHandle: "$handle:jobs.action",
  fnName: "jobs:action",
  fnArgs: { key: "bad" },
  fnType: "action",
};
const ENQUEUE = { ...ITEM, config: {} };

function componentCases(): Case[] {
  const cases: Case[] = [];
  const direct = (fn: string, args: unknown): Call => ({ via: "component", fn, args });
  const without = (object: Record<string, unknown>, field: string) =>
    Object.fromEntries(Object.entries(object).filter(([k]) => k !== field));
  // lib.complete, called directly: what the client would refuse before calling it.
  cases.push(
    {
      name: "lib.complete: id not a WorkId",
      call: direct("lib.complete", { id: "not-an-id", outcome: { kind: "success" } }),
      names: named("id"),
    },
    {
      name: "lib.complete: attempt negative",
      call: direct("lib.complete", { id: PENDING_ID, outcome: { kind: "success" }, attempt: -1 }),
      names: named("options.attempt"),
    },
    {
      name: "lib.complete: a returnValue nested too deep",
      call: direct("lib.complete", {
        id: PENDING_ID,
        outcome: { kind: "success", returnValue: nestedDeep(80) },
      }),
      names: named("returnValue"),
    },
    {
      name: "lib.enqueue: manualCompletion on a task",
      call: direct("lib.enqueue", {
        ...ENQUEUE,
        task: "summarize",
        manualCompletion: { timeoutMs: 5000 },
      }),
      names: named("manualCompletion"),
    },
  );
  const missing = (field: string) => new RegExp(`Missing required field \`${field}\``);
  const unknown = (field: string) => new RegExp(`Unexpected field \`${field}\``);

  // lib.enqueue
  for (const field of ["fnHandle", "fnName", "fnArgs", "fnType", "config"]) {
    cases.push({
      name: `lib.enqueue: ${field} missing`,
      call: direct("lib.enqueue", without(ENQUEUE, field)),
      names: missing(field),
    });
  }
  for (const [what, key] of KEY_CASES) {
    cases.push(
      {
        name: `lib.enqueue: key ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, key }),
        names: named("key"),
      },
      {
        name: `lib.enqueueBatch: items[1].key ${what}`,
        call: direct("lib.enqueueBatch", { items: [ITEM, { ...ITEM, key }], config: {} }),
        names: named("items[1].key"),
      },
      {
        name: `lib.cancelAll: key ${what}`,
        call: direct("lib.cancelAll", { key }),
        names: named("key"),
      },
      {
        name: `keys.setKeyParallelism: key ${what}`,
        call: direct("keys.setKeyParallelism", { key, parallelism: 2 }),
        names: named("key"),
      },
      {
        name: `keys.setKeyShare: key ${what}`,
        call: direct("keys.setKeyShare", { key, share: { weight: 2 } }),
        names: named("key"),
      },
      {
        name: `keys.setKeyRateLimit: key ${what}`,
        call: direct("keys.setKeyRateLimit", { key, rateLimit: false }),
        names: named("key"),
      },
      {
        name: `keys.keyStatus: key ${what}`,
        call: direct("keys.keyStatus", { key }),
        names: named("key"),
      },
      { name: `keys.pause: key ${what}`, call: direct("keys.pause", { key }), names: named("key") },
      {
        name: `keys.resume: key ${what}`,
        call: direct("keys.resume", { key }),
        names: named("key"),
      },
    );
  }
  for (const [what, share, argument] of KEY_SHARE_CASES) {
    cases.push({
      name: `keys.setKeyShare: ${what}`,
      call: direct("keys.setKeyShare", { key: "k", share }),
      names: named(argument),
    });
  }
  for (const [what, value, argument] of RATE_LIMIT_CASES) {
    cases.push(
      {
        name: `keys.setKeyRateLimit: rateLimit ${what}`,
        call: direct("keys.setKeyRateLimit", { key: "k", rateLimit: value }),
        names: named(argument),
      },
      {
        name: `config.update: keyRateLimit ${what}`,
        call: direct("config.update", { keyRateLimit: value }),
        names: named(argument.replace("rateLimit", "keyRateLimit")),
      },
    );
  }
  for (const [what, value, argument] of RATE_LIMIT_CASES) {
    cases.push(
      {
        name: `lib.enqueue: config.rateLimit ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, config: { rateLimit: value } }),
        names: named(`config.${argument}`),
      },
      {
        name: `config.update: rateLimit ${what}`,
        call: direct("config.update", { rateLimit: value }),
        names: named(argument),
      },
    );
  }
  for (const [what, value] of KEY_PARALLELISM_CASES) {
    cases.push(
      {
        name: `lib.enqueue: config.keyParallelism ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, config: { keyParallelism: value } }),
        names: named("config.keyParallelism"),
      },
      {
        name: `config.update: keyParallelism ${what}`,
        call: direct("config.update", { keyParallelism: value }),
        names: named("keyParallelism"),
      },
      {
        name: `keys.setKeyParallelism: parallelism ${what}`,
        call: direct("keys.setKeyParallelism", { key: "k", parallelism: value }),
        names: named("parallelism"),
      },
    );
  }
  cases.push(
    {
      name: "keys.setKeyParallelism: parallelism missing",
      call: direct("keys.setKeyParallelism", { key: "k" }),
      names: missing("parallelism"),
    },
    {
      name: "keys.pause: an unknown field",
      call: direct("keys.pause", { key: "k", forever: true }),
      names: unknown("forever"),
    },
  );
  cases.push(
    {
      name: "lib.enqueue: an unknown field",
      call: direct("lib.enqueue", { ...ENQUEUE, urgency: 1 }),
      names: unknown("urgency"),
    },
    {
      name: "lib.enqueue: retryBehavior with an unknown field",
      call: direct("lib.enqueue", {
        ...ENQUEUE,
        retryBehavior: { maxAttempts: 2, initialBackoffMs: 1, base: 2, jitter: 1 },
      }),
      names: unknown("jitter"),
    },
    {
      name: "lib.enqueue: onComplete with an unknown field",
      call: direct("lib.enqueue", {
        ...ENQUEUE,
        onComplete: { fnHandle: "$handle:jobs.onComplete", retry: true },
      }),
      names: unknown("retry"),
    },
    {
      name: "lib.enqueue: config with a misspelt field",
      call: direct("lib.enqueue", { ...ENQUEUE, config: { maxParalelism: 2 } }),
      names: unknown("maxParalelism"),
    },
    {
      name: "lib.enqueue: fnHandle not a string",
      call: direct("lib.enqueue", { ...ENQUEUE, fnHandle: 5 }),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "lib.enqueue: fnName not a string",
      call: direct("lib.enqueue", { ...ENQUEUE, fnName: 5 }),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "lib.enqueue: fnType unknown",
      call: direct("lib.enqueue", { ...ENQUEUE, fnType: "cron" }),
      names: /Expected one of .*got `"cron"`/,
      typeOnly: true,
    },
    {
      name: "lib.enqueue: runAt a string",
      call: direct("lib.enqueue", { ...ENQUEUE, runAt: "soon" }),
      names: typeError("number", "soon"),
      typeOnly: true,
    },
    {
      name: "lib.enqueue: statusTtlMs a string",
      call: direct("lib.enqueue", { ...ENQUEUE, statusTtlMs: "1d" }),
      names: typeError("number", "1d"),
      typeOnly: true,
    },
    {
      name: "lib.enqueue: config.logLevel unknown",
      call: direct("lib.enqueue", { ...ENQUEUE, config: { logLevel: "LOUD" } }),
      names: /Expected one of .*got `"LOUD"`/,
      typeOnly: true,
    },
    {
      name: "lib.enqueue: both runAt and runAfter",
      call: direct("lib.enqueue", { ...ENQUEUE, runAt: 0, runAfter: 5 }),
      names: named("runAt/runAfter"),
    },
    {
      name: "lib.enqueue: fnArgs over the size limit",
      call: direct("lib.enqueue", { ...ENQUEUE, fnArgs: { value: BIG } }),
      names: named("fnArgs"),
    },
    {
      name: "lib.enqueue: fnArgs + context over the size limit",
      call: direct("lib.enqueue", {
        ...ENQUEUE,
        fnArgs: { value: "a".repeat(600_000) },
        onComplete: { fnHandle: "$handle:jobs.onComplete", context: "c".repeat(600_000) },
      }),
      names: named("fnArgs"),
    },
  );
  for (const [what, value] of [
    ["NaN", NaN],
    ["Infinity", Infinity],
    ["-Infinity", -Infinity],
  ] as const) {
    cases.push(
      {
        name: `lib.enqueue: runAt ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, runAt: value }),
        names: named("runAt"),
      },
      {
        name: `lib.enqueue: runAfter ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, runAfter: value }),
        names: named("runAfter"),
      },
    );
  }
  for (const [what, behavior, field] of RETRY_CASES) {
    if (what.endsWith("missing")) continue; // the validator's case, below
    cases.push({
      name: `lib.enqueue: retryBehavior ${what}`,
      call: direct("lib.enqueue", { ...ENQUEUE, retryBehavior: behavior }),
      names: named(`retryBehavior.${field}`),
    });
  }
  cases.push({
    name: "lib.enqueue: retryBehavior missing a field",
    call: direct("lib.enqueue", { ...ENQUEUE, retryBehavior: { maxAttempts: 2, base: 2 } }),
    names: missing("initialBackoffMs"),
  });
  for (const fnType of ["mutation", "query"]) {
    cases.push({
      name: `lib.enqueue: retryBehavior on a ${fnType}`,
      call: direct("lib.enqueue", {
        ...ENQUEUE,
        fnHandle: `$handle:jobs.${fnType}`,
        fnType,
        retryBehavior: { maxAttempts: 2, initialBackoffMs: 10, base: 2 },
      }),
      names: named("retryBehavior"),
    });
  }
  for (const [what, value] of TTL_CASES) {
    cases.push({
      name: `lib.enqueue: statusTtlMs ${what}`,
      call: direct("lib.enqueue", { ...ENQUEUE, statusTtlMs: value }),
      names: named("statusTtl"),
    });
  }
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `lib.enqueue: config.maxParallelism ${what}`,
      call: direct("lib.enqueue", { ...ENQUEUE, config: { maxParallelism: value } }),
      names: named("config.maxParallelism"),
    });
  }
  // Accepted and written; the job fails when it runs (or, for onComplete, its delivery fails).
  cases.push(
    {
      name: "lib.enqueue: fnArgs not an object",
      call: direct("lib.enqueue", { ...ENQUEUE, fnArgs: 5 }),
      names: named("fnArgs"),
    },
    {
      name: "lib.enqueue: fnHandle malformed",
      call: direct("lib.enqueue", { ...ENQUEUE, fnHandle: "not-a-handle" }),
      names: named("fnHandle"),
    },
    {
      name: "lib.enqueue: onComplete.fnHandle malformed",
      call: direct("lib.enqueue", { ...ENQUEUE, onComplete: { fnHandle: "not-a-handle" } }),
      names: named("onComplete.fnHandle"),
    },
  );

  // lib.enqueueBatch
  const items = [ITEM, ITEM, ITEM];
  const batchWith = (i: number, change: object) =>
    items.map((item, j) => (j === i ? { ...item, ...change } : item));
  cases.push(
    {
      name: "lib.enqueueBatch: items not an array",
      call: direct("lib.enqueueBatch", { items: ITEM, config: {} }),
      names: typeError("Array", "\\[object Object\\]"),
      typeOnly: true,
    },
    {
      name: "lib.enqueueBatch: over 1,000 items",
      call: direct("lib.enqueueBatch", {
        items: Array.from({ length: 1001 }, () => ITEM),
        config: {},
      }),
      names: named("items"),
    },
    {
      name: "lib.enqueueBatch: items[1].runAt NaN",
      call: direct("lib.enqueueBatch", { items: batchWith(1, { runAt: NaN }), config: {} }),
      names: named("items[1].runAt"),
    },
    {
      name: "lib.enqueueBatch: items[2] both runAt and runAfter",
      call: direct("lib.enqueueBatch", {
        items: batchWith(2, { runAt: 0, runAfter: 1 }),
        config: {},
      }),
      names: named("items[2].runAt/runAfter"),
    },
    {
      name: "lib.enqueueBatch: items[2].retryBehavior.maxAttempts 0",
      call: direct("lib.enqueueBatch", {
        items: batchWith(2, { retryBehavior: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } }),
        config: {},
      }),
      names: named("items[2].retryBehavior.maxAttempts"),
    },
    {
      name: "lib.enqueueBatch: items[1].statusTtlMs negative",
      call: direct("lib.enqueueBatch", { items: batchWith(1, { statusTtlMs: -5 }), config: {} }),
      names: named("items[1].statusTtl"),
    },
    {
      name: "lib.enqueueBatch: items[1].fnArgs over the size limit",
      call: direct("lib.enqueueBatch", {
        items: batchWith(1, { fnArgs: { value: BIG } }),
        config: {},
      }),
      names: named("items[1].fnArgs"),
    },
    {
      name: "lib.enqueueBatch: an item with an unknown field",
      call: direct("lib.enqueueBatch", { items: batchWith(0, { urgency: 1 }), config: {} }),
      names: unknown("urgency"),
    },
    {
      name: "lib.enqueueBatch: config missing",
      call: direct("lib.enqueueBatch", { items }),
      names: missing("config"),
    },
    {
      name: "lib.enqueueBatch: an unknown field",
      call: direct("lib.enqueueBatch", { items, config: {}, atomic: true }),
      names: unknown("atomic"),
    },
  );
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `lib.enqueueBatch: config.maxParallelism ${what}`,
      call: direct("lib.enqueueBatch", { items, config: { maxParallelism: value } }),
      names: named("config.maxParallelism"),
    });
  }

  // lib.cancel (with a real pending job's id unless the id is what is wrong: a write would show)
  for (const [what, id] of BAD_IDS) {
    cases.push({
      name: `lib.cancel: id ${what}`,
      call: direct("lib.cancel", { id }),
      names: named("id"),
    });
  }
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `lib.cancel: config.maxParallelism ${what}`,
      call: direct("lib.cancel", { id: PENDING_ID, config: { maxParallelism: value } }),
      names: named("config.maxParallelism"),
    });
  }
  cases.push(
    { name: "lib.cancel: id missing", call: direct("lib.cancel", {}), names: missing("id") },
    {
      name: "lib.cancel: id a number",
      call: direct("lib.cancel", { id: 5 }),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "lib.cancel: an unknown field",
      call: direct("lib.cancel", { id: PENDING_ID, force: true }),
      names: unknown("force"),
    },
    {
      name: "lib.cancel: config with an unknown field",
      call: direct("lib.cancel", { id: PENDING_ID, config: { paused: true } }),
      names: unknown("paused"),
    },
  );

  // lib.cancelAll (a valid call would cancel every seeded job)
  for (const [what, limit] of LIMIT_CASES) {
    cases.push({
      name: `lib.cancelAll: limit ${what}`,
      call: direct("lib.cancelAll", { limit }),
      names: named("limit"),
    });
  }
  for (const [what, before] of [
    ["NaN", NaN],
    ["Infinity", Infinity],
    ["-Infinity", -Infinity],
  ] as const) {
    cases.push({
      name: `lib.cancelAll: before ${what}`,
      call: direct("lib.cancelAll", { before }),
      names: named("before"),
    });
  }
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `lib.cancelAll: config.maxParallelism ${what}`,
      call: direct("lib.cancelAll", { config: { maxParallelism: value } }),
      names: named("config.maxParallelism"),
    });
  }
  cases.push(
    {
      name: "lib.cancelAll: limit a string",
      call: direct("lib.cancelAll", { limit: "all" }),
      names: typeError("number", "all"),
      typeOnly: true,
    },
    {
      name: "lib.cancelAll: before a string",
      call: direct("lib.cancelAll", { before: "now" }),
      names: typeError("number", "now"),
      typeOnly: true,
    },
    {
      name: "lib.cancelAll: an unknown field",
      call: direct("lib.cancelAll", { limt: 10 }),
      names: unknown("limt"),
    },
  );

  // lib.status, lib.statusBatch
  for (const [what, id] of BAD_IDS) {
    cases.push(
      { name: `lib.status: id ${what}`, call: direct("lib.status", { id }), names: named("id") },
      {
        name: `lib.statusBatch: ids[2] ${what}`,
        call: direct("lib.statusBatch", { ids: [PENDING_ID, FINISHED_ID, id] }),
        names: named("ids[2]"),
      },
    );
  }
  cases.push(
    { name: "lib.status: id missing", call: direct("lib.status", {}), names: missing("id") },
    {
      name: "lib.status: id a number",
      call: direct("lib.status", { id: 5 }),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "lib.status: an unknown field",
      call: direct("lib.status", { id: PENDING_ID, withResult: true }),
      names: unknown("withResult"),
    },
    {
      name: "lib.statusBatch: over 1,000 ids",
      call: direct("lib.statusBatch", { ids: Array.from({ length: 1001 }, () => PENDING_ID) }),
      names: named("ids"),
    },
    {
      name: "lib.statusBatch: ids not an array",
      call: direct("lib.statusBatch", { ids: PENDING_ID }),
      names: /Validator error: Expected `Array`/,
      typeOnly: true,
    },
    {
      name: "lib.statusBatch: an id a number",
      call: direct("lib.statusBatch", { ids: [PENDING_ID, 5] }),
      names: typeError("string", "5"),
      typeOnly: true,
    },
    {
      name: "lib.statusBatch: an unknown field",
      call: direct("lib.statusBatch", { ids: [], limit: 5 }),
      names: unknown("limit"),
    },
  );
  cases.push(
    {
      name: "lib.retry: id not a WorkId",
      call: direct("lib.retry", { id: "not-an-id" }),
      names: named("id"),
    },
    {
      name: "lib.retry: a job that succeeded",
      call: direct("lib.retry", { id: FINISHED_ID }),
      names: named("id"),
    },
    {
      name: "lib.retry: config.maxParallelism negative",
      call: direct("lib.retry", { id: FINISHED_ID, config: { maxParallelism: -1 } }),
      names: named("config.maxParallelism"),
    },
    {
      name: "lib.info: id not a WorkId",
      call: direct("lib.info", { id: "not-an-id" }),
      names: named("id"),
    },
  );

  // config.setMaxParallelism (the operator's value; null clears it, so null is no bad input)
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `config.setMaxParallelism: maxParallelism ${what}`,
      call: direct("config.setMaxParallelism", { maxParallelism: value }),
      names: named("maxParallelism"),
    });
  }
  cases.push(
    {
      name: "config.setMaxParallelism: maxParallelism a string",
      call: direct("config.setMaxParallelism", { maxParallelism: "4" }),
      names: /Validator error: Expected one of/,
      typeOnly: true,
    },
    {
      name: "config.setMaxParallelism: maxParallelism missing",
      call: direct("config.setMaxParallelism", {}),
      names: /Validator error/,
      typeOnly: true,
    },
  );

  // config.update
  for (const [what, value] of PARALLELISM_CASES) {
    cases.push({
      name: `config.update: maxParallelism ${what}`,
      call: direct("config.update", { maxParallelism: value }),
      names: named("maxParallelism"),
    });
  }
  cases.push(
    {
      name: "config.update: maxParallelism a string",
      call: direct("config.update", { maxParallelism: "4" }),
      names: typeError("number", "4"),
      typeOnly: true,
    },
    {
      name: "config.update: maxParallelism null",
      call: direct("config.update", { maxParallelism: null }),
      names: typeError("number", "null"),
      typeOnly: true,
    },
    {
      name: "config.update: logLevel unknown",
      call: direct("config.update", { logLevel: "LOUD" }),
      names: /Expected one of .*got `"LOUD"`/,
      typeOnly: true,
    },
    {
      name: "config.update: logLevel a number",
      call: direct("config.update", { logLevel: 3 }),
      names: /Expected one of .*got `3`/,
      typeOnly: true,
    },
    {
      name: "config.update: a misspelt field",
      call: direct("config.update", { maxParalelism: 0 }),
      names: unknown("maxParalelism"),
    },
    ...(
      [
        ["16", 16],
        ["negative", -1],
        ["fractional", 1.5],
        ["NaN", NaN],
      ] as Array<[string, number]>
    ).flatMap(([what, countShard]): Case[] => [
      {
        name: `lib.enqueue: countShard ${what}`,
        call: direct("lib.enqueue", { ...ENQUEUE, countShard }),
        names: named("countShard"),
      },
      {
        name: `lib.enqueueBatch: countShard ${what}`,
        call: direct("lib.enqueueBatch", { items: [ITEM], config: {}, countShard }),
        names: named("countShard"),
      },
    ]),
    {
      name: "inspect.list: numItems over 1,000",
      call: direct("inspect.list", { paginationOpts: { numItems: 1001, cursor: null } }),
      names: named("paginationOpts.numItems"),
    },
    {
      name: "inspect.list: a misspelt filter",
      call: direct("inspect.list", {
        outcomes: "failed",
        paginationOpts: { numItems: 10, cursor: null },
      }),
      names: unknown("outcomes"),
    },
    {
      name: "inspect.overview: over 100 keys a page",
      call: direct("inspect.overview", { keysPaginationOpts: { numItems: 101, cursor: null } }),
      names: named("keysPaginationOpts.numItems"),
    },
    {
      name: "inspect.overview: a cursor no page of keys returned",
      call: direct("inspect.overview", {
        keysPaginationOpts: { numItems: 10, cursor: "not a cursor" },
      }),
      names: named("keysPaginationOpts.cursor"),
    },
    // stats takes no arguments (nor does the client's `stats(ctx)`): only an extra one is wrong.
    {
      name: "inspect.stats: an argument it does not take",
      call: direct("inspect.stats", { pool: "emails" }),
      names: unknown("pool"),
    },
  );
  return cases;
}

/** Recurring schedules (API-EXTENSIONS §10): their client methods and component functions. */
function recurringCases(): Case[] {
  const client = (method: string, args: unknown[]): Call => ({ via: "client", method, args });
  const component = (fn: string, args: unknown): Call => ({ via: "component", fn, args });
  const every = { everyMs: 60_000 };
  const cases: Case[] = [];
  const optionCases: Array<[string, object, string]> = [
    ["neither cron nor everyMs", {}, "cron/everyMs"],
    ["both cron and everyMs", { cron: "* * * * *", everyMs: 60_000 }, "cron/everyMs"],
    ["a cron that does not parse", { cron: "61 * * * *" }, "cron"],
    ["a cron with no time", { cron: "0 0 31 2 *" }, "cron"],
    ["an unknown timezone", { cron: "* * * * *", timezone: "Nowhere/Else" }, "timezone"],
    ["a timezone with everyMs", { ...every, timezone: "UTC" }, "timezone"],
    ["everyMs under 1,000", { everyMs: 999 }, "everyMs"],
    ["everyMs NaN", { everyMs: NaN }, "everyMs"],
    ["endAt in the past", { ...every, endAt: 1 }, "endAt"],
    ["endAt before startAt", { ...every, startAt: 4e12, endAt: 3e12 }, "endAt"],
    ["startAt Infinity", { ...every, startAt: Infinity }, "startAt"],
    ["an unknown overlap", { ...every, overlap: "queue" }, "overlap"],
    ["catchupWindowMs negative", { ...every, catchupWindowMs: -1 }, "catchupWindowMs"],
    ["jitterMs fractional", { ...every, jitterMs: 0.5 }, "jitterMs"],
  ];
  for (const [what, options, argument] of optionCases) {
    cases.push({
      name: `scheduleAction: ${what}`,
      call: client("scheduleAction", ["s", JOB.action, { key: "x" }, options]),
      names: named(argument),
    });
  }
  cases.push(
    {
      name: "scheduleAction: an empty name",
      call: client("scheduleAction", ["", JOB.action, { key: "x" }, every]),
      names: named("name"),
    },
    {
      name: "scheduleMutation: a name over 256 characters",
      call: client("scheduleMutation", ["n".repeat(257), JOB.mutation, { key: "x" }, every]),
      names: named("name"),
    },
    {
      name: "scheduleQuery: catchupWindowMs Infinity",
      call: client("scheduleQuery", [
        "s",
        JOB.query,
        { key: "x" },
        { ...every, catchupWindowMs: Infinity },
      ]),
      names: named("catchupWindowMs"),
    },
    {
      name: "pauseSchedule: an empty name",
      call: client("pauseSchedule", [""]),
      names: named("name"),
    },
    {
      name: "resumeSchedule: an empty name",
      call: client("resumeSchedule", [""]),
      names: named("name"),
    },
    { name: "unschedule: an empty name", call: client("unschedule", [""]), names: named("name") },
    {
      name: "runScheduleNow: an unknown name",
      call: client("runScheduleNow", ["nobody"]),
      names: named("name"),
    },
    { name: "getSchedule: an empty name", call: client("getSchedule", [""]), names: named("name") },
    {
      name: "listSchedules: numItems 0",
      call: client("listSchedules", [{ paginationOpts: { numItems: 0, cursor: null } }]),
      names: named("paginationOpts.numItems"),
    },
    {
      name: "schedules.schedule: a cron that does not parse",
      call: component("schedules.schedule", {
        name: "s",
        run: {
          fnHandle: "$handle:jobs.mutation",
          fnName: "jobs:mutation",
          fnArgs: {},
          fnType: "mutation",
        },
        cron: "* * *",
      }),
      names: named("cron"),
    },
    {
      name: "schedules.schedule: a run whose fnHandle is no handle",
      call: component("schedules.schedule", {
        name: "s",
        run: { fnHandle: "jobs:mutation", fnName: "jobs:mutation", fnArgs: {}, fnType: "mutation" },
        everyMs: 60_000,
      }),
      names: named("fnHandle"),
    },
    {
      name: "schedules.pause: an empty name",
      call: component("schedules.pause", { name: "" }),
      names: named("name"),
    },
    {
      name: "schedules.resume: an empty name",
      call: component("schedules.resume", { name: "" }),
      names: named("name"),
    },
    {
      name: "schedules.unschedule: an empty name",
      call: component("schedules.unschedule", { name: "" }),
      names: named("name"),
    },
    {
      name: "schedules.runNow: an unknown name",
      call: component("schedules.runNow", { name: "nobody" }),
      names: named("name"),
    },
    {
      name: "schedules.get: an empty name",
      call: component("schedules.get", { name: "" }),
      names: named("name"),
    },
    {
      name: "schedules.list: numItems 0",
      call: component("schedules.list", { paginationOpts: { numItems: 0, cursor: null } }),
      names: named("paginationOpts.numItems"),
    },
  );
  return cases;
}

const CASES = [...clientCases(), ...componentCases(), ...recurringCases()];

// ---------------------------------------------------------------------------------------------------

let t: T;

beforeAll(async () => {
  t = setup();
  vi.spyOn(console, "info").mockImplementation(() => {});
  // A finished mutation; then two actions running (the pool's two slots), one of them reported but
  // its completion not yet processed; one action waiting for a slot, one delayed by an hour with a
  // large context (a payloads row), and a cancel requested but not yet processed: every component
  // table has rows.
  const poolOptions = { maxParallelism: 2 };
  const [finishedId] = await enqueue(t, "mutation", [{ key: "done" }], { poolOptions });
  await runFor(t, 300);
  // Two paused keys, each with a job in its queue (and, at the end, one resumed while the pool is
  // full: listed as ready).
  for (const key of ["kk", "kr"]) {
    await t.mutation(anyApi.pool.callClient, { method: "pause", args: [{ key }], poolOptions });
    await enqueue(t, "action", [{ key: `${key}:0` }], { poolOptions, options: { key } });
  }
  await runFor(t, 300);
  await enqueue(t, "action", [{ key: "running", ms: 3_600_000 }], { poolOptions });
  await runFor(t, 300);
  await enqueue(t, "action", [{ key: "quick", ms: 200 }], { poolOptions });
  await runUntil(t, () => probe.attempts.get("quick") === 1);
  const [pendingId, toCancel] = await enqueue(t, "action", [{ key: "waits" }, { key: "cancel" }], {
    poolOptions,
  });
  await enqueue(t, "action", [{ key: "later" }], {
    poolOptions,
    options: { runAfter: 3_600_000, context: { big: "c".repeat(10_000) }, dedupeKey: "seeded" },
  });
  // Step 1 ms at a time: the loop takes a completion soon after the worker reports it.
  const pendingCompletion = async () =>
    await inComponent(t, async (ctx) => await ctx.db.query("pendingCompletion").first());
  for (let ms = 0; (await pendingCompletion()) === null; ms++) {
    if (ms > 1000) throw new Error("quick's completion was never seen pending");
    await vi.advanceTimersByTimeAsync(1);
  }
  await t.mutation(anyApi.pool.cancel, { id: toCancel, poolOptions });
  await t.mutation(anyApi.pool.callClient, {
    method: "resume",
    args: [{ key: "kr" }],
    poolOptions,
  });
  const otherTableId = await inComponent(
    t,
    async (ctx) => (await ctx.db.query("pendingStart").first())._id,
  );
  Object.assign(seeded, { pendingId, finishedId, otherTableId });
  // A schedule (hourly: it does not fire while the catalogue runs, the clock stands still).
  await t.mutation(anyApi.schedules.schedule, {
    kind: "mutation",
    name: "seeded",
    args: { key: "seeded" },
    options: { everyMs: 3_600_000 },
  });
  const rows = (await allRows(t)).component;
  for (const table of Object.keys(rows)) expect(rows[table].length, table).toBeGreaterThan(0);
  expect(rows.work.map((w: any) => w.state.kind).sort()).toEqual([
    "finished",
    "pending",
    "pending",
    "pending",
    "pending",
    "pending",
    "running",
    "running",
  ]);
});

afterAll(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("bad-input catalogue", () => {
  it("has a case for every public function and client method", () => {
    const covered = new Set(
      CASES.map((c) => (c.call.via === "client" ? c.call.method : c.call.fn)),
    );
    expect([...covered].sort()).toEqual(
      [
        "constructor",
        "enqueueAction",
        "enqueueActionBatch",
        "enqueueMutation",
        "enqueueMutationBatch",
        "enqueueQuery",
        "enqueueQueryBatch",
        "cancel",
        "cancelAll",
        "status",
        "statusBatch",
        "setKeyParallelism",
        "setKeyShare",
        "setKeyRateLimit",
        "setMaxParallelism",
        "keyStatus",
        "pause",
        "resume",
        "retry",
        "info",
        "lib.retry",
        "lib.info",
        "list",
        "inspect.list",
        "inspect.stats",
        "inspect.overview",
        "keys.setKeyParallelism",
        "keys.setKeyShare",
        "keys.setKeyRateLimit",
        "keys.keyStatus",
        "keys.pause",
        "keys.resume",
        "lib.enqueue",
        "lib.enqueueBatch",
        "lib.cancel",
        "lib.cancelAll",
        "lib.complete",
        "complete",
        "createGroup",
        "closeGroup",
        "cancelGroup",
        "groupStatus",
        "lib.status",
        "lib.statusBatch",
        "config.setMaxParallelism",
        "config.update",
        "scheduleAction",
        "scheduleMutation",
        "scheduleQuery",
        "pauseSchedule",
        "resumeSchedule",
        "unschedule",
        "runScheduleNow",
        "getSchedule",
        "listSchedules",
        "schedules.schedule",
        "schedules.pause",
        "schedules.resume",
        "schedules.unschedule",
        "schedules.runNow",
        "schedules.get",
        "schedules.list",
      ].sort(),
    );
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  for (const c of CASES) {
    const title = `rejects ${c.name}, naming it, and writes nothing`;
    it(title, async () => {
      const before = await allRows(t);
      await expect(call(t, c.call)).rejects.toThrow(c.names);
      expect(await allRows(t)).toEqual(before);
    });
  }
});

describe("the catalogue's base calls are valid (each case changes one thing)", () => {
  // Run after the catalogue, on the same backend. Each mutation's base call writes, which also shows
  // that the before/after comparison would see a write by that function.
  const client = (method: string, args: unknown[]): Call => ({ via: "client", method, args });
  const direct = (fn: string, args: unknown): Call => ({ via: "component", fn, args });
  const valid: Array<[string, Call, "writes" | "reads"]> = [
    ["enqueueAction", client("enqueueAction", [JOB.action, { key: "v" }]), "writes"],
    [
      "enqueueAction with retry",
      client("enqueueAction", [
        JOB.action,
        { key: "v" },
        { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2 }, runAfter: 5 },
      ]),
      "writes",
    ],
    [
      "enqueueQueryBatch",
      client("enqueueQueryBatch", [JOB.query, [{ key: "v" }, { key: "w" }], { runAt: 0 }]),
      "writes",
    ],
    ["lib.enqueue", direct("lib.enqueue", ENQUEUE), "writes"],
    ["lib.enqueueBatch", direct("lib.enqueueBatch", { items: [ITEM, ITEM], config: {} }), "writes"],
    ["status", client("status", [PENDING_ID]), "reads"],
    ["statusBatch", client("statusBatch", [[PENDING_ID, FINISHED_ID]]), "reads"],
    ["lib.status", direct("lib.status", { id: PENDING_ID }), "reads"],
    ["lib.statusBatch", direct("lib.statusBatch", { ids: [PENDING_ID, FINISHED_ID] }), "reads"],
    ["cancel", client("cancel", [PENDING_ID]), "writes"],
    ["lib.cancel", direct("lib.cancel", { id: PENDING_ID, config: {} }), "writes"],
    ["config.update", direct("config.update", { maxParallelism: 3 }), "writes"],
    ["lib.cancelAll", direct("lib.cancelAll", { limit: 5 }), "writes"],
    ["cancelAll", client("cancelAll", [{ limit: 10 }]), "writes"],
    ["setKeyParallelism", client("setKeyParallelism", ["k", 2]), "writes"],
    ["keyStatus", client("keyStatus", ["kk"]), "reads"],
    ["keys.keyStatus", direct("keys.keyStatus", { key: "kk" }), "reads"],
    ["pause", client("pause", [{ key: "k" }]), "writes"],
    ["resume", client("resume", [{ key: "k" }]), "writes"],
    ["keys.pause", direct("keys.pause", {}), "writes"],
    ["keys.resume", direct("keys.resume", {}), "writes"],
    [
      "keys.setKeyParallelism",
      direct("keys.setKeyParallelism", { key: "k", parallelism: null }),
      "writes",
    ],
    ["cancelAll of a key", client("cancelAll", [{ key: "kk" }]), "writes"],
    ["list", client("list", [{ paginationOpts: { numItems: 5, cursor: null } }]), "reads"],
    ["stats", client("stats", []), "reads"],
    ["inspect.stats", direct("inspect.stats", {}), "reads"],
  ];
  for (const [name, c, effect] of valid) {
    it(`${name} ${effect}`, async () => {
      const before = await allRows(t);
      await call(t, c);
      const after = await allRows(t);
      if (effect === "writes") expect(after).not.toEqual(before);
      else expect(after).toEqual(before);
    });
  }
});
