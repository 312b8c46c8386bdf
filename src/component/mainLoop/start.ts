/**
 * Loop stage: starting work. Up to the free capacity (`maxParallelism` minus running, within the
 * pool's rate limit; none while the pool is paused) it starts due work level by level ("high",
 * then "normal", then "low"). Who goes next is model/startOrder.ts's to say, as pure functions of
 * what this stage reads: whether a key may start its head, each contender's turn under fair share
 * (keys below their reserve first, then by weighted virtual pass), the earliest due head under
 * `fairness: "due"`, and where a key stands in `keyReady` (`placeOf`). This stage reads what those
 * rules need, applies their answers, and writes the result; it decides no order of its own, and
 * keyState.ts only stores. The only place a job enters "running".
 */
import { internal } from "../_generated/api.js";
import type { Doc, Id } from "../_generated/dataModel.js";
import {
  firstReadyAt,
  keyEntry,
  listedRow,
  queueForKey,
  queueHead,
  queueHolder,
  RANK_HOLDER,
  startedHead,
  updateKey,
  type KeyEntry,
} from "./keyState.js";
import {
  beyondBound,
  TIER_WAITING,
  DEFAULT_WEIGHT,
  earliestDue,
  firstTurn,
  hasFreeSlot,
  headMayStart,
  keyAllowedAt,
  keyTurn,
  logKeyStart,
  mayStartAnyHead,
  placeOf,
  startsOnArrival,
  takeTurn,
  unkeyedTurn,
  type HeadView,
  type LevelClock,
  type Turn,
} from "../model/startOrder.js";
import { handOverTask } from "./executors.js";
import { ACTION_RUNNER_BATCH } from "../runners/actionRunner.js";
import {
  advanceHintCursor,
  advanceStartCursor,
  advanceWaitingCursor,
  countDueStarts,
  forgetHintCursors,
  hasWaitingCursor,
  hintsFrom,
  lowerWaitingCursor,
  readDueStarts,
  startCursorOf,
  tableFrom,
  waitingFrom,
  type Pass,
} from "./pass.js";
import { PRIORITY_LEVELS, runNumber, type StoredPriority } from "../model/validators.js";
import { recordStarts, startsAllowed } from "./rateLimit.js";
import { recordStart } from "./stats.js";
import { scheduleTimeout } from "./awaiting.js";
import { countInGroup } from "./groups.js";
import { budgetUnits } from "./passBudget.js";

/** Rows one pass takes at most (started, or put in a key's queue): about four reads and two
 * writes each, so 100 keeps a pass far inside Convex's limits while draining a backlog of 10,000
 * in a hundred passes. */
export const START_BATCH = 100;

/** What one start may cost at most, for sizing a chunk to the pass's budget (passBudget.ts): two
 * schedules (a new executor and its row's check; a worker, or an action's runner owed to
 * placeActions, cost one); six index ranges and eight documents read (its row, its job, its key's
 * state, settings and queue head in two ranks, its function's executors); four writes (its job,
 * its row, its key's queue and ready rows); and its job's row read and rewritten whole (a row
 * holds at most about 40 KiB: args and context inline up to 8 KiB, a name, a dedupe key). */
const START_COST = {
  functionsScheduled: 2,
  databaseQueries: 6,
  documentsRead: 8,
  documentsWritten: 4,
  bytesRead: 48 * 1024,
  bytesWritten: 48 * 1024,
} as const;

/** A job or key the start stage may take: a due row, a listed key, or a key that a completion or
 * cancelation in this pass freed (kept in memory; `flushKeys` lists it if the pass cannot start it). */
type Candidate =
  | { kind: "due"; row: Doc<"pendingStart"> }
  | { kind: "ready"; row: Doc<"keyReady"> }
  | ({ kind: "freed" } & FreedKey);

/** What the start stage tells the loop: whether more may be due already (`more`: it stopped at its
 * batch size with room left), and whether due work waits for the rate limit (`heldByRate`). */
export type StartOutcome = { more: boolean; heldByRate: boolean };

/** The room a pass has left: starts it may still make, rows it may still take, and rows (jobs of
 * a batch's row each count) the current chunk may still take within the pass's budget. */
type Budget = { capacity: number; taken: number; chunk: number };

/**
 * Starts what is due, within the room the pool (`maxParallelism`, pause) and its rate limit leave:
 * the "high" level first, then "normal", then "low", each to its end before the next is read.
 */
