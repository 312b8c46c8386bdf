/**
 * Keys, the loop's side: each key's settings, queue and counts, as stored. A keyed job that may
 * not start yet waits in `keyQueue`, in the key's order (a job holds its key's slot from its first
 * start until it finishes, through retry backoffs). A pass loads a key's row once (`keyEntry`),
 * changes it in memory, and `flushKeys` writes it back at the end. Who may start next, and which
 * keys `keyReady` lists, is the start stage's decision (start.ts, by model/startOrder.ts's rules),
 * never this module's.
 * Only the loop calls this; it never reads what enqueue writes (`keyLedger`), and never scans a
 * key's queue (it reads heads).
 */
import type { Doc, Id } from "../_generated/dataModel.js";
import type { StoredPriority } from "../model/validators.js";
import { DEFAULT_WEIGHT, type KeyView } from "../model/startOrder.js";
import type { Pass } from "./pass.js";

/** A key's counts as the loop keeps them (`keyState` without its system fields). */
export type KeyCounts = Omit<Doc<"keyState">, "_id" | "_creationTime">;

/** One key as a pass sees it: what the start order reads of it (its settings in force, resolved
 * once when the pass loads it, and its counts), and whether the pass changed it. */
export type KeyEntry = KeyView & {
  rowId: Id<"keyState"> | undefined;
  counts: KeyCounts;
  dirty: boolean;
  /** The key's `keyReady` row as this pass last read or wrote it (undefined: not read). */
  listed?: Doc<"keyReady"> | null;
  /** The key's queue head as this pass last read it (undefined: not read since the queue changed). */
  head?: Doc<"keyQueue"> | null;
};

/** Rank of a queued job that holds its key's slot (a retry due while its key is paused): it goes
 * first, since the key's other jobs are behind it in order. */
export const RANK_HOLDER = 0;
/** Ranks in a key's queue: the holder, then waiting jobs by priority (high, normal, low). */
const RANKS = 4;

/** The rank of a waiting job of `priority`: 1, 2 or 3 for high, normal and low. */
export function waitingRank(priority: StoredPriority): number {
  return priority === "high" ? 1 : priority === "low" ? 3 : 2;
}

function emptyCounts(key: string): KeyCounts {
  return { key, active: 0, running: 0, queued: 0, succeeded: 0, failed: 0, canceled: 0 };
}

/** Queued jobs of the key at `rank`. */
function queuedAt(entry: KeyEntry, rank: number): number {
  return entry.counts.queuedByRank?.[rank] ?? 0;
}

/** Adds `delta` to the key's queued count, in total and at `rank`. */
function countQueued(entry: KeyEntry, rank: number, delta: number): void {
  const byRank = entry.counts.queuedByRank ?? new Array<number>(RANKS).fill(0);
  byRank[rank] += delta;
  entry.counts.queuedByRank = byRank;
  updateKey(entry, { queued: delta });
}

/** The key's entry for this pass, read once per pass. Every per-key table holds one row per key
 * (each inserter looks for the row first, and OCC serializes inserters), so `first()` is the row:
 * it reads one document where `unique()` would read two. */
export async function keyEntry(pass: Pass, key: string): Promise<KeyEntry> {
  const cached = pass.keys.get(key);
  if (cached) return cached;
  const row = await pass.ctx.db
    .query("keyState")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  const settings = await pass.ctx.db
    .query("keySettings")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  const counts: KeyCounts = row === null ? emptyCounts(key) : withoutSystemFields(row);
  const entry: KeyEntry = {
    rowId: row?._id,
    counts,
    limit: settings?.parallelism ?? pass.config.keyParallelism,
    paused: settings?.paused ?? false,
    weight: settings?.weight ?? DEFAULT_WEIGHT,
    reserve: settings?.reserve ?? 0,
    // false: exempt from the pool's keyRateLimit.
    rateLimit:
      settings?.rateLimit === false ? undefined : (settings?.rateLimit ?? pass.config.keyRateLimit),
    dirty: false,
  };
  pass.keys.set(key, entry);
  return entry;
}

function withoutSystemFields(row: Doc<"keyState">): KeyCounts {
  const counts: Partial<Doc<"keyState">> = { ...row };
  delete counts._id;
  delete counts._creationTime;
  return counts as KeyCounts;
}

type CountField = "active" | "running" | "queued" | "succeeded" | "failed" | "canceled";

/** Applies `change` to the key's counts; written back by `flushKeys`. */
export function updateKey(entry: KeyEntry, change: Partial<Record<CountField, number>>): void {
  for (const [field, delta] of Object.entries(change) as Array<[keyof typeof change, number]>) {
    entry.counts[field] += delta;
  }
  entry.dirty = true;
}

/** Puts a due job of the key in its queue, behind the key's earlier jobs. */
export async function queueForKey(
  pass: Pass,
  entry: KeyEntry,
  job: { workId: Id<"work">; runAt: number; holdsSlot: boolean; priority: StoredPriority },
): Promise<void> {
  const rank = job.holdsSlot ? RANK_HOLDER : waitingRank(job.priority);
  await pass.ctx.db.insert("keyQueue", {
    key: entry.counts.key,
    workId: job.workId,
    rank,
    runAt: job.runAt,
    priority: job.priority,
  });
  entry.head = undefined;
  countQueued(entry, rank, 1);
}

