/**
 * The public API the client calls: enqueue, enqueueBatch, cancel, cancelAll, status, statusBatch,
 * info, complete.
 * Each checks its input before writing anything, appends to the pending tables, and wakes the loop.
 * Never moves a job between states (the loop does).
 */
import { v } from "convex/values";
import { internal } from "./_generated/api.js";
import type { Id } from "./_generated/dataModel.js";
import { internalMutation, mutation, query, type MutationCtx } from "./_generated/server.js";
import { applyConfig, validateConfigUpdate } from "./config.js";
import {
  countEnqueues,
  insertJob,
  insertJobs,
  validateCountShard,
  vCountShard,
  MAX_ENQUEUE_BATCH,
  validateEnqueueItem,
  vEnqueueItem,
  type CheckedItem,
  type EnqueueItem,
} from "./api/enqueue.js";
import { invalidArgument } from "./model/errors.js";
import { deriveInfo, deriveStatus, parseWorkId } from "./api/jobStatus.js";
import { claimSegment, targetFor, type Target } from "./api/kick.js";
import {
  vCompletionOutcome,
  vConfigUpdate,
  vLogLevel,
  vStatus,
  vWorkInfo,
  type ConfigUpdate,
  type LogLevel,
} from "./model/validators.js";
import { dueSegment } from "./model/segments.js";
import { checkSameFunction, findDuplicate, rememberDedupeKey, replaceJob } from "./api/dedupe.js";
import { rerunRequest } from "./api/rerun.js";
import { fileCompletion } from "./api/manualCompletion.js";
import { checkGroups } from "./api/groups.js";
import { validateKey } from "./model/validate.js";

/** How many unfinished jobs one cancelAll transaction marks, by default: 4 reads/writes each keeps
 * a transaction well inside Convex's limits. */
export const DEFAULT_CANCEL_ALL_BATCH = 500;
/** The most jobs one cancelAll transaction marks: about 4,000 reads and writes, a quarter of
 * Convex's per-transaction limits. */
export const MAX_CANCEL_ALL_BATCH = 1000;
/** The most ids one statusBatch call looks up (one read each). */
export const MAX_STATUS_BATCH = 1000;

export const enqueue = mutation({
  args: { ...vEnqueueItem.fields, config: vConfigUpdate, countShard: vCountShard },
  // A WorkId is a plain string to callers (component ids are opaque outside the component).
  returns: v.string(),
  handler: async (ctx, { config, countShard, ...item }): Promise<string> => {
    const now = Date.now();
    validateConfigUpdate(config, "config.");
    validateCountShard(countShard);
    const checked = validateEnqueueItem(item, now);
    await checkGroups(ctx.db, [item], () => "");
    await applyConfig(ctx, config);
    if (item.dedupeKey !== undefined) {
      const waiting = await findDuplicate(ctx, item.dedupeKey);
      if (waiting !== null) {
        checkSameFunction(waiting, item);
        if (item.group !== undefined && item.group !== waiting.group) {
          invalidArgument(
            "group",
            "must be the group of the waiting job with this dedupeKey",
            item.group,
          );
        }
        if (item.onDuplicate === "replace") {
          const newDueTime = item.runAt !== undefined || item.runAfter !== undefined;
          const target = newDueTime ? await wakeSegment(ctx, now, checked.runAt) : undefined;
          await replaceJob(ctx, waiting, item, checked, now, target);
        }
        return waiting._id;
      }
    }
    const workId = await enqueueOne(ctx, item, checked, now, countShard);
    if (item.dedupeKey !== undefined) await rememberDedupeKey(ctx, item.dedupeKey, workId);
    return workId;
  },
});

/** The segment an enqueue writes a job due at `runAt` into, with a pass made sure of there
 * (kick.ts): never one the loop is reading, and never a read of what the loop writes. `wake` is
 * the pass this enqueue scheduled, to record on the row it writes, if it was the segment's first. */
async function wakeSegment(ctx: MutationCtx, now: number, runAt: number): Promise<Target> {
  return await targetFor(ctx, now, dueSegment(runAt));
}

/** Writes one checked job into its segment (`wakeSegment`), and counts it. */
async function enqueueOne(
  ctx: MutationCtx,
  item: EnqueueItem,
  checked: CheckedItem,
  now: number,
  countShard?: number,
): Promise<Id<"work">> {
  const workId = await insertJob(
    ctx,
    item,
    checked,
    now,
    await wakeSegment(ctx, now, checked.runAt),
  );
  await countEnqueues(ctx, [item], countShard);
  return workId;
}