export async function startWork(pass: Pass): Promise<StartOutcome> {
  const poolRoom = pass.config.paused ? 0 : pass.config.maxParallelism - pass.state.running;
  const rateRoom = startsAllowed(pass);
  const room = Math.min(poolRoom, rateRoom);
  const shared = pass.config.fairness === "share";
  // Under fair share, due keyed jobs go to their keys' queues even while nothing may start, so
  // that every key with due jobs is known when a slot frees, not only those ahead in due order.
  const intake = shared ? await intakeKeyed(pass) : { more: false, taken: 0 };
  if (room <= 0) {
    recordStarts(pass, 0);
    return { more: intake.more, heldByRate: poolRoom > 0 && (await anythingDue(pass)) };
  }
  const freed = shared ? [] : await keysFreedThisPass(pass);
  const budget: Budget = { capacity: room, taken: intake.taken, chunk: 0 };
  let exhausted = true;
  for (const level of PRIORITY_LEVELS) {
    exhausted = shared
      ? await startLevelShared(pass, level, budget)
      : await startLevel(pass, level, freed, budget);
    // A level that still has due work keeps every lower one waiting.
    if (!exhausted) break;
  }
  exhausted &&= !intake.more;
  recordStarts(pass, room - budget.capacity);
  const rateBound = rateRoom < poolRoom && budget.capacity === 0;
  return {
    more: budget.capacity > 0 && !exhausted,
    heldByRate: rateBound && !exhausted && (freed.length > 0 || (await anythingDue(pass))),
  };
}

/**
 * Starts the due work of one priority level: its due rows, its listed keys and its freed keys,
 * merged by due time. Reads in chunks of at most the free capacity, so a pass that can start three
 * jobs reads about three rows of each list, not a batch; a chunk whose rows went to their keys'
 * queues (started nothing) is followed by another, until the budget is used up. Returns true when
 * the level has nothing left that is due.
 */
async function startLevel(
  pass: Pass,
  level: StoredPriority,
  freed: FreedKey[],
  budget: Budget,
): Promise<boolean> {
  // No room left: the level is not read, and its cursor stays where it is (moving it would skip
  // its due rows below this segment).
  if (budget.capacity <= 0 || budget.taken >= START_BATCH) return false;
  const ofLevel = () => freed.findIndex((key) => key.priority === level);
  let exhausted = false;
  // The lowest segment that may still hold a due pendingStart row of the level when it stops.
  let dueLeftAt: number | undefined;
  let readOnce = false;
  while (budget.capacity > 0 && budget.taken < START_BATCH) {
    // The chunk is sized to the pass's budget (passBudget.ts), asked once per chunk.
    const want = Math.min(
      budget.capacity,
      START_BATCH - budget.taken,
      await budgetUnits(pass, "start", START_COST),
    );
    if (want <= 0) {
      // Stopped before its first chunk: the level's cursor stays where it is.
      if (!readOnce) dueLeftAt = tableFrom(pass, startCursorOf(level));
      break;
    }
    readOnce = true;
    budget.chunk = want;
    const { rows: due, full: dueFull } = await readDueStarts(pass, level, want);
    const ready = await readReady(pass, level, want);
    const readyFull = ready.length === want;
    let d = 0;
    let r = 0;
    while (budget.capacity > 0 && budget.taken < START_BATCH && budget.chunk > 0) {
      // A full list that ran out may continue beyond what was read: read the next chunk first,
      // so the merge stays in due order.
      if ((d === due.length && dueFull) || (r === ready.length && readyFull)) break;
      const f = ofLevel();
      // Known keys' heads before listed keys' before due rows, on a tie (`earliestDue`).
      const next = earliestDue(
        [
          f >= 0 ? { kind: "freed", ...freed[f] } : undefined,
          r < ready.length ? { kind: "ready", row: ready[r] } : undefined,
          d < due.length ? { kind: "due", row: due[d] } : undefined,
        ],
        runAtOf,
      );
      if (next === undefined) break;
      if (next.kind === "due") {
        // A row of a batch's jobs may hold more than the budget: the rest stays in it.
        if (!(await startDue(pass, next.row, budget))) break;
        d++;
        continue;
      }
      budget.taken++;
      budget.chunk--;
      let started: boolean;
      if (next.kind === "ready") {
        r++;
        started = await startListedKey(pass, next.row);
      } else {
        freed.splice(f, 1);
        started = await startFreedKey(pass, next.key, freed);
      }
      if (started) budget.capacity--;
    }
    dueLeftAt = d < due.length ? due[d].segment : dueFull ? due[due.length - 1].segment : undefined;
    const allTaken = d === due.length && r === ready.length && ofLevel() < 0;
    if (!dueFull && !readyFull && allTaken) {
      exhausted = true;
      break;
    }
  }
  // The level's pendingStart rows below the first one that may be left are gone.
  advanceStartCursor(pass, level, "all", dueLeftAt ?? pass.segment);
  return exhausted;
}

