/**
 * Keys, the loop's side: each key's limit, start order and counts. A keyed job starts only while
 * its key holds fewer jobs than its limit (a job holds its key's slot from its first start until it
 * finishes, through retry backoffs) and is not paused; otherwise it waits in `keyQueue`, in the
 * key's order, and `keyReady` lists the keys whose queue head may start. A pass loads a key's row
 * once (`keyEntry`), changes it in memory, and `flushKeys` writes it back at the end.
 * Only the loop calls this; it never reads what enqueue writes (`keyLedger`), and never scans a
 * key's queue (it reads heads).
 */
import type { Doc, Id } from "./_generated/dataModel.js";
import type { Pass } from "./pass.js";

/** A key's counts as the loop keeps them (`keyState` without its system fields). */
export type KeyCounts = Omit<Doc<"keyState">, "_id" | "_creationTime">;

/** One key as a pass sees it: its counts, its own settings, and whether the pass changed it. */
export type KeyEntry = {
  rowId: Id<"keyState"> | undefined;
  counts: KeyCounts;
  parallelism: number | undefined;
  paused: boolean;
  dirty: boolean;
  /** The key's queue head as this pass last read it (undefined: not read since the queue changed). */
  head?: Doc<"keyQueue"> | null;
};

/** Rank of a queued job that holds its key's slot (a retry due while its key is paused): it goes
 * first, since the key's other jobs are behind it in order. */
export const RANK_HOLDER = 0;
/** Rank of every other queued job. */
export const RANK_WAITING = 1;

function emptyCounts(key: string): KeyCounts {
  return { key, active: 0, running: 0, queued: 0, succeeded: 0, failed: 0, canceled: 0 };
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
    parallelism: settings?.parallelism,
    paused: settings?.paused ?? false,
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

/** The most jobs of the key that may hold a slot at once. */
export function keyLimit(pass: Pass, entry: KeyEntry): number {
  return entry.parallelism ?? pass.config.keyParallelism;
}

/** True when a job of the key that holds no slot yet may take one now. */
export function hasFreeSlot(pass: Pass, entry: KeyEntry): boolean {
  return !entry.paused && entry.counts.active < keyLimit(pass, entry);
}

/** Applies `change` to the key's counts; written back by `flushKeys`. */
export function updateKey(entry: KeyEntry, change: Partial<Omit<KeyCounts, "key">>): void {
  for (const [field, delta] of Object.entries(change) as Array<[keyof typeof change, number]>) {
    entry.counts[field] += delta;
  }
  entry.dirty = true;
}

/** Puts a due job of the key in its queue, behind the key's earlier jobs. */
export async function queueForKey(
  pass: Pass,
  entry: KeyEntry,
  job: { workId: Id<"work">; runAt: number; holdsSlot: boolean },
): Promise<void> {
  await pass.ctx.db.insert("keyQueue", {
    key: entry.counts.key,
    workId: job.workId,
    rank: job.holdsSlot ? RANK_HOLDER : RANK_WAITING,
    runAt: job.runAt,
  });
  entry.head = undefined;
  updateKey(entry, { queued: 1 });
}

/** How far before the last started head a head read starts: a queued job's due time is at most
 * a little older than that of jobs queued before it (jobs are queued as the loop reads them, in due
 * segment order, from its cursor less a second), so two seconds covers it. */
export const HEAD_MARGIN_MS = 2_000;

/**
 * The first job in the key's queue, if any: a queued retry holding its slot, else the earliest
 * waiting job. The read of waiting jobs starts near the last one started (`headFrom`), not at the
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
  if (entry.counts.queued <= 0) return null;
  return await pass.ctx.db
    .query("keyQueue")
    .withIndex("by_key", (q) => q.eq("key", entry.counts.key).eq("rank", RANK_HOLDER))
    .first();
}

async function readHead(pass: Pass, entry: KeyEntry): Promise<Doc<"keyQueue"> | null> {
  const { key, queued, headFrom } = entry.counts;
  if (queued <= 0) return null;
  const queue = () => pass.ctx.db.query("keyQueue");
  const holder = await queueHolder(pass, entry);
  if (holder !== null) return holder;
  if (headFrom !== undefined) {
    const near = await queue()
      .withIndex("by_key", (q) =>
        q
          .eq("key", key)
          .eq("rank", RANK_WAITING)
          .gte("runAt", headFrom - HEAD_MARGIN_MS),
      )
      .first();
    if (near !== null) return near;
  }
  return await queue()
    .withIndex("by_key", (q) => q.eq("key", key).eq("rank", RANK_WAITING))
    .first();
}

/** Records that the queue's head was started (taken off the queue). */
export function startedHead(entry: KeyEntry, head: Doc<"keyQueue">): void {
  entry.head = undefined;
  updateKey(entry, { queued: -1, active: head.rank === RANK_HOLDER ? 0 : 1 });
  if (head.rank === RANK_WAITING) {
    entry.counts.headFrom = Math.max(entry.counts.headFrom ?? head.runAt, head.runAt);
  }
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
  updateKey(entry, { queued: -1 });
  return true;
}

/** True when the key has queued jobs and the head may start now. */
export function headMayStart(pass: Pass, entry: KeyEntry, head: Doc<"keyQueue"> | null): boolean {
  return head !== null && !entry.paused && (head.rank === RANK_HOLDER || hasFreeSlot(pass, entry));
}

/**
 * The keys this pass changed (a slot freed, a job queued) whose queue head may start now, with the
 * head's due time: the start stage takes them like `keyReady` rows, without writing one.
 */
export async function keysFreedThisPass(
  pass: Pass,
): Promise<Array<{ key: string; runAt: number }>> {
  const freed: Array<{ key: string; runAt: number }> = [];
  for (const entry of pass.keys.values()) {
    if (!entry.dirty || entry.counts.queued <= 0 || !hasFreeSlot(pass, entry)) continue;
    const head = await queueHead(pass, entry);
    if (head !== null) freed.push({ key: entry.counts.key, runAt: head.runAt });
  }
  return freed.sort((a, b) => a.runAt - b.runAt);
}

/**
 * Writes back every key the pass changed, and lists in `keyReady` each of them whose queue head may
 * still start (the pass ran out of room before it). A listed row is never removed here: the start
 * stage checks the key before it starts anything and drops a row that no longer applies (so a hint
 * from `resume` is never lost).
 */
export async function flushKeys(pass: Pass): Promise<void> {
  for (const entry of pass.keys.values()) {
    if (entry.dirty && entry.counts.queued > 0 && hasFreeSlot(pass, entry)) {
      await markReady(pass, entry);
    }
  }
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

/** Lists the key in `keyReady` (at its queue head's due time) unless it is listed already. */
async function markReady(pass: Pass, entry: KeyEntry): Promise<void> {
  const { key } = entry.counts;
  const listed = await pass.ctx.db
    .query("keyReady")
    .withIndex("by_key", (q) => q.eq("key", key))
    .first();
  if (listed) return;
  const head = await queueHead(pass, entry);
  if (head) await pass.ctx.db.insert("keyReady", { key, runAt: head.runAt });
}