export const enqueueBatch = mutation({
  args: { items: v.array(vEnqueueItem), config: vConfigUpdate, countShard: vCountShard },
  returns: v.array(v.string()),
  handler: async (ctx, { items, config, countShard }): Promise<string[]> => {
    const now = Date.now();
    if (items.length > MAX_ENQUEUE_BATCH) {
      invalidArgument("items", `at most ${MAX_ENQUEUE_BATCH} jobs per call`, items.length);
    }
    validateConfigUpdate(config, "config.");
    validateCountShard(countShard);
    const checked = items.map((item, i) => {
      if (item.dedupeKey !== undefined) {
        invalidArgument(
          `items[${i}].dedupeKey`,
          "batches do not dedupe: enqueue such jobs one at a time",
          item.dedupeKey,
        );
      }
      return validateEnqueueItem(item, now, `items[${i}].`);
    });
    await checkGroups(ctx.db, items, (i) => `items[${i}].`);
    await applyConfig(ctx, config);
    if (items.length === 0) return [];
    // The segment's first job of the batch carries the wake-up, if this call scheduled it.
    const known = new Set<number>();
    const ids = await insertJobs(ctx, items, checked, now, (i) =>
      targetFor(ctx, now, dueSegment(checked[i].runAt), known),
    );
    await countEnqueues(ctx, items, countShard);
    return ids;
  },
});

/** Applies the config a cancel call carries (ours as `config`, the peer's as `logLevel`), waking
 * the loop when maxParallelism changed: raising it may let waiting work start. */
async function applyCancelConfig(
  ctx: MutationCtx,
  config: ConfigUpdate | undefined,
  logLevel: LogLevel | undefined,
): Promise<void> {
  const update = { ...config, ...(logLevel !== undefined ? { logLevel } : {}) };
  validateConfigUpdate(update, "config.");
  if (await applyConfig(ctx, update)) await claimSegment(ctx);
}

/**
 * Runs a finished job that failed or was canceled again, as a new job due now, with the same
 * function, args and options (rerun.ts); returns the new job's id. The old job keeps its one
 * onComplete and records the rerun (`retriedAs`): retrying it again returns that id and creates
 * nothing. Its dedupeKey is kept and dedupes as at enqueue. Anything else (an unknown, unfinished
 * or succeeded job) is rejected naming `id`.
 */
export const retry = mutation({
  args: { id: v.string(), config: v.optional(vConfigUpdate) },
  returns: v.string(),
  handler: async (ctx, { id, config }): Promise<string> => {
    const now = Date.now();
    if (config) validateConfigUpdate(config, "config.");
    const work = await ctx.db.get("work", parseWorkId(ctx.db, id));
    // Retried already (a double click, a "retry all" run twice): that run is the answer.
    if (work?.retriedAs !== undefined) {
      if (config) await applyConfig(ctx, config);
      return work.retriedAs;
    }
    const item = await rerunRequest(ctx.db, work, id);
    const checked = validateEnqueueItem(item, now);
    if (config) await applyConfig(ctx, config);
    // The kept dedupeKey dedupes as at enqueue: a pending job with it is the rerun.
    const waiting = item.dedupeKey === undefined ? null : await findDuplicate(ctx, item.dedupeKey);
    let rerun: Id<"work">;
    if (waiting !== null) {
      checkSameFunction(waiting, item, "id");
      rerun = waiting._id;
    } else {
      rerun = await enqueueOne(ctx, item, checked, now);
      if (item.dedupeKey !== undefined) await rememberDedupeKey(ctx, item.dedupeKey, rerun);
    }
    await ctx.db.patch("work", work!._id, { retriedAs: rerun });
    return rerun;
  },
});

/** Asks the loop to cancel a job. Pending work never starts; running work is not interrupted and is
 * not retried. An unknown (e.g. already swept) id is ignored. */
export const cancel = mutation({
  args: { id: v.string(), config: v.optional(vConfigUpdate), logLevel: v.optional(vLogLevel) },
  returns: v.null(),
  handler: async (ctx, { id, config, logLevel }) => {
    const workId = parseWorkId(ctx.db, id);
    await applyCancelConfig(ctx, config, logLevel);
    const work = await ctx.db.get("work", workId);
    if (work === null || work.state.kind === "finished") return null;
    await requestCancel(ctx, workId);
    return null;
  },
});

async function requestCancel(ctx: MutationCtx, workId: Id<"work">) {
  const segment = await claimSegment(ctx);
  await ctx.db.insert("pendingCancelation", { workId, segment });
}

/**
 * Cancels every job not yet finished, in transactions of `limit` jobs: this one marks the first
 * batch and schedules the next, so any number of jobs is canceled without an unbounded transaction.
 * It pages `work` in creation order, which no state change moves a job in: a job that goes from
 * running back to pending (a retry) between two pages is still met exactly once.
 */