/**
 * Fair share's intake: moves due keyed `pendingStart` rows of every level to their keys' queues
 * (a retry that holds its slot first in its key's order), within the stage's batch and the pass's
 * budget. `more` when it stopped on either: more may be due.
 */
async function intakeKeyed(pass: Pass): Promise<{ more: boolean; taken: number }> {
  let taken = 0;
  for (const level of PRIORITY_LEVELS) {
    const want = Math.min(START_BATCH - taken, await budgetUnits(pass, "start", START_COST));
    if (want <= 0) return { more: true, taken };
    const { rows, full } = await readDueStarts(pass, level, want, "keyed");
    for (const row of rows) await queueKeyedRow(pass, row);
    taken += rows.length;
    const leftAt = full && rows.length > 0 ? rows[rows.length - 1].segment : pass.segment;
    advanceStartCursor(pass, level, "keyed", leftAt);
    if (full) return { more: true, taken };
  }
  return { more: false, taken };
}

/** Puts a due keyed row's job in its key's queue and deletes the row. */
async function queueKeyedRow(pass: Pass, row: Doc<"pendingStart">): Promise<void> {
  const entry = await keyEntry(pass, row.key as string);
  await queueForKey(pass, entry, {
    workId: row.workId,
    runAt: row.runAt,
    holdsSlot: row.holdsSlot === true,
    priority: row.priority,
  });
  await pass.ctx.db.delete("pendingStart", row._id);
}

/** A contender of the turns of a level under fair share: a key (its entry) or the jobs without a
 * key (`key` null). */
type Contender = Turn & { entry?: KeyEntry };

/**
 * Starts the due work of one priority level under fair share (model/startOrder.ts): the keys that
 * may start (known to the pass, or listed in `keyReady` by tier and virtual pass) and the jobs
 * without a key take turns, each turn to the contender that goes first; a key's turn starts its
 * queue's head. Reads listed keys a chunk at a time and stops (to go on in the next pass) before
 * a turn that an unread listed key might precede. Returns true when the level has nothing left
 * that is due.
 */
