/**
 * Loop stage: starting work. Up to the free capacity (`maxParallelism` minus running; none while
 * the pool is paused) it takes, in due order, the heads of ready keys (`keyReady`) and the due rows
 * of `pendingStart`. A job without a key starts; a keyed job starts within its key's limit, or
 * waits in its key's queue (keyState.ts) without being read again until its key can start it.
 * The only place a job enters "running".
 */
import { internal } from "./_generated/api.js";
import type { Doc } from "./_generated/dataModel.js";
import {
  hasFreeSlot,
  keyEntry,
  queueForKey,
  queueHead,
  RANK_HOLDER,
  startedHead,
  updateKey,
  type KeyEntry,
} from "./keyState.js";
import { advanceCursor, tableFrom, type Pass } from "./pass.js";
import { recordStart } from "./stats.js";

/** Rows one pass takes at most (started, or put in a key's queue): about four reads and two
 * writes each, so 100 keeps a pass far inside Convex's limits while draining a backlog of 10,000
 * in a hundred passes. */
export const START_BATCH = 100;

type Candidate =
  { kind: "due"; row: Doc<"pendingStart"> } | { kind: "ready"; row: Doc<"keyReady"> };

/**
 * Returns true when it stopped at its batch size with capacity left (more may be due).
 *
 * Reads in chunks of at most the free capacity, so a pass that can start three jobs reads about
 * three rows of each list, not a batch; a chunk whose rows went to their keys' queues (started
 * nothing) is followed by another, until the capacity or the batch is used up.
 */
export async function startWork(pass: Pass): Promise<boolean> {
  let capacity = pass.config.paused ? 0 : pass.config.maxParallelism - pass.state.running;
  if (capacity <= 0) return false;
  let taken = 0;
  let exhausted = false;
  // The lowest segment that may still hold a due pendingStart row when the pass stops.
  let dueLeftAt: number | undefined;
  while (capacity > 0 && taken < START_BATCH) {
    const want = Math.min(capacity, START_BATCH - taken);
    const due = await readDue(pass, want);
    const ready = await readReady(pass, want);
    const dueFull = due.length === want;
    const readyFull = ready.length === want;
    let d = 0;
    let r = 0;
    while (capacity > 0 && taken < START_BATCH) {
      // A full list that ran out may continue beyond what was read: read the next chunk first,
      // so the merge stays in due order.
      if (d === due.length && (dueFull || r === ready.length)) break;
      if (r === ready.length && readyFull) break;
      taken++;
      const next: Candidate =
        r >= ready.length || (d < due.length && due[d].runAt <= ready[r].runAt)
          ? { kind: "due", row: due[d++] }
          : { kind: "ready", row: ready[r++] };
      const started =
        next.kind === "due" ? await startDue(pass, next.row) : await startHead(pass, next.row);
      if (started) capacity--;
    }
    dueLeftAt = d < due.length ? due[d].segment : dueFull ? due[due.length - 1].segment : undefined;
    if (!dueFull && !readyFull && d === due.length && r === ready.length) {
      exhausted = true;
      break;
    }
  }
  // pendingStart rows below the first one that may be left are gone.
  advanceCursor(pass, "start", dueLeftAt ?? pass.segment);
  return capacity > 0 && !exhausted;
}

/** Up to `limit` due `pendingStart` rows, in (segment, runAt) order. */
async function readDue(pass: Pass, limit: number): Promise<Doc<"pendingStart">[]> {
  return await pass.ctx.db
    .query("pendingStart")
    .withIndex("by_segment", (q) =>
      q.gte("segment", tableFrom(pass, "start")).lte("segment", pass.segment),
    )
    .take(limit);
}

/** Up to `limit` ready keys whose head is due, in runAt order. */
async function readReady(pass: Pass, limit: number): Promise<Doc<"keyReady">[]> {
  return await pass.ctx.db
    .query("keyReady")
    .withIndex("by_runAt", (q) => q.lte("runAt", pass.now))
    .take(limit);
}

