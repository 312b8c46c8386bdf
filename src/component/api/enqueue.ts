/**
 * Adding jobs: checks an enqueue request and writes its `work` row and its `pendingStart` row (plus a
 * `payloads` row when args and context are large). Appends only; never touches a running job and never
 * starts work (the loop does).
 */
import { v, type Infer } from "convex/values";
import type { Doc, Id } from "../_generated/dataModel.js";
import type { MutationCtx } from "../_generated/server.js";
import { invalidArgument } from "../model/errors.js";
import type { Target } from "./kick.js";
import {
  storedPriority,
  vFnType,
  vManualCompletion,
  vOnCompleteSpec,
  vPriority,
  vRetryBehavior,
} from "../model/validators.js";
import { dueSegment } from "../model/segments.js";
import { countGroupEnqueues } from "./groups.js";
import {
  checkArgsAndContext,
  resolveRunAt,
  validateFnArgs,
  validateFunctionHandle,
  validateKey,
  validateManualCompletion,
  validateString,
  MAX_DEDUPE_KEY_LENGTH,
  MAX_NAME_LENGTH,
  validatePriority,
  validateRetryBehavior,
  validateStatusTtl,
  MAX_KEY_LENGTH,
} from "../model/validate.js";

/** How long a finished job's status and result stay readable when the caller does not say: a day. */
export const DEFAULT_STATUS_TTL_MS = 24 * 60 * 60 * 1000;

/** The most jobs one enqueueBatch call takes: two rows each stays far below Convex's 16,000-writes
 * limit per transaction, with room for the caller's own writes. */
export const MAX_ENQUEUE_BATCH = 1000;

/** One job to enqueue, as the client sends it. */
export const vEnqueueItem = v.object({
  fnHandle: v.string(),
  /** The function's path, for logs (e.g. "emails:send"). */
  fnName: v.string(),
  fnArgs: v.any(),
  fnType: vFnType,
  /** When it may start (ms since epoch); at most one of runAt and runAfter. */
  runAt: v.optional(v.number()),
  /** Delay before it may start (ms); at most one of runAt and runAfter. */
  runAfter: v.optional(v.number()),
  /** Retries for a failed action; undefined means no retry. */
  retryBehavior: v.optional(vRetryBehavior),
  onComplete: v.optional(vOnCompleteSpec),
  /** How long the finished status stays readable; default one day; Infinity keeps it. */
  statusTtlMs: v.optional(v.number()),
  /** Jobs with the same key share the key's parallelism limit and start in order (keyState.ts). */
  key: v.optional(v.string()),
  /** "high", "normal" (the default) or "low": the order in which due jobs start. */
  priority: v.optional(vPriority),
  /** While a job enqueued with this key waits for its first start, an enqueue with it creates
   * nothing and returns that job (dedupe.ts). Not in batches. */
  dedupeKey: v.optional(v.string()),
  /** "keep" (the default): leave the waiting job as it is; "replace": give it the new args (and
   * context, onComplete and due time when given). */
  onDuplicate: v.optional(v.union(v.literal("keep"), v.literal("replace"))),
  /** A task of the executor action `fnHandle` names (runners/executor.ts): its name there. */
  task: v.optional(v.string()),
  /** Each attempt ends with the app's `complete` call, or fails `timeoutMs` after its start. */
  manualCompletion: v.optional(vManualCompletion),
  /** The group the job joins (a GroupId from createGroup; open): api/groups.ts. */
  group: v.optional(v.string()),
});
export type EnqueueItem = Infer<typeof vEnqueueItem>;

/** A request that passed its checks: when it may start, the size of its args plus context (as
 * Convex counts it), and whether they stay inline in the work row (valueMeasure.ts `fitsInline`). */
export type CheckedItem = { runAt: number; sizeBytes: number; inline: boolean };