async function startLevelShared(
  pass: Pass,
  level: StoredPriority,
  budget: Budget,
): Promise<boolean> {
  if (budget.capacity <= 0 || budget.taken >= START_BATCH) return false;
  const clock = levelClock(pass, level);
  const clockBefore = { ...clock };
  const contenders = new Map<string, Contender>();
  const consider = async (entry: KeyEntry) => {
    const head = entry.counts.queued > 0 ? await queueHead(pass, entry) : null;
    if (head === null || head.priority !== level || !headMayStart(entry, view(head), pass.now)) {
      contenders.delete(entry.counts.key);
      return;
    }
    const turn = keyTurn(entry, view(head), clock, pass.config.maxParallelism);
    contenders.set(entry.counts.key, { ...turn, entry });
  };
  // Keys this pass already holds (freed by a completion, or given jobs by the intake).
  for (const entry of pass.keys.values()) if (entry.dirty) await consider(entry);
  // Turns are taken in chunks sized to the pass's budget (passBudget.ts), asked once per chunk.
  let chunk = await budgetUnits(pass, "start", START_COST);
  if (chunk <= 0) return false;
  const want = Math.min(budget.capacity, START_BATCH - budget.taken);
  // Hints first (keys `resume` or `setKeyParallelism` listed without a place in the order): each
  // is considered and placed at the end of the pass, a batch at a time, however few may start.
  // While some are left unread, any of them might go first: only one turn is taken.
  const hintRoom = Math.min(START_BATCH - budget.taken, chunk);
  const hints = await pass.ctx.db
    .query("keyReady")
    .withIndex("by_share", (q) =>
      q
        .eq("priority", level)
        .eq("tier", undefined)
        .eq("pass", undefined)
        .gte("_creationTime", hintsFrom(pass, level)),
    )
    .take(hintRoom);
  const hintsLeft = hints.length === hintRoom;
  // Every hint read is placed at the end of the pass (`listKeys`): the next read starts past them.
  if (hints.length > 0) advanceHintCursor(pass, level, hints[hints.length - 1]._creationTime);
  // Then the placed keys, first in the level's order; a full read leaves a bound no turn may pass.
  // Keys waiting for their rate limit are not in that order: those whose time has come are read
  // apart, in the order it came (their `pass` is that time), and take turns like the rest. Read
  // with the others, a waiting key would stand as a bound while it may not start, holding the
  // level (and every lower one) undrained pass after pass (seed 4242, program 16).
  const listed = hintsLeft
    ? []
    : await pass.ctx.db
        .query("keyReady")
        .withIndex("by_share", (q) =>
          q.eq("priority", level).gte("tier", 0).lt("tier", TIER_WAITING),
        )
        .take(want);
  const bound = listed.length === want ? listed[listed.length - 1] : undefined;
  // They are read from the level's waiting cursor, past the entries of the rows passes moved.
  const waiting = hintsLeft
    ? []
    : await pass.ctx.db
        .query("keyReady")
        .withIndex("by_share", (q) =>
          q
            .eq("priority", level)
            .eq("tier", TIER_WAITING)
            .gte("pass", waitingFrom(pass, level))
            .lte("pass", pass.now),
        )
        .take(want);
  // Some waiting keys whose time has come are left unread: any of them might go first.
  const waitingLeft = waiting.length === want;
  // Every one read is placed again at the end of the pass (below): none is left behind the cursor.
  // A pool that never read one keeps no cursor (and writes no more state for it).
  if (!hintsLeft && (waiting.length > 0 || hasWaitingCursor(pass, level))) {
    advanceWaitingCursor(pass, level, waitingLeft ? waiting[want - 1].pass! : pass.now);
  }
  for (const row of [...hints, ...listed, ...waiting]) {
    const entry = await keyEntry(pass, row.key);
    // A waiting row leaves its tier, whether or not its key takes a turn in this pass.
    if (row.tier === TIER_WAITING) entry.dirty = true;
    if (contenders.has(row.key)) continue;
    entry.listed = row;
    await consider(entry);
    // A row whose key may not start now is placed again (or dropped) at the end of the pass,
    // and so is a hint, which gets its place in the order.
    if (!contenders.has(row.key) || row.tier === undefined) entry.dirty = true;
  }
  const unkeyed = new UnkeyedJobs(pass, level, want);
  let exhausted = false;
  let taken = 0;
  while (budget.capacity > 0 && budget.taken < START_BATCH) {
    if (chunk <= 0) chunk = await budgetUnits(pass, "start", START_COST);
    if (chunk <= 0) break;
    const head = await unkeyed.head();
    const jobs: Contender | undefined =
      head === undefined ? undefined : unkeyedTurn(clock, head.runAt);
    const next = firstTurn([...contenders.values(), ...(jobs ? [jobs] : [])], "share");
    if (next === undefined) {
      exhausted = bound === undefined && !hintsLeft && !waitingLeft && !unkeyed.full;
      break;
    }
    // Past the listed keys read, an unread one might go first: the next pass goes on from there
    // (the first turn is taken regardless, so that every pass makes progress).
    const unread = hintsLeft || waitingLeft;
    if (taken > 0 && (unread || (bound !== undefined && beyondBound(next, bound)))) break;
    budget.taken++;
    taken++;
    chunk--;
    const rivals = contenders.size + (jobs ? 1 : 0) > 1;
    const moved = takeTurn(clock, next, next.entry?.weight ?? DEFAULT_WEIGHT, rivals);
    if (moved !== undefined) clock.time = moved.time;
    let started: boolean;
    if (next.entry === undefined) {
      const job = unkeyed.take();
      started = await startJob(pass, job.workId, job.runAt, undefined, job.shared);
      if (moved !== undefined) clock.unkeyed = moved.pass;
    } else {
      const { entry } = next;
      started = (await startHead(pass, entry.counts.key)).started;
      if (moved !== undefined) entry.counts.pass = moved.pass;
      entry.dirty = true;
      await consider(entry);
    }
    if (started) budget.capacity--;
  }
  await unkeyed.finish();
  if (clock.time !== clockBefore.time || clock.unkeyed !== clockBefore.unkeyed) {
    setLevelClock(pass, level, clock);
  }
  return exhausted;
}