/** A due `pendingStart` row: starts its job, or queues it behind its key. True when started. */
async function startDue(pass: Pass, row: Doc<"pendingStart">): Promise<boolean> {
  await pass.ctx.db.delete("pendingStart", row._id);
  if (row.key === undefined) return await startJob(pass, row.workId, row.runAt);
  const entry = await keyEntry(pass, row.key);
  const holdsSlot = row.holdsSlot === true;
  // A retry keeps the slot it holds; another job takes a free one, unless jobs of its key wait
  // ahead of it.
  const startNow = holdsSlot
    ? !entry.paused
    : hasFreeSlot(pass, entry) && entry.counts.queued === 0;
  if (!startNow) {
    await queueForKey(pass, entry, { workId: row.workId, runAt: row.runAt, holdsSlot });
    return false;
  }
  if (!holdsSlot) updateKey(entry, { active: 1 });
  return await startJob(pass, row.workId, row.runAt, entry);
}

/**
 * A ready key: starts the head of its queue if the key may (a head that holds its slot may always,
 * unless the key is paused), and keeps the key listed while its next head may start too.
 */
async function startHead(pass: Pass, ready: Doc<"keyReady">): Promise<boolean> {
  const entry = await keyEntry(pass, ready.key);
  const head = await queueHead(pass, entry);
  const mayStart =
    head !== null && !entry.paused && (head.rank === RANK_HOLDER || hasFreeSlot(pass, entry));
  if (head === null || !mayStart) {
    await pass.ctx.db.delete("keyReady", ready._id);
    return false;
  }
  await pass.ctx.db.delete("keyQueue", head._id);
  startedHead(entry, head);
  const started = await startJob(pass, head.workId, head.runAt, entry);
  const next = await queueHead(pass, entry);
  if (next !== null && !entry.paused && (next.rank === RANK_HOLDER || hasFreeSlot(pass, entry))) {
    await pass.ctx.db.patch("keyReady", ready._id, { runAt: next.runAt });
  } else {
    await pass.ctx.db.delete("keyReady", ready._id);
  }
  return started;
}

/** Schedules a worker for a pending job and marks it running; false if the job is not pending. */
async function startJob(
  pass: Pass,
  workId: Doc<"work">["_id"],
  runAt: number,
  key?: KeyEntry,
): Promise<boolean> {
  const { ctx } = pass;
  const work = await ctx.db.get("work", workId);
  if (work === null || work.state.kind !== "pending") {
    pass.log.error("invariant", {
      message: "a job to start is not pending",
      workId,
      state: work?.state.kind ?? "missing",
    });
    return false;
  }
  const scheduledId = await scheduleWorker(pass, work);
  await ctx.db.patch("work", work._id, {
    state: { kind: "running", scheduledId, startedAt: pass.now },
    // The worker has the arguments now; only a retry would need them again.
    ...(work.retryBehavior === undefined ? { fnArgs: undefined } : {}),
  });
  pass.state.running++;
  if (key) updateKey(key, { running: 1 });
  recordStart(pass.state.stats, Math.max(0, pass.now - runAt));
  pass.log.debug("started", { workId: work._id, fnName: work.fnName, attempt: work.attempts + 1 });
  return true;
}

async function scheduleWorker(pass: Pass, work: Doc<"work">) {
  const args = {
    workId: work._id,
    attempt: work.attempts + 1,
    fnHandle: work.fnHandle,
    fnArgs: work.fnArgs,
    payloadId: work.payloadId,
  };
  switch (work.fnType) {
    case "action":
      return await pass.ctx.scheduler.runAfter(0, internal.worker.runAction, args);
    case "mutation":
    case "query":
      return await pass.ctx.scheduler.runAfter(0, internal.worker.runMutationOrQuery, {
        ...args,
        fnType: work.fnType,
      });
    default:
      return work.fnType satisfies never;
  }
}