/** Checks one request; throws naming the bad argument (prefixed, e.g. "items[3].runAt"). Pure. */
export function validateEnqueueItem(item: EnqueueItem, now: number, prefix = ""): CheckedItem {
  validateFunctionHandle(item.fnHandle, `${prefix}fnHandle`);
  validateFnArgs(item.fnArgs, `${prefix}fnArgs`);
  if (item.onComplete) {
    validateFunctionHandle(item.onComplete.fnHandle, `${prefix}onComplete.fnHandle`);
  }
  if (item.retryBehavior !== undefined) {
    if (item.fnType !== "action") {
      invalidArgument(`${prefix}retryBehavior`, "only actions are retried", item.fnType);
    }
    validateRetryBehavior(item.retryBehavior, `${prefix}retryBehavior`);
  }
  validateStatusTtl(item.statusTtlMs, `${prefix}statusTtl`);
  if (item.key !== undefined) validateKey(item.key, `${prefix}key`);
  if (item.priority !== undefined) validatePriority(item.priority, `${prefix}priority`);
  if (item.dedupeKey !== undefined) {
    validateString(item.dedupeKey, MAX_DEDUPE_KEY_LENGTH, `${prefix}dedupeKey`);
  }
  validateString(item.fnName, MAX_NAME_LENGTH, `${prefix}name`);
  if (item.task !== undefined) {
    validateString(item.task, MAX_KEY_LENGTH, `${prefix}task`);
    if (item.fnType !== "action") {
      invalidArgument(`${prefix}task`, "a task runs in an executor action", item.fnType);
    }
  }
  if (item.manualCompletion !== undefined) {
    validateManualCompletion(item.manualCompletion, item, `${prefix}manualCompletion`);
  }
  if (item.onDuplicate !== undefined) {
    if (item.dedupeKey === undefined) {
      invalidArgument(`${prefix}onDuplicate`, "needs a dedupeKey", item.onDuplicate);
    }
    if (item.onDuplicate !== "keep" && item.onDuplicate !== "replace") {
      invalidArgument(`${prefix}onDuplicate`, 'must be "keep" or "replace"', item.onDuplicate);
    }
  }
  const runAt = resolveRunAt(item, now, prefix);
  const { sizeBytes, inline } = checkArgsAndContext(item.fnArgs, item.onComplete?.context, prefix);
  return { runAt, sizeBytes, inline };
}

/**
 * Writes a checked job, its start row in the target segment (kick.ts) or later if it is not due by
 * then, with the target's wake-up if any; returns its id. The caller counts the call's jobs with
 * `countEnqueues`.
 */
export async function insertJob(
  ctx: MutationCtx,
  item: EnqueueItem,
  checked: CheckedItem,
  now: number,
  target: Target,
  extra?: RunFields,
): Promise<Id<"work">> {
  const workId = await insertWork(ctx, item, checked, now, extra);
  await insertStart(ctx, [workId], startOf(item, checked, now, target));
  return workId;
}

/** Jobs one `pendingStart` row lists at most (an `enqueueBatch` of more writes more rows): the
 * loop's start batch, so a row is usually taken whole, and 100 ids keep the row near 4 KB. */
export const START_ROW_JOBS = 100;

/**
 * Writes the checked jobs of one `enqueueBatch` call; returns their ids, in order. Jobs without a
 * key that share a due time, segment and priority share start rows (up to START_ROW_JOBS each):
 * the loop reads and deletes one row for them, not one each. A keyed job keeps a row of its own
 * (its key's queue takes it alone). `targetOf` says where each job's row goes (kick.ts).
 */
export async function insertJobs(
  ctx: MutationCtx,
  items: EnqueueItem[],
  checked: CheckedItem[],
  now: number,
  targetOf: (index: number) => Promise<Target>,
): Promise<Id<"work">[]> {
  const ids: Id<"work">[] = [];
  const shared = new Map<string, { start: StartFields; ids: Id<"work">[] }>();
  for (let i = 0; i < items.length; i++) {
    const start = startOf(items[i], checked[i], now, await targetOf(i));
    const workId = await insertWork(ctx, items[i], checked[i], now);
    ids.push(workId);
    if (start.key !== undefined) {
      await insertStart(ctx, [workId], start);
      continue;
    }
    const group = `${start.segment}:${start.runAt}:${start.priority}:${start.early === true}`;
    const entry = shared.get(group);
    if (entry) entry.ids.push(workId);
    else shared.set(group, { start, ids: [workId] });
  }
  for (const { start, ids: grouped } of shared.values()) {
    for (let at = 0; at < grouped.length; at += START_ROW_JOBS) {
      // The first row carries the group's wake-up, if its first job's target brought one.
      const wake = at === 0 ? start.wake : undefined;
      await insertStart(ctx, grouped.slice(at, at + START_ROW_JOBS), { ...start, wake });
    }
  }
  return ids;
}

/** A start row's fields, but its jobs. */
type StartFields = Omit<Doc<"pendingStart">, "_id" | "_creationTime" | "workId" | "more">;

function startOf(
  item: EnqueueItem,
  { runAt }: CheckedItem,
  now: number,
  { segment, wake, early }: Target,
): StartFields {
  return {
    runAt: Math.max(runAt, now),
    segment: early ? segment : Math.max(segment, dueSegment(runAt)),
    key: item.key,
    ...(item.key !== undefined ? { keyed: true as const } : {}),
    priority: storedPriority(item.priority),
    wake,
    early,
  };
}

/** Writes the start row of `ids` (one job, or a batch's jobs that share `start`). */
async function insertStart(
  ctx: MutationCtx,
  [workId, ...more]: Id<"work">[],
  start: StartFields,
): Promise<void> {
  await ctx.db.insert("pendingStart", {
    ...start,
    workId,
    ...(more.length > 0 ? { more } : {}),
  });
}