/**
 * A level's due jobs without a key, in due order, read a chunk at a time from their cursor: the
 * queue of the jobs without a key, which take turns as one key. A keyed row met among them (one
 * written before rows were marked `keyed`) goes to its key's queue. `finish` writes back a row
 * whose jobs were started in part and moves the level's cursor.
 */
class UnkeyedJobs {
  private rows: Doc<"pendingStart">[] = [];
  private row = 0;
  private job = 0;
  private read = false;
  full = false;
  constructor(
    private readonly pass: Pass,
    private readonly level: StoredPriority,
    private readonly want: number,
  ) {}

  /** The next job's row, if a job is due. */
  async head(): Promise<Doc<"pendingStart"> | undefined> {
    for (;;) {
      if (this.row < this.rows.length) {
        const row = this.rows[this.row];
        if (row.key === undefined) return row;
        await queueKeyedRow(this.pass, row);
        this.row++;
        continue;
      }
      if (this.read && !this.full) return undefined;
      if (this.read) await this.dropTaken();
      const { rows, full } = await readDueStarts(this.pass, this.level, this.want, "unkeyed");
      this.rows = rows;
      this.row = 0;
      this.job = 0;
      this.full = full;
      this.read = true;
      if (rows.length === 0) return undefined;
    }
  }

  /** Takes the next job (`head` must have said there is one); `shared` when its row holds a
   * batch's jobs, where one canceled while it waited stays listed. */
  take(): { workId: Id<"work">; runAt: number; shared: boolean } {
    const row = this.rows[this.row];
    const jobs = [row.workId, ...(row.more ?? [])];
    const workId = jobs[this.job++];
    if (this.job === jobs.length) {
      this.row++;
      this.job = 0;
      this.pending.push(row._id);
    }
    return { workId, runAt: row.runAt, shared: row.more !== undefined };
  }

  private pending: Id<"pendingStart">[] = [];

  /** Deletes the rows whose jobs were all taken. */
  private async dropTaken(): Promise<void> {
    for (const id of this.pending) await this.pass.ctx.db.delete("pendingStart", id);
    this.pending = [];
  }

  /** Writes back what was taken and moves the level's cursor past the rows that are gone. */
  async finish(): Promise<void> {
    await this.dropTaken();
    const { pass, level } = this;
    if (!this.read) return;
    const left = this.rows[this.row];
    if (left !== undefined && this.job > 0) {
      const [workId, ...more] = [left.workId, ...(left.more ?? [])].slice(this.job);
      await pass.ctx.db.patch("pendingStart", left._id, { workId, more });
    }
    const last = this.rows[this.rows.length - 1];
    const leftAt = left?.segment ?? (this.full && last ? last.segment : pass.segment);
    advanceStartCursor(pass, level, "unkeyed", leftAt);
  }
}

/** True when a pendingStart row or a listed key is due, at any level (single-row reads). */
async function anythingDue(pass: Pass): Promise<boolean> {
  if ((await countDueStarts(pass, 1)) > 0) return true;
  const readyAt = await firstReadyAt(pass);
  return readyAt !== undefined && readyAt <= pass.now;
}

function runAtOf(candidate: Candidate): number {
  return candidate.kind === "freed" ? candidate.runAt : candidate.row.runAt;
}

/** Up to `limit` listed keys of one priority level whose head is due, in runAt order. */
async function readReady(
  pass: Pass,
  level: StoredPriority,
  limit: number,
): Promise<Doc<"keyReady">[]> {
  return await pass.ctx.db
    .query("keyReady")
    .withIndex("by_priority", (q) => q.eq("priority", level).lte("runAt", pass.now))
    .take(limit);
}

/**
 * A due `pendingStart` row: starts its jobs in order while the budget lasts, or queues its job
 * behind its key. Returns true when the row is used up (deleted); otherwise it keeps the jobs the
 * budget left (only a row of a batch's jobs, `more`, holds more than one).
 */
