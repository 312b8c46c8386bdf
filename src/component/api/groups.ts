/**
 * Groups, the callers' side (API-EXTENSIONS section 12): checking an enqueue's `group` (known and
 * open), counting a call's jobs in their groups' ledger shards, and reading a group's progress from
 * a constant number of rows (its row, its ledger's shards, the loop's `groupState`). Appends and
 * counts only: never changes a job's state and never writes what the loop counts.
 */
import type { Doc, Id } from "../_generated/dataModel.js";
import type { DatabaseReader, MutationCtx } from "../_generated/server.js";
import { invalidArgument } from "../model/errors.js";
import type { GroupStatus } from "../model/validators.js";

/** Parses a GroupId given by a caller; a malformed one is an invalid argument. */
export function parseGroupId(db: DatabaseReader, id: string, argument: string): Id<"groups"> {
  const parsed = db.normalizeId("groups", id);
  if (parsed === null) invalidArgument(argument, "must be a GroupId returned by createGroup", id);
  return parsed;
}

/** Checks the `group` of each item: a group the pool knows, still open. Reads each group once;
 * throws (before anything is written) naming the item's `group`. */
export async function checkGroups(
  db: DatabaseReader,
  items: ReadonlyArray<{ group?: string }>,
  prefixOf: (index: number) => string,
): Promise<void> {
  const open = new Map<string, boolean>();
  for (const [i, { group }] of items.entries()) {
    if (group === undefined) continue;
    const argument = `${prefixOf(i)}group`;
    let known = open.get(group);
    if (known === undefined) {
      const row = await db.get("groups", parseGroupId(db, group, argument));
      if (row === null) invalidArgument(argument, "must be a group this pool created", group);
      known = !row.closed;
      open.set(group, known);
    }
    if (!known) invalidArgument(argument, "must be an open group (this one was closed)", group);
  }
}

/** Adds a call's jobs to their groups' ledger rows, in the call's shard (`countEnqueues`). */
export async function countGroupEnqueues(
  ctx: MutationCtx,
  items: ReadonlyArray<{ group?: string }>,
  shard: number,
): Promise<void> {
  const perGroup = new Map<string, number>();
  for (const { group } of items) {
    if (group !== undefined) perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
  }
  for (const [group, count] of perGroup) {
    const groupId = group as Id<"groups">;
    const ledger = await ctx.db
      .query("groupLedger")
      .withIndex("by_groupShard", (q) => q.eq("groupId", groupId).eq("shard", shard))
      .first();
    if (ledger) {
      await ctx.db.patch("groupLedger", ledger._id, { enqueued: ledger.enqueued + count });
    } else {
      await ctx.db.insert("groupLedger", { groupId, shard, enqueued: count });
    }
  }
}

/** How many jobs joined the group: the sum of its ledger's rows (one range, at most one row per
 * shard). */
export async function groupTotal(db: DatabaseReader, groupId: Id<"groups">): Promise<number> {
  const rows = await db
    .query("groupLedger")
    .withIndex("by_groupShard", (q) => q.eq("groupId", groupId))
    .collect();
  return rows.reduce((sum, row) => sum + row.enqueued, 0);
}

/** The loop's counts of a group (zeros before its first job started or finished). */
export async function groupCounts(
  db: DatabaseReader,
  groupId: Id<"groups">,
): Promise<Pick<Doc<"groupState">, "running" | "succeeded" | "failed" | "canceled">> {
  const state = await db
    .query("groupState")
    .withIndex("by_group", (q) => q.eq("groupId", groupId))
    .first();
  return state ?? { running: 0, succeeded: 0, failed: 0, canceled: 0 };
}

/** A group's progress: its row, its ledger and the loop's counts (a constant number of reads). */
export async function deriveGroupStatus(
  db: DatabaseReader,
  group: Doc<"groups">,
): Promise<GroupStatus> {
  const total = await groupTotal(db, group._id);
  const { running, succeeded, failed, canceled } = await groupCounts(db, group._id);
  const finished = succeeded + failed + canceled;
  return {
    id: group._id,
    ...(group.name !== undefined ? { name: group.name } : {}),
    closed: group.closed,
    done: group.finishedAt !== undefined,
    total,
    pending: total - finished - running,
    running,
    succeeded,
    failed,
    canceled,
    createdAt: group.createdAt,
    ...(group.finishedAt !== undefined ? { finishedAt: group.finishedAt } : {}),
  };
}