export const cancelAll = mutation({
  args: {
    limit: v.optional(v.number()),
    before: v.optional(v.number()),
    /** Only this key's jobs. */
    key: v.optional(v.string()),
    config: v.optional(vConfigUpdate),
    logLevel: v.optional(vLogLevel),
  },
  returns: v.null(),
  handler: async (ctx, { limit, before, key, config, logLevel }) => {
    const batch = limit ?? DEFAULT_CANCEL_ALL_BATCH;
    if (!Number.isInteger(batch) || batch < 1 || batch > MAX_CANCEL_ALL_BATCH) {
      invalidArgument("limit", `must be a whole number from 1 to ${MAX_CANCEL_ALL_BATCH}`, batch);
    }
    if (before !== undefined && !Number.isFinite(before)) {
      invalidArgument("before", "must be a finite number", before);
    }
    if (key !== undefined) validateKey(key);
    await applyCancelConfig(ctx, config, logLevel);
    // Without `before`, cancel every job that exists now: up to the newest one, inclusive (jobs
    // enqueued after this call are not canceled).
    const newest = await jobsInCreationOrder(ctx, { key }).order("desc").first();
    if (newest === null) return null;
    await cancelAllPage(ctx, {
      limit: batch,
      before,
      key,
      upTo: before === undefined ? newest._creationTime : undefined,
    });
    return null;
  },
});

type CancelAllPage = {
  limit: number;
  /** Cancel only jobs created before this time (exclusive)... */
  before?: number;
  /** ...or up to this creation time (inclusive). */
  upTo?: number;
  /** Only this key's jobs. */
  key?: string;
  cursor?: string;
};

/** Jobs (of one key, if given) in creation order, within `before` or `upTo`. */
function jobsInCreationOrder(
  ctx: MutationCtx,
  { key, before, upTo }: Pick<CancelAllPage, "key" | "before" | "upTo">,
) {
  const upToCreation = upTo ?? Number.POSITIVE_INFINITY;
  return key === undefined
    ? ctx.db
        .query("work")
        .withIndex("by_creation_time", (q) =>
          before !== undefined
            ? q.lt("_creationTime", before)
            : q.lte("_creationTime", upToCreation),
        )
    : ctx.db
        .query("work")
        .withIndex("by_key", (q) =>
          before !== undefined
            ? q.eq("key", key).lt("_creationTime", before)
            : q.eq("key", key).lte("_creationTime", upToCreation),
        );
}

async function cancelAllPage(ctx: MutationCtx, args: CancelAllPage) {
  const page = await jobsInCreationOrder(ctx, args).paginate({
    numItems: args.limit,
    cursor: args.cursor ?? null,
  });
  const targets = page.page.filter((work) => work.state.kind !== "finished");
  const segment = targets.length > 0 ? await claimSegment(ctx) : 0;
  for (const work of targets) {
    await ctx.db.insert("pendingCancelation", { workId: work._id, segment });
  }
  if (!page.isDone) {
    await ctx.scheduler.runAfter(0, internal.lib.cancelAllContinue, {
      ...args,
      cursor: page.continueCursor,
    });
  }
}

/** The next page of a cancelAll. */
export const cancelAllContinue = internalMutation({
  args: {
    limit: v.number(),
    before: v.optional(v.number()),
    upTo: v.optional(v.number()),
    key: v.optional(v.string()),
    cursor: v.optional(v.string()),
  },
  returns: v.null(),
  handler: async (ctx, args) => {
    await cancelAllPage(ctx, args);
    return null;
  },
});

export const status = query({
  args: { id: v.string() },
  returns: vStatus,
  handler: async (ctx, { id }) => {
    const workId = parseWorkId(ctx.db, id);
    return deriveStatus(await ctx.db.get("work", workId));
  },
});

export const statusBatch = query({
  args: { ids: v.array(v.string()) },
  returns: v.array(vStatus),
  handler: async (ctx, { ids }) => {
    if (ids.length > MAX_STATUS_BATCH) {
      invalidArgument("ids", `at most ${MAX_STATUS_BATCH} ids per call`, ids.length);
    }
    const workIds = ids.map((id, i) => parseWorkId(ctx.db, id, `ids[${i}]`));
    return await Promise.all(
      workIds.map(async (workId) => deriveStatus(await ctx.db.get("work", workId))),
    );
  },
});

/** Everything retained about a job (its result too), or null once it was swept. */
export const info = query({
  args: { id: v.string() },
  returns: v.union(vWorkInfo, v.null()),
  handler: async (ctx, { id }) => {
    const workId = parseWorkId(ctx.db, id);
    return await deriveInfo(ctx.db, await ctx.db.get("work", workId));
  },
});

/**
 * Completes the current attempt of a job enqueued with `manualCompletion` (API-EXTENSIONS section
 * 11), or, given `attempt` (its previousAttempts), that attempt only. True when the completion was
 * filed for the loop; false when it decides nothing (finished, canceled, timed out, unknown, not
 * waiting for a completion, or completed already). Never throws for those.
 */
export const complete = mutation({
  args: { id: v.string(), outcome: vCompletionOutcome, attempt: v.optional(v.number()) },
  returns: v.boolean(),
  handler: async (ctx, args) => await fileCompletion(ctx, args),
});
