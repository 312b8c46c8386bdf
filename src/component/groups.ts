/**
 * Groups, the public API (API-EXTENSIONS section 12, in part): `createGroup`, `closeGroup` and
 * `groupStatus`. A job joins a group at enqueue (`group`, api/groups.ts checks it); the loop counts
 * the group's running and finished jobs (mainLoop/groups.ts) and marks it done when it is closed
 * and its last job finished. Never changes a job's state and never writes the loop's counts.
 * The group's onComplete is runners/groupCallback.ts. Not yet here: cancelGroup, `list({ group })`, retry into a group, the admin
 * functions, and deleting a finished group's rows after statusTtl.
 */
import { v } from "convex/values";
import { mutation, query } from "./_generated/server.js";
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
    const groupId = parseGroupId(ctx.db, id, "id");
    const group = await ctx.db.get("groups", groupId);
    if (group === null) invalidArgument("id", "must be a group this pool created", id);
    if (group.closed) return null;
    const { succeeded, failed, canceled } = await groupCounts(ctx.db, groupId);
    // The loop reads this row when it finishes a job of the group, and writes the counts read
    // here: whichever commits second sees the other, so exactly one of them marks it done.
    const done = succeeded + failed + canceled >= (await groupTotal(ctx.db, groupId));
    await ctx.db.patch("groups", groupId, {
      closed: true,
      ...(done ? { finishedAt: Date.now() } : {}),
    });
    if (done) {
      await ctx.scheduler.runAfter(0, internal.runners.groupCallback.notify, { groupId });
    }
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
