// An import of many rows through emailPool as one group (API-EXTENSIONS §12): each row is a job
// that joins the import's group, the group is closed once every row is enqueued, and its one
// onComplete marks the import finished with the counts. The import's page reads `importProgress`,
// a reactive query whose cost does not grow with the number of rows (the group's status is a
// constant number of reads).
import { v } from "convex/values";
import { NonRetryableError, type GroupId, type GroupStatus } from "convex-workpool";
import { internal } from "./_generated/api.js";
import type { Doc, Id } from "./_generated/dataModel.js";
import {
  internalAction,
  internalMutation,
  mutation,
  query,
  type MutationCtx,
} from "./_generated/server.js";
import { emailPool } from "./pools.js";
import { attemptFails, sleep, workMs } from "./sim.js";

const vSim = { ms: v.number(), failRate: v.number(), seed: v.number() };
const vCounts = v.object({ succeeded: v.number(), failed: v.number(), canceled: v.number() });

/** The most rows one `startImport` call takes: one mutation enqueues them all (a larger import
 * calls `addRows` from more mutations before `finishEnqueueing`, as jobs may join from any number
 * of transactions). */
export const MAX_ROWS_PER_CALL = 1000;

/** Imports one row (simulated): an empty title is bad data, not worth retrying; otherwise an
 * attempt fails when the seeded rule says so, and emailPool retries it. */
export const importRow = internalAction({
  args: { key: v.string(), title: v.string(), ...vSim },
  returns: v.null(),
  handler: async (_ctx, { key, title, ms, failRate, seed }) => {
    if (title.trim() === "") throw new NonRetryableError(`row ${key}: no title`);
    await sleep(workMs(seed, key, ms));
    // One draw per row: a row that fails, fails on every attempt (emailPool retries it first).
    if (attemptFails(seed, key, 1, failRate)) throw new Error(`row ${key}: store unavailable`);
    return null;
  },
});

const vRow = v.object({ key: v.string(), title: v.string() });

/** Enqueues `rows` into the import's group. */
async function enqueueRows(
  ctx: MutationCtx,
  group: GroupId,
  rows: Array<{ key: string; title: string }>,
  sim: { ms: number; failRate: number; seed: number },
): Promise<void> {
  if (rows.length > MAX_ROWS_PER_CALL) {
    throw new Error(`example: at most ${MAX_ROWS_PER_CALL} rows per call, not ${rows.length}`);
  }
  await emailPool.enqueueActionBatch(
    ctx,
    internal.imports.importRow,
    rows.map((row) => ({ ...row, ...sim })),
    { group },
  );
}

/**
 * Starts an import named `name`: a group whose onComplete is `importDone`, the rows given enqueued
 * into it, and (unless `more`: rows still to come through `addRows`) the group closed. Returns the
 * import's id.
 */
export const startImport = mutation({
  args: { name: v.string(), rows: v.array(vRow), more: v.optional(v.boolean()), ...vSim },
  returns: v.id("imports"),
  handler: async (ctx, { name, rows, more, ...sim }): Promise<Id<"imports">> => {
    const importId = await ctx.db.insert("imports", { name, startedAt: Date.now() });
    const group = await emailPool.createGroup(ctx, {
      name,
      onComplete: internal.imports.importDone,
      context: { importId },
    });
    await ctx.db.patch("imports", importId, { groupId: group });
    await enqueueRows(ctx, group, rows, sim);
    if (!more) await emailPool.closeGroup(ctx, group);
    return importId;
  },
});

/** The group of an import that is still taking rows. */
async function openGroup(ctx: MutationCtx, importId: Id<"imports">): Promise<GroupId> {
  const row = await ctx.db.get("imports", importId);
  if (row?.groupId === undefined) throw new Error(`example: no import ${importId}`);
  return row.groupId as GroupId;
}

/** Adds rows to an import started with `more` (another transaction joining the same group). */
export const addRows = mutation({
  args: { importId: v.id("imports"), rows: v.array(vRow), ...vSim },
  returns: v.null(),
  handler: async (ctx, { importId, rows, ...sim }) => {
    await enqueueRows(ctx, await openGroup(ctx, importId), rows, sim);
    return null;
  },
});

/** Ends an import's rows: once they have all finished, `importDone` runs. */
export const finishEnqueueing = mutation({
  args: { importId: v.id("imports") },
  returns: v.null(),
  handler: async (ctx, { importId }) => {
    await emailPool.closeGroup(ctx, await openGroup(ctx, importId));
    return null;
  },
});

/** The group's onComplete: runs once, after the import's last row finished. */
export const importDone = internalMutation({
  args: { groupId: v.string(), context: v.object({ importId: v.id("imports") }), counts: vCounts },
  returns: v.null(),
  handler: async (ctx, { context, counts }) => {
    const row = await ctx.db.get("imports", context.importId);
    // Called once per group; a second call would be a pool bug, and is refused loudly.
    if (row?.finished !== undefined) throw new Error(`example: import ${row.name} finished twice`);
    await ctx.db.patch("imports", context.importId, { finished: { counts, at: Date.now() } });
    return null;
  },
});

/** What the import's page shows: the group's live progress and, once it ran, the import's own
 * record of its onComplete. */
export const importProgress = query({
  args: { importId: v.id("imports") },
  handler: async (
    ctx,
    { importId },
  ): Promise<{
    name: string;
    status: GroupStatus | null;
    finished?: Doc<"imports">["finished"];
  }> => {
    const row = await ctx.db.get("imports", importId);
    if (row === null) throw new Error(`example: no import ${importId}`);
    const status =
      row.groupId === undefined ? null : await emailPool.groupStatus(ctx, row.groupId as GroupId);
    return { name: row.name, status, ...(row.finished ? { finished: row.finished } : {}) };
  },
});
