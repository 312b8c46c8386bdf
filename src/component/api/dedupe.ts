/**
 * Dedupe (debounce): an enqueue with a `dedupeKey` whose job is still waiting for its first start
 * creates nothing and returns that job (with `onDuplicate: "replace"`, after giving it the new
 * args, and the new context, onComplete, manualCompletion and due time when the enqueue gives them). Owns the
 * `dedupe` table: one row per key (found by a hash of it), pointing at the key's latest job. A
 * duplicate must run the same function as the job it dedupes into. Only enqueue, retry and whoever
 * deletes finished jobs call this; the loop never reads or writes that table, so a dedupe lookup
 * conflicts only with enqueues of the same key (and "replace" with the loop only on that one job).
 */
import type { Doc, Id } from "../_generated/dataModel.js";
import type { MutationCtx } from "../_generated/server.js";
import type { CheckedItem, EnqueueItem } from "./enqueue.js";
import type { Target } from "./kick.js";
import { dedupeHash } from "../model/dedupeHash.js";
import { invalidArgument } from "../model/errors.js";
import { dueSegment } from "../model/segments.js";
import { checkArgsAndContext, MAX_KEY_LENGTH } from "../model/validate.js";

/** Rows of `dedupe` that one hash value shares before a lookup gives up: each is a collision of
 * two keys' hashes, which 64 bits make all but impossible; the bound keeps the read bounded. */
const HASH_ROWS = 8;

/** The `dedupe` row of `dedupeKey`, if any: by its hash, or as a row from before 0.2.0. */
async function dedupeRow(ctx: MutationCtx, dedupeKey: string): Promise<Doc<"dedupe"> | null> {
  const sharing = await ctx.db
    .query("dedupe")
    .withIndex("by_hash", (q) => q.eq("hash", dedupeHash(dedupeKey)))
    .take(HASH_ROWS);
  const row = sharing.find((candidate) => candidate.fullKey === dedupeKey);
  if (row !== undefined) return row;
  if (dedupeKey.length > MAX_KEY_LENGTH) return null; // older rows hold short keys only
  return await ctx.db
    .query("dedupe")
    .withIndex("by_dedupeKey", (q) => q.eq("dedupeKey", dedupeKey))
    .first();
}

/** The job `dedupeKey` points at, if it is pending and has never started, nor been asked to
 * cancel: the job an enqueue with that key dedupes into. */
export async function findDuplicate(
  ctx: MutationCtx,
  dedupeKey: string,
): Promise<Doc<"work"> | null> {
  const row = await dedupeRow(ctx, dedupeKey);
  if (row === null) return null;
  const work = await ctx.db.get("work", row.workId);
  if (work === null || work.state.kind !== "pending") return null;
  if (work.attempts > 0 || (work.snoozes ?? 0) > 0) return null;
  const cancel = await ctx.db
    .query("pendingCancelation")
    .withIndex("by_workId", (q) => q.eq("workId", work._id))
    .first();
  return cancel === null ? work : null;
}

/** Rejects a duplicate that would run another function than the job it dedupes into: the caller
 * asked for work the pending job will not do. Writes nothing. */
export function checkSameFunction(
  waiting: Doc<"work">,
  item: Pick<EnqueueItem, "fnHandle" | "fnType" | "dedupeKey" | "task">,
  argument = "dedupeKey",
): void {
  const same =
    waiting.fnHandle === item.fnHandle &&
    waiting.fnType === item.fnType &&
    waiting.task === item.task;
  if (!same) {
    invalidArgument(
      argument,
      `a pending job with this dedupeKey runs another function (${waiting.fnName}); a duplicate must run the same one`,
      item.dedupeKey,
    );
  }
}

/** Points `dedupeKey` at a job just enqueued with it. */
export async function rememberDedupeKey(
  ctx: MutationCtx,
  dedupeKey: string,
  workId: Id<"work">,
): Promise<void> {
  const row = await dedupeRow(ctx, dedupeKey);
  const fields = { hash: dedupeHash(dedupeKey), fullKey: dedupeKey, workId };
  // A row from before 0.2.0 takes the new form as it is reused.
  if (row) await ctx.db.replace("dedupe", row._id, fields);
  else await ctx.db.insert("dedupe", fields);
}

/**
 * Gives a waiting job what a duplicate enqueue brought: its args always; its context, onComplete,
 * manualCompletion (API-EXTENSIONS §11: the job has not started, so no attempt waits yet) and due
 * time when given. A due time moves the job's pendingStart row to the target segment
 * (kick.ts) or later, with the target's wake-up unless the row already records one (for its old
 * segment, whose later enqueues rely on it; the new pass then runs unrecorded, and a later enqueue
 * into its segment schedules another, which is harmless). A keyed job that already waits in its
 * key's queue is past its due time and keeps its place there (the key's queue is the loop's).
 */
export async function replaceJob(
  ctx: MutationCtx,
  work: Doc<"work">,
  item: EnqueueItem,
  { runAt }: CheckedItem,
  now: number,
  target: Target | undefined,
): Promise<void> {
  const payload = work.payloadId ? await ctx.db.get("payloads", work.payloadId) : null;
  const oldContext = payload ? payload.context : work.onComplete?.context;
  const context = item.onComplete?.context !== undefined ? item.onComplete.context : oldContext;
  const onComplete = item.onComplete ?? work.onComplete;
  // The new args with the context the job keeps must fit one payload row, as at enqueue.
  const { inline } = checkArgsAndContext(
    item.fnArgs,
    context,
    "",
    "args plus the context the waiting job keeps",
  );
  if (work.payloadId) await ctx.db.delete("payloads", work.payloadId);
  const large = !inline;
  const payloadId = large
    ? await ctx.db.insert("payloads", { fnArgs: item.fnArgs, context })
    : undefined;
  const start =
    target === undefined
      ? null
      : await ctx.db
          .query("pendingStart")
          .withIndex("by_workId", (q) => q.eq("workId", work._id))
          .first();
  const dueAt = Math.max(runAt, now);
  await ctx.db.patch("work", work._id, {
    fnArgs: large ? undefined : item.fnArgs,
    payloadId,
    onComplete: onComplete && {
      fnHandle: onComplete.fnHandle,
      context: large ? undefined : context,
      excludeKinds: onComplete.excludeKinds,
    },
    ...(item.manualCompletion !== undefined ? { manualCompletion: item.manualCompletion } : {}),
    ...(start !== null ? { listAt: dueAt } : {}),
  });
  if (start !== null && target !== undefined) {
    await ctx.db.patch("pendingStart", start._id, {
      runAt: dueAt,
      segment: target.early ? target.segment : Math.max(target.segment, dueSegment(runAt)),
      early: target.early,
      ...(start.wake === undefined && target.wake !== undefined ? { wake: target.wake } : {}),
    });
  }
}

/** Drops the dedupe rows that point at jobs being deleted (by the sweeper, or by delivery). */
export async function forgetDedupeKeys(ctx: MutationCtx, deleted: Doc<"work">[]): Promise<void> {
  for (const work of deleted) {
    if (work.dedupeKey === undefined) continue;
    const row = await dedupeRow(ctx, work.dedupeKey);
    if (row !== null && row.workId === work._id) await ctx.db.delete("dedupe", row._id);
  }
}