async function startDue(pass: Pass, row: Doc<"pendingStart">, budget: Budget): Promise<boolean> {
  if (row.key !== undefined) {
    budget.taken++;
    budget.chunk--;
    if (await startKeyed(pass, row, row.key)) budget.capacity--;
    await pass.ctx.db.delete("pendingStart", row._id);
    return true;
  }
  const jobs = [row.workId, ...(row.more ?? [])];
  // A job of a batch's row may have been canceled while it waited (it stays listed, schema.ts).
  const shared = row.more !== undefined;
  let taken = 0;
  while (
    taken < jobs.length &&
    budget.capacity > 0 &&
    budget.taken < START_BATCH &&
    budget.chunk > 0
  ) {
    budget.taken++;
    budget.chunk--;
    if (await startJob(pass, jobs[taken], row.runAt, undefined, shared)) budget.capacity--;
    taken++;
  }
  if (taken === jobs.length) {
    await pass.ctx.db.delete("pendingStart", row._id);
    return true;
  }
  const [workId, ...more] = jobs.slice(taken);
  await pass.ctx.db.patch("pendingStart", row._id, { workId, more });
  return false;
}

/** A due row of a keyed job: starts it within its key's limit, or queues it. True when started. */
async function startKeyed(pass: Pass, row: Doc<"pendingStart">, key: string): Promise<boolean> {
  const entry = await keyEntry(pass, key);
  const holdsSlot = row.holdsSlot === true;
  if (!startsOnArrival(entry, holdsSlot, pass.now)) {
    await queueForKey(pass, entry, {
      workId: row.workId,
      runAt: row.runAt,
      holdsSlot,
      priority: row.priority,
    });
    return false;
  }
  if (!holdsSlot) updateKey(entry, { active: 1 });
  return await startJob(pass, row.workId, row.runAt, entry);
}

/** A key listed in `keyReady`: starts its head, then moves the row to the next head's due time
 * while that one may start too, or drops it. */
async function startListedKey(pass: Pass, ready: Doc<"keyReady">): Promise<boolean> {
  const { started, next } = await startHead(pass, ready.key);
  const entry = await keyEntry(pass, ready.key);
  if (next !== undefined) {
    // A waiting row moved to its next head's level keeps its tier and time (schema.ts
    // `cursors.waiting`): that level's cursor stays at or below it.
    if (ready.tier === TIER_WAITING) lowerWaitingCursor(pass, next.priority, ready.pass ?? 0);
    await pass.ctx.db.patch("keyReady", ready._id, next);
    entry.listed = { ...ready, ...next };
  } else {
    await pass.ctx.db.delete("keyReady", ready._id);
    entry.listed = null;
    // A key its rate limit holds is listed again at the end of the pass, for when it may start.
    if (keyAllowedAt(entry, pass.now) !== undefined) entry.dirty = true;
  }
  return started;
}

/** A key freed in this pass: starts its head, and puts it back among `freed` (in due order) while
 * its next head may start too. */
async function startFreedKey(pass: Pass, key: string, freed: FreedKey[]): Promise<boolean> {
  const { started, next } = await startHead(pass, key);
  if (next !== undefined) {
    const at = freed.findIndex((other) => other.runAt > next.runAt);
    freed.splice(at === -1 ? freed.length : at, 0, { key, ...next });
  }
  return started;
}

/**
 * Starts the head of the key's queue if the key may (a head that holds its slot may whenever the
 * key is not paused and runs fewer attempts than its limit). Returns whether a job started, and the due time and priority of the next head
 * when that one may start as well.
 */
async function startHead(
  pass: Pass,
  key: string,
): Promise<{ started: boolean; next?: { runAt: number; priority: StoredPriority } }> {
  const entry = await keyEntry(pass, key);
  const head = await queueHead(pass, entry);
  if (head === null || !headMayStart(entry, view(head), pass.now)) return { started: false };
  await pass.ctx.db.delete("keyQueue", head._id);
  startedHead(entry, head);
  const started = await startJob(pass, head.workId, head.runAt, entry);
  // A full key's next head is read only if it holds its slot (it may start regardless).
  const next = hasFreeSlot(entry) ? await queueHead(pass, entry) : await queueHolder(pass, entry);
  if (next !== null && headMayStart(entry, view(next), pass.now)) {
    return { started, next: { runAt: next.runAt, priority: next.priority } };
  }
  return { started };
}

/** Schedules a worker for a pending job (or hands a task to an executor) and marks it running;
 * false if the job is not pending. `mayBeGone`: the job is listed in a batch's row, where a job
 * canceled (and perhaps swept) while it waited stays; it is skipped, as expected. */