/** What a schedule's run adds to its `work` row (schedule.ts): its schedule and time, and for a
 * buffered run the run it waits for. */
export type RunFields = Pick<Doc<"work">, "schedule" | "scheduledFor" | "waitsFor">;

/** Writes a checked job's `work` row (and its payload when large); `extra` marks a schedule's run.
 * Without a `pendingStart` row (a buffered run) the loop never starts it until one is filed. */
export async function insertWork(
  ctx: MutationCtx,
  item: EnqueueItem,
  { runAt, inline }: CheckedItem,
  now: number,
  extra?: RunFields,
): Promise<Id<"work">> {
  const large = !inline;
  const payloadId = large
    ? await ctx.db.insert("payloads", { fnArgs: item.fnArgs, context: item.onComplete?.context })
    : undefined;
  const ttl = item.statusTtlMs ?? DEFAULT_STATUS_TTL_MS;
  const workId = await ctx.db.insert("work", {
    fnType: item.fnType,
    fnHandle: item.fnHandle,
    fnName: item.fnName,
    fnArgs: large ? undefined : item.fnArgs,
    payloadId,
    attempts: 0,
    retryBehavior: item.retryBehavior,
    onComplete: item.onComplete && {
      fnHandle: item.onComplete.fnHandle,
      context: large ? undefined : item.onComplete.context,
      excludeKinds: item.onComplete.excludeKinds,
    },
    statusTtlMs: ttl === Number.POSITIVE_INFINITY ? undefined : ttl,
    state: { kind: "pending" },
    listAt: Math.max(runAt, now),
    key: item.key,
    priority: storedPriority(item.priority),
    dedupeKey: item.dedupeKey,
    task: item.task,
    manualCompletion: item.manualCompletion,
    // Checked by `checkGroups` before anything was written.
    group: item.group as Id<"groups"> | undefined,
    ...extra,
  });
  return workId;
}

/** How many rows `enqueueCounts` spreads the pool's enqueue count over: two concurrent enqueue
 * calls touch the same row (and one retries) 1 time in 16, and `stats` reads all 16. */
export const ENQUEUE_COUNT_SHARDS = 16;

/** Checks a caller's `countShard` (which `enqueueCounts` row counts its call). */
export function validateCountShard(countShard: number | undefined): void {
  if (countShard === undefined) return;
  if (!Number.isInteger(countShard) || countShard < 0 || countShard >= ENQUEUE_COUNT_SHARDS) {
    invalidArgument(
      "countShard",
      `must be a whole number from 0 to ${ENQUEUE_COUNT_SHARDS - 1}`,
      countShard,
    );
  }
}

/** What an enqueue call may say about its count: the client passes one shard for every call of one
 * function execution, so that an app mutation enqueueing jobs one by one writes one counter row
 * (and conflicts with a concurrent one 1 time in 16), not a row per call. */
export const vCountShard = v.optional(v.number());

/**
 * Counts a call's jobs for `stats` in one `enqueueCounts` shard, and keyed jobs in their keys'
 * ledgers for `keyStatus` (one update per key, however many of the key's jobs the call enqueued).
 * Both are written only by enqueues (and the ledger by the sweeper), and never read by the loop:
 * an enqueue conflicts with no pass, nor with enqueues of other keys (but 1 in 16 of other calls).
 */
export async function countEnqueues(
  ctx: MutationCtx,
  items: ReadonlyArray<{ key?: string; group?: string }>,
  countShard?: number,
): Promise<void> {
  if (items.length === 0) return;
  const shard = countShard ?? Math.floor(Math.random() * ENQUEUE_COUNT_SHARDS);
  const counter = await ctx.db
    .query("enqueueCounts")
    .withIndex("by_shard", (q) => q.eq("shard", shard))
    .first();
  if (counter) {
    await ctx.db.patch("enqueueCounts", counter._id, { enqueued: counter.enqueued + items.length });
  } else {
    await ctx.db.insert("enqueueCounts", { shard, enqueued: items.length });
  }
  const perKey = new Map<string, number>();
  for (const { key } of items) {
    if (key !== undefined) perKey.set(key, (perKey.get(key) ?? 0) + 1);
  }
  await countGroupEnqueues(ctx, items, shard);
  for (const [key, count] of perKey) {
    const ledger = await ctx.db
      .query("keyLedger")
      .withIndex("by_keyShard", (q) => q.eq("key", key).eq("shard", shard))
      .first();
    if (ledger) {
      await ctx.db.patch("keyLedger", ledger._id, { enqueued: ledger.enqueued + count });
    } else {
      await ctx.db.insert("keyLedger", {
        key,
        shard,
        enqueued: count,
        sweptSucceeded: 0,
        sweptFailed: 0,
        sweptCanceled: 0,
      });
    }
  }
}