/** How far before the last started head a head read starts: a queued job's due time is at most
 * a little older than that of jobs queued before it (jobs are queued as the loop reads them, in due
 * segment order, from its cursor less a second), so two seconds covers it. */
export const HEAD_MARGIN_MS = 2_000;

/**
 * The first job in the key's queue, if any: a queued retry holding its slot, else the earliest
 * waiting job of the highest priority. Only ranks that hold jobs are read (their counts say which),
 * and the read of a rank starts near the last one of it started (`headFromByRank`), not at the
 * front of the key's index range: a real deployment keeps the index entries of deleted rows until
 * compaction, and a key that started thousands of queued jobs would walk all of them for each head.
 * Should a queued job ever sort below that start, the read falls back to the front (it is never
 * lost: the count says the queue is not empty).
 */
export async function queueHead(pass: Pass, entry: KeyEntry): Promise<Doc<"keyQueue"> | null> {
  if (entry.head === undefined) entry.head = await readHead(pass, entry);
  return entry.head;
}

/** The queued job of the key that holds its slot, if any (it may start even when the key is full). */
export async function queueHolder(pass: Pass, entry: KeyEntry): Promise<Doc<"keyQueue"> | null> {
  if (entry.head !== undefined) return entry.head?.rank === RANK_HOLDER ? entry.head : null;
  if (queuedAt(entry, RANK_HOLDER) <= 0) return null;
  return await pass.ctx.db
    .query("keyQueue")
    .withIndex("by_key", (q) => q.eq("key", entry.counts.key).eq("rank", RANK_HOLDER))
    .first();
}

async function readHead(pass: Pass, entry: KeyEntry): Promise<Doc<"keyQueue"> | null> {
  const { key, queued } = entry.counts;
  if (queued <= 0) return null;
  const holder = await queueHolder(pass, entry);
  if (holder !== null) return holder;
  for (let rank = RANK_HOLDER + 1; rank < RANKS; rank++) {
    if (queuedAt(entry, rank) <= 0) continue;
    const from = entry.counts.headFromByRank?.[rank];
    const queue = () => pass.ctx.db.query("keyQueue");
    if (from !== undefined && from !== null) {
      const near = await queue()
        .withIndex("by_key", (q) =>
          q
            .eq("key", key)
            .eq("rank", rank)
            .gte("runAt", from - HEAD_MARGIN_MS),
        )
        .first();
      if (near !== null) return near;
    }
    const front = await queue()
      .withIndex("by_key", (q) => q.eq("key", key).eq("rank", rank))
      .first();
    if (front !== null) return front;
  }
  return null;
}

/** Records that the queue's head was started (taken off the queue). */
export function startedHead(entry: KeyEntry, head: Doc<"keyQueue">): void {
  entry.head = undefined;
  countQueued(entry, head.rank, -1);
  if (head.rank === RANK_HOLDER) return;
  updateKey(entry, { active: 1 });
  const byRank = entry.counts.headFromByRank ?? new Array<number | null>(RANKS).fill(null);
  byRank[head.rank] = Math.max(byRank[head.rank] ?? head.runAt, head.runAt);
  entry.counts.headFromByRank = byRank;
}

/** Removes a canceled job from its key's queue; true when it was there. */
export async function unqueue(pass: Pass, workId: Id<"work">, key: string): Promise<boolean> {
  const row = await pass.ctx.db
    .query("keyQueue")
    .withIndex("by_workId", (q) => q.eq("workId", workId))
    .first();
  if (row === null) return false;
  await pass.ctx.db.delete("keyQueue", row._id);
  const entry = await keyEntry(pass, key);
  entry.head = undefined;
  countQueued(entry, row.rank, -1);
  return true;
}

/** Writes back every key the pass changed (start.ts `listKeys` placed them in `keyReady` first). */
export async function flushKeys(pass: Pass): Promise<void> {
  for (const entry of pass.keys.values()) {
    if (!entry.dirty) continue;
    if (entry.rowId) await pass.ctx.db.replace("keyState", entry.rowId, entry.counts);
    else entry.rowId = await pass.ctx.db.insert("keyState", entry.counts);
  }
}

/** The due time of the earliest listed key, if any (for the loop's next wake). */
export async function firstReadyAt(pass: Pass): Promise<number | undefined> {
  return (await pass.ctx.db.query("keyReady").withIndex("by_runAt").first())?.runAt;
}

/** The key's `keyReady` row (one per key), read once per pass. */
export async function listedRow(pass: Pass, entry: KeyEntry): Promise<Doc<"keyReady"> | null> {
  if (entry.listed === undefined) {
    entry.listed = await pass.ctx.db
      .query("keyReady")
      .withIndex("by_key", (q) => q.eq("key", entry.counts.key))
      .first();
  }
  return entry.listed;
}