async function startJob(
  pass: Pass,
  workId: Doc<"work">["_id"],
  runAt: number,
  key?: KeyEntry,
  mayBeGone = false,
): Promise<boolean> {
  const { ctx } = pass;
  const work = await ctx.db.get("work", workId);
  const placing = pass.actionStarts.some((started) => started._id === workId);
  if (mayBeGone && !placing && work?.state.kind !== "pending") {
    pass.log.debug("canceledWhileWaiting", { workId, state: work?.state.kind ?? "missing" });
    return false;
  }
  if (work === null || work.state.kind !== "pending" || placing) {
    pass.log.error("invariant", {
      message: "a job to start is not pending",
      workId,
      state: work?.state.kind ?? "missing",
    });
    return false;
  }
  if (work.fnType === "action" && work.task === undefined) {
    // Placed when the stage has started all it will (placeActions): with others, in a runner.
    pass.actionStarts.push(work);
  } else {
    // A task goes to an executor (executors.ts); a mutation or query gets a worker of its own.
    const runner =
      work.task !== undefined
        ? await handOverTask(pass, work, runAt)
        : { scheduledId: await scheduleWorker(pass, work) };
    await markRunning(pass, work, runner);
  }
  pass.state.running++;
  if (key) {
    updateKey(key, { running: 1 });
    if (key.rateLimit !== undefined) key.counts.startLog = logKeyStart(key, pass.now);
  }
  recordStart(pass, Math.max(0, pass.now - runAt));
  pass.log.debug("started", { workId: work._id, fnName: work.fnName, attempt: work.attempts + 1 });
  return true;
}

/**
 * Gives the action jobs this pass started their runners: several go to action runners, up to
 * ACTION_RUNNER_BATCH to one (runners/actionRunner.ts, their hand-over is its arguments); a lone
 * one gets a worker of its own (it costs no more, and keeps Convex's whole 10 minutes). Called once
 * the start stage is over, before anything else reads the jobs.
 */
export async function placeActions(pass: Pass): Promise<void> {
  const started = pass.actionStarts;
  pass.actionStarts = [];
  if (started.length === 1) {
    const [work] = started;
    await markRunning(pass, work, { scheduledId: await scheduleWorker(pass, work) });
    return;
  }
  for (let i = 0; i < started.length; i += ACTION_RUNNER_BATCH) {
    const batch = started.slice(i, i + ACTION_RUNNER_BATCH);
    const jobs = batch.map(runnerArgs);
    // Unique to this runner: one pass commits per generation, and a pass places each batch once.
    const runner = `${pass.state.generation}.${i / ACTION_RUNNER_BATCH}`;
    const scheduledId = await pass.ctx.scheduler.runAfter(0, internal.runners.actionRunner.run, {
      jobs,
      runner,
    });
    for (const work of batch) await markRunning(pass, work, { scheduledId, runner });
  }
}

/** Records a started job's runner on its row. */
async function markRunning(
  pass: Pass,
  work: Doc<"work">,
  runner: {
    scheduledId: Id<"_scheduled_functions">;
    executorId?: Id<"executors">;
    runner?: string;
  },
): Promise<void> {
  await pass.ctx.db.patch("work", work._id, {
    state: { kind: "running", ...runner, startedAt: pass.now },
    listAt: pass.now,
    // The runner has the arguments now; only a retry would need them again (a waiting job's
    // completion hands none back, so it keeps them for `retry`).
    ...(work.retryBehavior === undefined && work.manualCompletion === undefined
      ? { fnArgs: undefined }
      : {}),
  });
  if (work.manualCompletion !== undefined) await scheduleTimeout(pass, work);
  if (work.group !== undefined) await countInGroup(pass, work.group, "running", 1);
}

/** What a runner (a worker, or an entry of an action runner's batch) gets for one attempt. */
function runnerArgs(work: Doc<"work">) {
  return {
    workId: work._id,
    attempt: runNumber(work),
    fnHandle: work.fnHandle,
    fnArgs: work.fnArgs,
    payloadId: work.payloadId,
  };
}

