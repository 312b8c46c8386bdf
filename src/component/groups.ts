/**
 * Groups, the public API (API-EXTENSIONS section 12, in part): `createGroup`, `closeGroup`,
 * `cancelGroup` and `groupStatus`. A job joins a group at enqueue (`group`, api/groups.ts checks it); the loop counts
 * the group's running and finished jobs (mainLoop/groups.ts) and marks it done when it is closed
 * and its last job finished. Never changes a job's state and never writes the loop's counts.
 * `cancelGroup` closes a group and cancels its jobs a page at a time. The group's onComplete is
 * runners/groupCallback.ts. Not yet here: the admin
 * functions.
 */
import { v } from "convex/values";
import type { Doc, Id } from "./_generated/dataModel.js";
import { internalMutation, mutation, query, type MutationCtx } from "./_generated/server.js";
import { claimSegment } from "./api/kick.js";
import { GROUP_STATUS_TTL_MS } from "./mainLoop/groups.js";
import { DEFAULT_CANCEL_ALL_BATCH, MAX_CANCEL_ALL_BATCH } from "./lib.js";
import { deriveGroupStatus, groupCounts, groupTotal, parseGroupId } from "./api/groups.js";
import { internal } from "./_generated/api.js";
import { described, invalidArgument } from "./model/errors.js";
import { MAX_NAME_LENGTH, validateFunctionHandle, validateString } from "./model/validate.js";
import { fitsInline, measureValue } from "./model/valueMeasure.js";
import { INLINE_VALUE_BYTES } from "./model/payloads.js";
import { vGroupStatus } from "./model/validators.js";

/** Creates an open group; returns its id, for enqueues (`group`), `closeGroup` and `groupStatus`. */
export const createGroup = mutation({
  args: {
    name: v.optional(v.string()),
    /** A mutation handle, called once the group is done, as `{ groupId, context, counts }`. */
    onComplete: v.optional(v.string()),
    context: v.optional(v.any()),
  },
  returns: v.string(),
  handler: async (ctx, { name, onComplete, context }): Promise<string> => {
    if (name !== undefined) validateString(name, MAX_NAME_LENGTH, "name");
    if (onComplete !== undefined) validateFunctionHandle(onComplete, "onComplete");
    if (context !== undefined && !fitsInline("context", measureValue(context))) {
      invalidArgument(
        "context",
        `must fit inline in the group's row (at most ${INLINE_VALUE_BYTES} bytes, nested as a job's context may be)`,
        described("a larger value"),
      );
    }
    return await ctx.db.insert("groups", {
      ...(name !== undefined ? { name } : {}),
      ...(onComplete !== undefined ? { onComplete: { fnHandle: onComplete, context } } : {}),
      closed: false,
      createdAt: Date.now(),
    });
  },
});

/** Ends joining: later enqueues into the group are rejected. A group whose jobs have all finished
 * by then is done at once. Closing a closed group does nothing. */
export const closeGroup = mutation({
  args: { id: v.string() },
  returns: v.null(),
  handler: async (ctx, { id }) => {
    await close(ctx, await knownGroup(ctx, id));
    return null;
  },
});

/** The group a caller names; an unknown or malformed id is an invalid argument. */
async function knownGroup(ctx: MutationCtx, id: string): Promise<Doc<"groups">> {
  const group = await ctx.db.get("groups", parseGroupId(ctx.db, id, "id"));
  if (group === null) invalidArgument("id", "must be a group this pool created", id);
  return group;
}

/** Closes the group (if open), marking it done when every job of it has finished. */
async function close(ctx: MutationCtx, group: Doc<"groups">): Promise<void> {
  if (group.closed) return;
  const groupId = group._id;
  const { succeeded, failed, canceled } = await groupCounts(ctx.db, groupId);
  // The loop reads this row when it finishes a job of the group, and writes the counts read
  // here: whichever commits second sees the other, so exactly one of them marks it done.
  const done = succeeded + failed + canceled >= (await groupTotal(ctx.db, groupId));
  await ctx.db.patch("groups", groupId, {
    closed: true,
    ...(done ? { finishedAt: Date.now(), expiresAt: Date.now() + GROUP_STATUS_TTL_MS } : {}),
  });
  if (done) {
    await ctx.scheduler.runAfter(0, internal.runners.groupCallback.notify, { groupId });
  }
}

/**
 * Closes the group and cancels its unfinished jobs as `cancel` does, `limit` jobs per transaction
 * (this one takes the first page and schedules the next, as `cancelAll` does). A group that is
 * done already is left as it is.
 */
export const cancelGroup = mutation({
  args: { id: v.string(), limit: v.optional(v.number()) },
  returns: v.null(),
  handler: async (ctx, { id, limit }) => {
    const batch = limit ?? DEFAULT_CANCEL_ALL_BATCH;
    if (!Number.isInteger(batch) || batch < 1 || batch > MAX_CANCEL_ALL_BATCH) {
      invalidArgument("limit", `must be a whole number from 1 to ${MAX_CANCEL_ALL_BATCH}`, batch);
    }
    const group = await knownGroup(ctx, id);
    if (group.finishedAt !== undefined) return null;
    await close(ctx, group);
    await cancelGroupPage(ctx, { groupId: group._id, limit: batch });
    return null;
  },
});

/** Asks the loop to cancel one page of the group's jobs (in enqueue order, which no state change
 * moves a job in), and schedules the next page. */
async function cancelGroupPage(
  ctx: MutationCtx,
  { groupId, limit, cursor }: { groupId: Id<"groups">; limit: number; cursor?: string },
): Promise<void> {
  const page = await ctx.db
    .query("work")
    .withIndex("by_group", (q) => q.eq("group", groupId))
    .paginate({ numItems: limit, cursor: cursor ?? null });
  let segment: number | undefined;
  for (const work of page.page) {
    if (work.state.kind === "finished" || work.canceled === true) continue;
    segment ??= await claimSegment(ctx);
    await ctx.db.insert("pendingCancelation", { workId: work._id, segment });
  }
  if (!page.isDone) {
    await ctx.scheduler.runAfter(0, internal.groups.cancelGroupContinue, {
      groupId,
      limit,
      cursor: page.continueCursor,
    });
  }
}

/** The next page of a `cancelGroup`. */
export const cancelGroupContinue = internalMutation({
  args: { groupId: v.id("groups"), limit: v.number(), cursor: v.string() },
  returns: v.null(),
  handler: async (ctx, args) => {
    await cancelGroupPage(ctx, args);
    return null;
  },
});

/** A group's progress, exact, from a constant number of reads however large the group; null for a
 * group the pool does not know. */
export const groupStatus = query({
  args: { id: v.string() },
  returns: v.union(vGroupStatus, v.null()),
  handler: async (ctx, { id }) => {
    const group = await ctx.db.get("groups", parseGroupId(ctx.db, id, "id"));
    return group === null ? null : await deriveGroupStatus(ctx.db, group);
  },
});