async function scheduleWorker(pass: Pass, work: Doc<"work">) {
  const args = runnerArgs(work);
  switch (work.fnType) {
    case "action":
      return await pass.ctx.scheduler.runAfter(0, internal.runners.worker.runAction, args);
    case "mutation":
    case "query":
      return await pass.ctx.scheduler.runAfter(0, internal.runners.worker.runMutationOrQuery, {
        ...args,
        fnType: work.fnType,
      });
    default:
      return work.fnType satisfies never;
  }
}

/**
 * Places every key the pass changed in `keyReady` (`placeListed`): listed while its queue head may
 * start (or waits only for its rate limit), dropped otherwise. Every key it drops was read in this
 * pass, so a hint from `resume` or `setKeyParallelism` that came after is never lost (that caller
 * lists the key again). Called once per pass, before `flushKeys` writes the keys back.
 */
export async function listKeys(pass: Pass): Promise<void> {
  for (const entry of pass.keys.values()) if (entry.dirty) await placeListed(pass, entry);
}

/** What the start order reads of a queued job (model/startOrder.ts `HeadView`). */
function view(head: Doc<"keyQueue">): HeadView {
  return { runAt: head.runAt, holdsSlot: head.rank === RANK_HOLDER, order: head._creationTime };
}

/**
 * The keys this pass changed (a slot freed, a job queued) whose queue head may start now, with the
 * head's due time: the start stage takes them like `keyReady` rows, without writing one.
 */
async function keysFreedThisPass(pass: Pass): Promise<FreedKey[]> {
  const freed: FreedKey[] = [];
  for (const entry of pass.keys.values()) {
    if (!entry.dirty || entry.counts.queued <= 0) continue;
    // A full key's head is read only when a holder of its slot could run (a retry's next run).
    if (!mayStartAnyHead(entry)) continue;
    const head = await queueHead(pass, entry);
    if (head !== null && headMayStart(entry, view(head), pass.now)) {
      freed.push({ key: entry.counts.key, runAt: head.runAt, priority: head.priority });
    }
  }
  return freed.sort((a, b) => a.runAt - b.runAt);
}

/** A key whose head may start, known to the pass (not listed in `keyReady`). */
type FreedKey = { key: string; runAt: number; priority: StoredPriority };

/**
 * Writes the key's place in `keyReady` (model/startOrder.ts `placeOf`), or drops its row when it
 * has none: whoever lets it start again lists it (a completion's pass, `resume`,
 * `setKeyParallelism`).
 */
async function placeListed(pass: Pass, entry: KeyEntry): Promise<void> {
  const head = entry.counts.queued > 0 ? await queueHead(pass, entry) : null;
  const share =
    head !== null && pass.config.fairness === "share"
      ? { clock: levelClock(pass, head.priority), maxParallelism: pass.config.maxParallelism }
      : undefined;
  const place = head === null ? undefined : placeOf(entry, view(head), pass.now, share);
  // A row placed without a turn (due order) is a hint to a later pass under fair share, however
  // old: that pass reads the hints from the start.
  if (place !== undefined && place.tier === undefined) forgetHintCursors(pass);
  const listed = await listedRow(pass, entry);
  if (head === null || place === undefined) {
    if (listed !== null) await pass.ctx.db.delete("keyReady", listed._id);
    entry.listed = null;
    return;
  }
  // A waiting row is never left below its level's cursor, whatever this pass's clock.
  if (place.tier === TIER_WAITING) lowerWaitingCursor(pass, head.priority, place.pass ?? 0);
  const fields = { key: entry.counts.key, priority: head.priority, ...place };
  if (listed === null) {
    const id = await pass.ctx.db.insert("keyReady", fields);
    entry.listed = { _id: id, _creationTime: pass.now, ...fields };
  } else if (
    listed.runAt !== fields.runAt ||
    listed.priority !== fields.priority ||
    listed.tier !== fields.tier ||
    listed.pass !== fields.pass
  ) {
    await pass.ctx.db.patch("keyReady", listed._id, fields);
    entry.listed = { ...listed, ...fields };
  }
}

/** A level's clocks as stored (a copy; zero when never set). */
function levelClock(pass: Pass, level: StoredPriority): LevelClock {
  return { ...(pass.state.share?.[level ?? "normal"] ?? { time: 0, unkeyed: 0 }) };
}

/** Stores a level's clocks. */
function setLevelClock(pass: Pass, level: StoredPriority, clock: LevelClock): void {
  pass.state.share = { ...pass.state.share, [level ?? "normal"]: clock };
}
