/**
 * Over 400 lines on purpose: every table with its doc comment (who writes it, who reads it, when
 * rows are deleted) in one file, as Convex's one schema module, so the whole data model reads in
 * one place; the map in README.md points here.
 *
 * The component's tables. Outside callers (enqueue, cancel, workers) only ever append rows to the
 * three pending tables, into time segments the loop is not reading; only the loop (`mainLoop/`) moves a
 * job into or out of "running" and drains those tables.
 */
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";
import { vDeliveryItem } from "./runners/deliver.js";
import {
  vOverlap,
  vScheduleCounts,
  vScheduleRun,
  vScheduleState,
  vTiming,
} from "./model/schedule.js";
import {
  vFiledOutcome,
  vFnType,
  vJobState,
  vManualCompletion,
  vLogLevel,
  vOnCompleteSpec,
  vRateLimit,
  vRetryBehavior,
  vTaskHandover,
  vEventTotals,
  vFairness,
  vSecondEvents,
  vStoredPriority,
} from "./model/validators.js";

export default defineSchema({
  /**
   * One row per job, the job's identity (its id is the WorkId) and its state.
   * Written by: enqueue (insert), the loop (state changes, attempts, the canceled mark), the sweeper
   * (delete). Read by: the loop (by id), status, the action/mutation workers never (they get what they
   * need as arguments), cancelAll (by state).
   * Deleted by: the sweeper, once `expiresAt` passes (statusTtl after the job finished); never, when
   * the TTL is infinite.
   */
  work: defineTable({
    fnType: vFnType,
    fnHandle: v.string(),
    /** The function's path, e.g. "emails:send", for logs. */
    fnName: v.string(),
    /** The arguments, when small; undefined when they live in `payloads` (see `payloadId`). */
    fnArgs: v.optional(v.any()),
    /** Set when args or context are large: they live in this payload row, which the loop never reads. */
    payloadId: v.optional(v.id("payloads")),
    /** Attempts made so far (finished or given up on); the next attempt is number `attempts + 1`. */
    attempts: v.number(),
    /** Runs that ended in a SnoozeError (no attempt spent); with `attempts`, numbers the runs. */
    snoozes: v.optional(v.number()),
    /** Undefined means "never retry" (mutations, queries, and actions enqueued without retry). */
    retryBehavior: v.optional(vRetryBehavior),
    /** The callback; its context is undefined here when it lives in `payloads`. Dropped when the
     * job finishes: the `deliveries` row carries it from then on. */
    onComplete: v.optional(vOnCompleteSpec),
    /** True once a cancel was processed while the job ran: it will not be retried. */
    canceled: v.optional(v.boolean()),
    /** How long after finishing the row stays readable; undefined means forever. Dropped when
     * the job succeeds: `expiresAt` says it from then on, and only a job that failed or was
     * canceled can be retried (`retry` reads it). */
    statusTtlMs: v.optional(v.number()),
    state: vJobState,
    /** Set when a successful result's return value was large: it lives in this payload row. */
    resultPayloadId: v.optional(v.id("payloads")),
    /** When the sweeper may delete this finished row; undefined while unfinished or kept forever. */
    expiresAt: v.optional(v.number()),
    /** True while a finished large job awaits its delivery (which reads its payloads): the
     * sweeper leaves it, and delivery deletes it itself if it expired meanwhile. */
    deliveryPending: v.optional(v.boolean()),
    /** The job's key (keyState.ts): its jobs share a parallelism limit and start in order. */
    key: v.optional(v.string()),
    /** "high" or "low"; unset for "normal". Kept by retries and snoozes. */
    priority: vStoredPriority,
    /** The dedupe key it was enqueued with (dedupe.ts), so that deleting it can drop its row. */
    dedupeKey: v.optional(v.string()),
    /** For a task (API-EXTENSIONS section 8): its name in the executor `fnHandle` names. */
    task: v.optional(v.string()),
    /** Set when each attempt ends with the app's `complete` call (section 11): kept for `retry`. */
    manualCompletion: v.optional(vManualCompletion),
    /** The group the job joined at enqueue (section 12, api/groups.ts). */
    group: v.optional(v.id("groups")),
    /** For a task: how many times recovery took it back, never started, from an executor whose
     * action failed (not one that ended normally). Past TAKE_BACKS_FREE, each further one is a
     * failed attempt (mainLoop/recovery.ts), so a broken executor cannot keep a task forever. */
    failedTakeBacks: v.optional(v.number()),
    /** Set on a finished job that `retry` ran again: the job that run is (a later retry of this
     * one returns it and creates nothing). */
    retriedAs: v.optional(v.id("work")),
    /** The time the job's state orders it by: its due time while pending (never before it was
     * enqueued), the start of its attempt while running, when it finished once finished. Written
     * with every change of `state`; `list`, `stats` and recovery read the indexes on it. */
    listAt: v.number(),
    /** For a schedule's run (API-EXTENSIONS §10): the schedule's name. */
    schedule: v.optional(v.string()),
    /** For a schedule's run: the time it was enqueued for (before jitter). */
    scheduledFor: v.optional(v.number()),
    /** For a schedule's run buffered by `overlap: "bufferOne"`: the unfinished run it waits for. It
     * has no `pendingStart` row until that run finishes; then the loop files one and clears this
     * (mainLoop/scheduleRelease.ts). */
    waitsFor: v.optional(v.id("work")),
  })
    // Pending jobs by due time, running jobs by start time (recovery, `list`), finished ones by
    // finish time (`list`, newest first).
    .index("by_state", ["state.kind", "listAt"])
    // Finished jobs of one outcome, by finish time (`list({ outcome })`).
    .index("by_outcome", ["state.result.kind", "listAt"])
    .index("by_expiresAt", ["expiresAt"])
    // A key's jobs in enqueue order (cancelAll, `list({ key })`), by state, and by outcome (`list`).
    // eslint-disable-next-line @convex-dev/no-duplicate-indexes -- by_keyState sorts by state
    .index("by_key", ["key"])
    .index("by_keyState", ["key", "state.kind", "listAt"])
    .index("by_keyOutcome", ["key", "state.result.kind", "listAt"])
    // A group's jobs in enqueue order (cancelGroup, `list({ group })`), by state and by outcome
    // (`list`), as for keys.
    // eslint-disable-next-line @convex-dev/no-duplicate-indexes -- by_groupState sorts by state
    .index("by_group", ["group"])
    .index("by_groupState", ["group", "state.kind", "listAt"])
    .index("by_groupOutcome", ["group", "state.result.kind", "listAt"])
    // A schedule's runs in enqueue order, by state and by outcome (`list({ schedule })`).
    // eslint-disable-next-line @convex-dev/no-duplicate-indexes -- by_scheduleState sorts by state
    .index("by_schedule", ["schedule"])
    .index("by_scheduleState", ["schedule", "state.kind", "listAt"])
    .index("by_scheduleOutcome", ["schedule", "state.result.kind", "listAt"])
    // The buffered run waiting for a job, if any (the loop, when that job finishes).
    .index("by_waitsFor", ["waitsFor"]),

  /**
   * Large arguments, contexts and return values, kept apart from `work` so the loop never reads them.
   * Written by: enqueue (args + context, one row), workers (a large return value). Read by: workers
   * (args), delivery (context, return value), status/info (return value). Deleted: the args +
   * context row by delivery once the job finished (deliver.ts); a return value with its work row by
   * the sweeper.
   */
  payloads: defineTable({
    fnArgs: v.optional(v.any()),
    context: v.optional(v.any()),
    returnValue: v.optional(v.any()),
  }),

  /**
   * Jobs waiting to start: one row per pending attempt (or per batch of a call's jobs, `more`), at
   * the segment it may start in.
   * Written by: enqueue (into the next segment, or the segment of `runAt`; the first into a segment
   * also records the pass it scheduled there, `wake`), the loop (a retry, at the segment its backoff
   * ends). Read by: the loop (due segments), status and cancel (by workId), enqueues and the
   * watchdog (`by_wake`).
   * Deleted by: the loop, when it starts the job or processes its cancelation (a shared row once
   * its last job is started or canceled; until then the loop patches it to hold the rest).
   */
  pendingStart: defineTable({
    workId: v.id("work"),
    /** When the attempt became due (enqueue time, runAt, or the end of a retry's backoff). */
    runAt: v.number(),
    segment: v.number(),
    /** The job's key, if it has one: the loop starts it only within the key's limit (keyState.ts). */
    key: v.optional(v.string()),
    /** True for a keyed job's retry: it kept its key slot through the backoff. */
    holdsSlot: v.optional(v.boolean()),
    /** The job's priority ("normal" unset): the loop reads each level's due rows in turn. */
    priority: vStoredPriority,
    /** True for a row the loop inserted (a retry, a snooze): the loop wakes itself for those;
     * for every other row, the enqueue that wrote it made sure of a pass (`wake`). */
    fromLoop: v.optional(v.boolean()),
    /** Set on the row of the enqueue that scheduled the pass at `segment`'s start (the first
     * enqueue into that segment, kick.ts): later enqueues into the segment find it through
     * `by_wake` and schedule nothing; the watchdog's `checkWakes` restarts that pass if it failed.
     * Leaves with the row (the loop deletes it once a pass has read its segment). */
    wake: v.optional(v.object({ segment: v.number(), scheduledId: v.id("_scheduled_functions") })),
    /** True for a row an enqueue filed before its due segment (a job due more than a second out,
     * kick.ts `targetFor`): the loop moves it to its due segment before it starts anything
     * (mainLoop/refile.ts). */
    early: v.optional(v.literal(true)),
    /** The rest of the jobs of one `enqueueBatch` call that share this row's due time, segment and
     * priority and have no key (api/enqueue.ts, up to START_ROW_JOBS a row): they start in order
     * after `workId`. One canceled while it waits stays listed; the loop skips it (it is no longer
     * pending). */
    more: v.optional(v.array(v.id("work"))),
    /** True on a keyed job's row (set by every writer of a row with `key`): the start stage reads
     * keyed and unkeyed rows apart (`by_keyed`), so under fair share (section 13) it finds the keys
     * with due jobs without reading past the jobs without a key, and the other way round. A keyed
     * row without it (written before 0.3) is read with the unkeyed ones and taken to its key. */
    keyed: v.optional(v.literal(true)),
  })
    // Within a segment, by due time: jobs start in due order to the millisecond.
    .index("by_segment", ["segment", "runAt"])
    // The loop's own rows by segment: where it looks for the next one it must wake for, without
    // reading the segments enqueues are writing into.
    .index("by_fromLoop", ["fromLoop", "segment"])
    // Rows filed early, by segment: the loop moves the ones in segments it has reached.
    .index("by_early", ["early", "segment"])
    // What the start stage reads: one level at a time, each from its own cursor.
    .index("by_priority", ["priority", "segment", "runAt"])
    // The same, keyed rows apart from the others (fair share: mainLoop/start.ts).
    .index("by_keyed", ["keyed", "priority", "segment", "runAt"])
    // The wake-ups enqueues scheduled, by segment: read only by enqueues (each for the one segment
    // it writes into) and the watchdog's `checkWakes`, never by the loop.
    .index("by_wake", ["wake.segment"])
    .index("by_workId", ["workId"]),

  /**
   * Finished attempts waiting for the loop: one row per attempt a worker reported, or per up to
   * COMPLETION_ROW_OUTCOMES attempts an executor's report carried (`more`).
   * Written by: workers (the action worker through `worker.complete`; the mutation/query worker in its
   * own transaction), action runners and executors (their reports), into a segment the loop is not
   * reading (kick.ts `claimSegment`). Read by: the loop; recovery (by workId, or by `runner`).
   * Deleted by: the loop, when it processes the row's completions (retry or finish).
   */
  pendingCompletion: defineTable({
    // The row's first outcome (found by its workId).
    ...vFiledOutcome.fields,
    segment: v.number(),
    /** The rest of the outcomes of a report that carried many (an executor's, complete.ts
     * `recordCompletions`): one row holds up to COMPLETION_ROW_OUTCOMES, settled together. */
    more: v.optional(v.array(vFiledOutcome)),
    /** Set with `more`: the runner whose report this is (its executor's id, or an action
     * runner's token), by which recovery finds an outcome that is not a row's first. */
    runner: v.optional(v.string()),
  })
    .index("by_segment", ["segment"])
    .index("by_workId", ["workId", "attempt"])
    .index("by_runner", ["runner"]),

  /**
   * Cancel requests waiting for the loop. Written by: cancel and cancelAll, into the next segment.
   * Read by: the loop. Deleted by: the loop, when it processes the request.
   */
  pendingCancelation: defineTable({
    workId: v.id("work"),
    segment: v.number(),
  })
    .index("by_segment", ["segment"])
    // A dedupe lookup asks whether its job was asked to cancel (dedupe.ts).
    .index("by_workId", ["workId"]),

  /**
   * Dedupe keys: one row per key, pointing at the latest job enqueued with it. Written (inserted or
   * patched) and read only by enqueues and retries with that key, so a lookup conflicts with
   * nothing else; the loop never touches it. Deleted with the job it points at, by whoever deletes
   * that job (the sweeper, or delivery).
   * A key (up to 4,096 characters: URLs) is found by a hash of it (`by_hash`) and compared in full
   * (`fullKey`). Rows written before 0.2.0 hold the key in `dedupeKey` (indexed as it is, 256
   * characters at most) and are still found that way until they are deleted with their job.
   */
  dedupe: defineTable({
    /** A hash of the key (model/dedupeHash.ts); undefined on rows from before 0.2.0. */
    hash: v.optional(v.string()),
    /** The whole key, on rows found by `hash`. */
    fullKey: v.optional(v.string()),
    /** The key, on rows from before 0.2.0 only. */
    dedupeKey: v.optional(v.string()),
    workId: v.id("work"),
  })
    .index("by_hash", ["hash"])
    .index("by_dedupeKey", ["dedupeKey"]),

  /**
   * Keyed jobs that are due but may not start yet: their key is at its limit, paused, or has jobs
   * ahead of them. One row per job, in the key's start order (`rank`: a retry that holds its slot
   * first, then by priority; within a rank by due time, then enqueue order). Written, read and deleted only by the loop: a row
   * is inserted when a due keyed job cannot start, deleted when it starts or is canceled.
   */
  keyQueue: defineTable({
    key: v.string(),
    workId: v.id("work"),
    /** 0 for a retry that holds its key slot; otherwise 1, 2 or 3 for high, normal and low. */
    rank: v.number(),
    runAt: v.number(),
    /** The job's priority ("normal" unset), for the key's `keyReady` row when it heads the queue. */
    priority: vStoredPriority,
  })
    .index("by_key", ["key", "rank", "runAt"])
    .index("by_workId", ["workId"]),

  /**
   * Keys that may start their queue's head: one row per key, at the head's due time. Written by the
   * loop (when a key with a queue gets a free slot) and by `setKeyParallelism` and `resume` (a
   * hint: the loop checks the key's state before starting anything). Read and deleted by the loop.
   */
  keyReady: defineTable({
    key: v.string(),
    runAt: v.number(),
    /** The head's priority ("normal" unset): a slot-holding retry or snooze heads its key's queue
     * at its own priority, so the key is listed at that level. */
    priority: vStoredPriority,
    /** Under fair share (section 13): 0 while the key runs fewer attempts than its reserve, else 1;
     * unset on a hint (`setKeyParallelism`, `resume`) the loop has not placed yet. */
    tier: v.optional(v.number()),
    /** Under fair share: the key's virtual pass when listed (model/startOrder.ts); in the tier of
     * keys waiting for their rate limit (2), the time it may start instead. */
    pass: v.optional(v.number()),
  })
    .index("by_runAt", ["runAt"])
    .index("by_priority", ["priority", "runAt"])
    // Fair share's order: a level's keys below their reserve first, then by virtual pass.
    .index("by_share", ["priority", "tier", "pass"])
    .index("by_key", ["key"]),

  /**
   * Each key's counts, as the loop knows them: one row per key seen by the loop. Written and read
   * only by the loop (and read by `keyStatus`); deleted by the sweeper with the key's ledger once
   * every job of the key was swept.
   */
  keyState: defineTable({
    key: v.string(),
    /** Jobs holding a key slot: running, or waiting out a retry's backoff. */
    active: v.number(),
    /** Jobs whose attempt is running. */
    running: v.number(),
    /** Rows in `keyQueue`. */
    queued: v.number(),
    /** Rows in `keyQueue` by rank (index 0 to 3); unset while the key never queued a job. */
    queuedByRank: v.optional(v.array(v.number())),
    /** Per rank, the due time of the last queued job of that rank started: head reads start near
     * it, past the index entries of the key's started jobs (keyState.ts, `queueHead`). */
    headFromByRank: v.optional(v.array(v.union(v.number(), v.null()))),
    /** The key's virtual pass under fair share (section 13, model/startOrder.ts): grows by
     * 1/weight with each start; unset until its first start under fair share. */
    pass: v.optional(v.number()),
    /** The key's starts of its rate limit's last period, in buckets (model/startOrder.ts);
     * unset while the key has no rate limit. */
    startLog: v.optional(v.array(v.object({ from: v.number(), at: v.number(), n: v.number() }))),
    /** Jobs finished with each result, ever (the ledger counts those swept since). */
    succeeded: v.number(),
    failed: v.number(),
    canceled: v.number(),
  }).index("by_key", ["key"]),

  /**
   * Each key's enqueues and sweeps, counted by those callers: up to ENQUEUE_COUNT_SHARDS rows per
   * key, one per shard. An enqueue call adds its count to its own shard's row (the shard of its
   * `enqueueCounts` row), so concurrent enqueues into one key (a key used to throttle an API) touch
   * the same row only when they already touch the same `enqueueCounts` row: 1 time in 16. Never
   * read by the loop. Read by `keyStatus` (all of the key's rows, a constant number) and the
   * sweeper, which adds its counts to one row and deletes them all (with the key's `keyState`)
   * once every job of the key was swept. Rows from before 0.2.0 have no shard.
   */
  keyLedger: defineTable({
    key: v.string(),
    /** The row's shard; undefined on a row from before 0.2.0 (one per key). */
    shard: v.optional(v.number()),
    enqueued: v.number(),
    sweptSucceeded: v.number(),
    sweptFailed: v.number(),
    sweptCanceled: v.number(),
  }).index("by_keyShard", ["key", "shard"]),

  /**
   * Groups (API-EXTENSIONS section 12): one row per group. Written by `createGroup` (insert),
   * `closeGroup` (`closed`; `finishedAt` when every job had finished by then), the loop
   * (`finishedAt`, when it finishes the last job of a closed group) and the group's callback
   * (`notified`). Read by enqueues into the
   * group (open?), `groupStatus` and the loop. Deleted by the sweeper, with its ledger and state
   * rows, GROUP_STATUS_TTL_MS after it was done.
   */
  groups: defineTable({
    name: v.optional(v.string()),
    closed: v.boolean(),
    createdAt: v.number(),
    /** When the group became done: closed, and every job of it finished. */
    finishedAt: v.optional(v.number()),
    /** The group's callback (a mutation handle) and its context (inline-sized). */
    onComplete: v.optional(v.object({ fnHandle: v.string(), context: v.optional(v.any()) })),
    /** True once the group's callback ran (runners/groupCallback.ts), or was due with none. */
    notified: v.optional(v.boolean()),
    /** When the sweeper deletes the group's rows: GROUP_STATUS_TTL_MS after it was done. */
    expiresAt: v.optional(v.number()),
  }).index("by_expiresAt", ["expiresAt"]),

  /**
   * Each group's enqueues, counted by the enqueue calls: up to ENQUEUE_COUNT_SHARDS rows per group,
   * one per shard, as `keyLedger` for keys, so that concurrent enqueues into one group touch the
   * same row only when they touch the same `enqueueCounts` row (1 time in 16). Written only by
   * enqueues; read by `groupStatus` (all of a group's rows: a constant number), `closeGroup` and the
   * loop once the group is closed (no enqueue writes them then). Deleted with the group.
   */
  groupLedger: defineTable({
    groupId: v.id("groups"),
    shard: v.number(),
    enqueued: v.number(),
  }).index("by_groupShard", ["groupId", "shard"]),

  /**
   * What the loop counts of each group: jobs running and finished by outcome. One row per group
   * that has started a job, written only by the loop (so no enqueue conflicts with it); read by
   * `groupStatus` and `closeGroup`. Deleted with the group.
   */
  groupState: defineTable({
    groupId: v.id("groups"),
    running: v.number(),
    succeeded: v.number(),
    failed: v.number(),
    canceled: v.number(),
  }).index("by_group", ["groupId"]),

  /**
   * A key's own settings: one row per key that has any. Written by `setKeyParallelism`,
   * `setKeyShare`, `setKeyRateLimit`, `pause({ key })` and `resume({ key })`; read by the loop and `keyStatus`. Deleted when the key's
   * settings return to the defaults.
   */
  keySettings: defineTable({
    key: v.string(),
    /** Overrides the pool's keyParallelism for this key. */
    parallelism: v.optional(v.number()),
    paused: v.optional(v.boolean()),
    /** The key's weight in its level's turns (section 13); unset means 1. */
    weight: v.optional(v.number()),
    /** Attempts the key is served first up to (section 13); unset means 0. */
    reserve: v.optional(v.number()),
    /** The key's own rate limit, or false to exempt it from the pool's keyRateLimit; unset means
     * the pool's. */
    rateLimit: v.optional(v.union(vRateLimit, v.literal(false))),
  }).index("by_key", ["key"]),

  /**
   * Executors: one row per executor action the loop started (runners/executor.ts). Written by the
   * loop (inserted when it starts one; `assigned` as it hands tasks over and their attempts end;
   * deleted once the action ended and nothing is assigned) and by the executor's own report
   * (`concurrency` on its first call, `ending` on its last), each keeping `open`. Read by the loop
   * (the open ones of an executor function, a bounded number; others by id) and by the executor's
   * reports (their own row).
   */
  executors: defineTable({
    /** The executor action's function handle: the `fnHandle` of its tasks' work rows. */
    fnHandle: v.string(),
    /** The executor action's run, for the scheduler's word on whether it still runs (set in the
     * transaction that inserts the row, once the run is scheduled: the run is told the row's id). */
    scheduledId: v.optional(v.id("_scheduled_functions")),
    startedAt: v.number(),
    /** Tasks handed to it whose attempt has not ended yet (the loop's count). */
    assigned: v.number(),
    /** How many tasks it runs at once, as it said on its first report; until then what another
     * executor of its function said (set when the loop starts it), or else the default. */
    concurrency: v.optional(v.number()),
    /** Set by its last report (it takes nothing more and ends), or by recovery once it found the
     * executor's action over: it is handed nothing more. */
    ending: v.optional(v.literal(true)),
    /** True while it may take more tasks as far as its counts and age go (not ending, within its
     * hand-over window, fewer assigned than its concurrency), kept by whoever writes those (the
     * loop closes one it finds past its window): the loop reads only these rows of an executor
     * function when it hands tasks over, not every executor's. */
    open: v.optional(v.boolean()),
  }).index("by_open", ["fnHandle", "open"]),

  /**
   * What each executor function said of its concurrency, one row per executor function: it
   * outlives the executor rows, so that an executor started after all its function's executors
   * ended is handed no more than it runs (chaos program 643: before, every new executor of an idle
   * function was handed 50, and gave the rest back). Written by an executor's report that states
   * a concurrency this row lacks or differs from (a deploy that changes it overrides it); read by
   * the loop when it starts an executor whose function no executor of the pass has said it for.
   * Deleted by the loop when the function cannot be scheduled (a deploy removed it); otherwise
   * kept, one small row per executor function the app ever used.
   */
  executorFunctions: defineTable({
    /** The executor action's function handle (as in `executors.fnHandle`). */
    fnHandle: v.string(),
    /** How many tasks it runs at once, as its latest report that said it said. */
    concurrency: v.number(),
  }).index("by_fnHandle", ["fnHandle"]),

  /**
   * What the loop hands an executor: tasks to run and tasks to cancel, one row per executor per
   * pass (or more, HANDOVER_ROW_BYTES each). Written only by the loop, into the segment after its
   * own; read and deleted by the executor's reports (up to their own clock's segment, so a report
   * and a pass do not meet), and by the loop for an executor that ended or died before taking
   * them (the task goes back to pending, no attempt used).
   */
  handovers: defineTable({
    executorId: v.id("executors"),
    segment: v.number(),
    tasks: v.array(vTaskHandover),
    /** Tasks to cancel (their signal aborts). */
    cancels: v.array(v.id("work")),
    /** The pool's maxParallelism when the loop handed these tasks over: a report that finds it
     * lowered since gives them back untaken (runners/executor.ts), so that tasks not yet taken
     * obey the new limit. */
    maxParallelism: v.optional(v.number()),
    /** Set when a report took this row's tasks and cancels: that report's sequence number. The
     * row stays until the executor's next report (a later number) deletes it, so that a retry of
     * the report whose answer was lost gets the same tasks again (runners/executor.ts). */
    takenBy: v.optional(v.number()),
  }).index("by_executor", ["executorId", "segment"]),

  /**
   * onComplete callbacks waiting to be delivered, a batch per row (see deliver.ts).
   * Written by: the loop (the callbacks of the jobs a pass finished), `deliver` (a continuation, or
   * one row per callback that needs a transaction to itself), the loop's delivery check (the same
   * split, for a delivery that died). Read by: `deliver` (by token), the loop's delivery check
   * (rows older than DELIVERY_CHECK_MS, from a cursor). Deleted by: `deliver`, in the transaction
   * that calls the callbacks (so each is called exactly once), or by the check when it splits a row
   * whole (a row split in part, as far as the pass's budget went, keeps the rest: `splitFrom`).
   */
  deliveries: defineTable({
    /** Names the row for its deliverer: unique per row (loop generation and suffixes). */
    token: v.string(),
    items: v.array(vDeliveryItem),
    /** Set on a row of several callbacks to one handler: the onComplete mutation of every item,
     * which then leave out their own (issue 40: its handle once per row, not per callback). */
    fnHandle: v.optional(v.string()),
    /** True when its one callback has a whole transaction to itself. */
    solo: v.boolean(),
    /** The deliverer scheduled for this row. */
    scheduledId: v.id("_scheduled_functions"),
    /** For a solo row: the how-manieth transaction its callback gets (1 when unset). */
    attempts: v.optional(v.number()),
    /** For a row the delivery check split in part (its pass's budget ran out, passBudget.ts): how
     * many of its callbacks went to rows of their own, so that the next split's tokens go on. */
    splitFrom: v.optional(v.number()),
    /** On a row made from an earlier one (a continuation, a split, a retry): when the first row of
     * its callbacks was written (that row's `since`, else its creation time). A group's callback
     * waits for every row of callbacks from before the group was done, rewritten or not. */
    since: v.optional(v.number()),
  })
    .index("by_token", ["token"])
    .index("by_since", ["since"]),

  /**
   * onComplete callbacks that could not be delivered: one row (the singleton), a running count and
   * the last failure. Written by: `deliver` when a handler throws, the loop's delivery check when a
   * callback's own transaction failed. Read by: the report. Never deleted.
   */
  deliveryStats: defineTable({
    failures: v.number(),
    lastFailure: v.optional(v.object({ workId: v.id("work"), error: v.string(), at: v.number() })),
  }),

  /**
   * The pool's settings; one row (the singleton), created on first use.
   * Written by: `config.update`, and enqueue/cancel when the client's options differ from it;
   * `config.setMaxParallelism` (the operator's value only); pause/resume (`paused` only).
   * Read by: the loop (each pass), enqueue. Never deleted.
   */
  config: defineTable({
    /** The clients' maxParallelism (the last one a client passed); see operatorMaxParallelism. */
    maxParallelism: v.number(),
    /** The operator's maxParallelism: while set, the one in force. Only `setMaxParallelism` writes
     * it, so no client's options undo it. */
    operatorMaxParallelism: v.optional(v.number()),
    /** Unset until someone sets it: the pool then logs at the default level (logging.ts). */
    logLevel: v.optional(vLogLevel),
    /** Jobs of one key that may run at once, unless the key says otherwise (default 1). */
    keyParallelism: v.optional(v.number()),
    /** True between `pause()` and `resume()`: no attempt starts. Only those two write it. */
    paused: v.optional(v.boolean()),
    /** At most `starts` attempts start in any interval of `periodMs` (rateLimit.ts). */
    rateLimit: v.optional(vRateLimit),
    /** How keys share a level's starts (section 13); unset means "share". */
    fairness: v.optional(vFairness),
    /** Every key's rate limit unless its settings say otherwise (section 13). */
    keyRateLimit: v.optional(vRateLimit),
  }),

  /**
   * Jobs enqueued, counted by the enqueue paths (enqueue, enqueueBatch, retry), for `stats`: one
   * row per shard, each call adding its jobs to one shard drawn at random, so that concurrent
   * enqueues rarely touch the same row. Written only by enqueues, never read or written by the loop
   * (an enqueue conflicts with no pass). Read by `stats`. Never deleted (ENQUEUE_COUNT_SHARDS rows).
   */
  enqueueCounts: defineTable({
    shard: v.number(),
    enqueued: v.number(),
  }).index("by_shard", ["shard"]),

  /**
   * What the loop did in each of the last 60 seconds, for `stats().lastMinute`: a ring of at most
   * 60 rows, one per second of the minute (`slot` = second mod 60), each holding the counts of the
   * latest second that used it. Written only by the loop, once per second that had events, when a
   * later pass flushes that second out of `loopState.thisSecond`. Read by `stats`. Never deleted.
   */
  eventCounts: defineTable({
    slot: v.number(),
    ...vSecondEvents.fields,
  }).index("by_slot", ["slot"]),

  /**
   * Whether the wake-ups' watchdog is armed (watchdog.ts, `checkWakes`): one row (the singleton).
   * Written by an enqueue that scheduled a wake while it was not armed, and by the check (its
   * cursor, and disarming when no wake is left). Never read or written by the loop. Never deleted.
   */
  wakeWatch: defineTable({
    armed: v.boolean(),
    /** Every wake-up of a segment below this had its pass run (or its row is gone): the check
     * reads `by_wake` from here, past the index entries of rows the loop deleted. */
    from: v.optional(v.number()),
  }),

  /**
   * Whether the loop needs waking; one row (the singleton). Read by every cancel and completion
   * (enqueues wake the loop through `pendingStart.wake` instead, and never read it); written only on a transition (the loop going idle or to sleep until a later segment,
   * or a caller waking it) and by the watchdog when it stops, so that callers do not conflict with
   * the running loop's own writes.
   * Never deleted.
   */
  runStatus: defineTable({
    state: v.union(
      /** The loop is scheduled for the next segment: callers write there and need do nothing. */
      v.object({ kind: v.literal("running") }),
      /** A caller woke the loop to run now, for `segment`: callers in that segment join it.
       * `scheduledId` is the pass it scheduled (for the watchdog; absent on rows from before). */
      v.object({
        kind: v.literal("waking"),
        segment: v.number(),
        scheduledId: v.optional(v.id("_scheduled_functions")),
      }),
      /** The loop sleeps until `segment`; a caller with earlier work wakes it. */
      v.object({
        kind: v.literal("scheduled"),
        segment: v.number(),
        scheduledId: v.id("_scheduled_functions"),
      }),
      /** Nothing to do and nothing scheduled: the next caller wakes the loop. */
      v.object({ kind: v.literal("idle") }),
    ),
    /** The generation a caller must pass to `main` when it wakes the loop. */
    generation: v.number(),
    /** True while a watchdog check is scheduled (see watchdog.ts); undefined means false. */
    watchdogArmed: v.optional(v.boolean()),
    /** Written by the watchdog only: the passes it found failed in a row while the loop stayed at
     * `generation` (no pass committed in between), and the last one's error; the backstop's count
     * (watchdog.ts `restartPass`). */
    failedPasses: v.optional(
      v.object({
        count: v.number(),
        generation: v.number(),
        error: v.string(),
        /** The stage the failed passes were in (pass.ts `STAGES`), when known. */
        stage: v.optional(v.string()),
      }),
    ),
  }),

  /**
   * The loop's own bookkeeping; one row (the singleton). Written and read only by `main`, so callers
   * never conflict with it. Never deleted.
   */
  loopState: defineTable({
    /** The generation the next `main` must carry; any other `main` is stale and returns at once. */
    generation: v.number(),
    /** The scheduled function of the next pass, when the loop scheduled one: the watchdog asks the
     * scheduler whether it is still due or running (watchdog.ts). */
    nextPassId: v.optional(v.id("_scheduled_functions")),
    /** Jobs in state "running" (started, completion not yet processed). */
    running: v.number(),
    /** When the last recovery cycle ended (ms since epoch). */
    lastRecoveryAt: v.number(),
    /** Where the recovery cycle under way goes on (a page cursor over running jobs); undefined
     * between cycles. */
    recoveryCursor: v.optional(v.string()),
    /** No running job started before this (ms): recovery cycles read the running jobs from here,
     * past the index entries of jobs that left "running" since. Set from the oldest running job a
     * cycle met first; jobs only ever enter "running" at the time of the pass that starts them. */
    recoveryFloor: v.optional(v.number()),
    /** The floor the next cycle will use (found at the start of the cycle under way). */
    nextRecoveryFloor: v.optional(v.number()),
    /** The loop schedules no sweep before this time (ms since epoch). */
    nextSweepAt: v.number(),
    /** When the loop next looks for deliveries that died; undefined when none are outstanding. */
    deliveryCheckAt: v.optional(v.number()),
    /** Delivery rows created before this time are gone: the check starts here (past tombstones). */
    deliveryCursor: v.optional(v.number()),
    /** Per pending table, the lowest segment that may still hold rows: passes read from here (less
     * a margin, see segments.ts), not from the tombstones of every row they ever deleted. */
    cursors: v.optional(
      v.object({
        start: v.number(),
        completion: v.number(),
        cancelation: v.number(),
        /** The start cursors of the "high" and "low" levels (`start` is the "normal" one's). */
        startHigh: v.optional(v.number()),
        startLow: v.optional(v.number()),
        /** The cursor of the rows filed early (`by_early`). */
        early: v.optional(v.number()),
        /** The start cursors of keyed rows (`by_keyed`), per level, under fair share: `start`,
         * `startHigh` and `startLow` are then those of the rows without a key. */
        keyedStart: v.optional(v.number()),
        keyedHigh: v.optional(v.number()),
        keyedLow: v.optional(v.number()),
        /** The cursors of the hints in `keyReady` (keys `resume` or `setKeyParallelism` listed
         * without a place), per level, by creation segment, under fair share: a hint's row leaves
         * the hints' range when the loop places it, and these keep later reads past the tombstones
         * a mass resume leaves there. Unset under `fairness: "due"`, which places rows without a
         * tier. */
        hints: v.optional(v.number()),
        hintsHigh: v.optional(v.number()),
        hintsLow: v.optional(v.number()),
        /** The cursors of the keys waiting for their rate limit (`keyReady` tier 2), per level,
         * under fair share: a time (ms since epoch, not a segment), below which no such row of
         * the level is left. Every waiting row a pass reads is placed again at the end of that
         * pass (its new time, if it still waits, is past the pass's clock), and placing a row
         * below the cursor lowers it, so later reads start here, past the entries such rows
         * leave behind. Due order drops a row's tier, or moves it to its next head's level with
         * tier and time as they were, lowering that level's cursor to it. Unset for a level until
         * a pass reads one of its waiting rows. */
        waiting: v.optional(v.number()),
        waitingHigh: v.optional(v.number()),
        waitingLow: v.optional(v.number()),
      }),
    ),
    /** The cutoff of the last sweep scheduled: every expiry at or below it is the sweeper's, so
     * the loop looks for the next expiry above it (past the sweeper's tombstones). */
    expiryCursor: v.optional(v.number()),
    /** Fair share's clocks per level (section 13, model/startOrder.ts): the level's virtual time
     * (`time`, the pass of its latest start) and the virtual pass of its jobs without a key. */
    share: v.optional(v.record(v.string(), v.object({ time: v.number(), unkeyed: v.number() }))),
    /** The starts of the last rate-limit period, in buckets (rateLimit.ts); unset without a limit.
     * `from` and `at` are the times of a bucket's first and latest starts, `n` how many. */
    startLog: v.optional(v.array(v.object({ from: v.number(), at: v.number(), n: v.number() }))),
    /** Events the loop counted, ever (since the upgrade that added this field): `stats().totals`
     * less `enqueued`, which the enqueue paths count (`enqueueCounts`). */
    totals: v.optional(vEventTotals),
    /** Jobs the loop finished, ever (`stats`: pending = enqueued − finished − running). */
    finishedTotal: v.optional(v.number()),
    /** No pending job has `listAt` below this: `stats` and `list` read pending jobs from here, past
     * the index entries of jobs that left "pending" (stats.ts, `advancePendingFloor`). */
    pendingFloor: v.optional(v.number()),
    /** The counts of the latest second with events; flushed to `eventCounts` by the first pass of
     * a later second. */
    thisSecond: v.optional(vSecondEvents),
    /** Counters since the last report; see stats.ts. */
    stats: v.object({
      since: v.number(),
      started: v.number(),
      succeeded: v.number(),
      failed: v.number(),
      retried: v.number(),
      canceled: v.number(),
      recovered: v.number(),
      staleCompletions: v.number(),
      startLagMsTotal: v.number(),
      startLagMsMax: v.number(),
    }),
  }),
  /**
   * Recurring schedules (API-EXTENSIONS §10), one row per name. Each `waiting` row has exactly one
   * scheduled `schedules.fire` (its `state.timerId`), fenced by `generation`: between its times a
   * schedule costs nothing, and no transaction reads other schedules' rows.
   * Written by: `schedules.schedule` (insert, or replace under the same name), `pauseSchedule`,
   * `resumeSchedule`, `runScheduleNow` (`lastRun`), and its own `fire` (counts, lastRun, the next
   * timer). Read by: those, `getSchedule`, `listSchedules` (by name). Never read or written by the
   * loop.
   * Deleted by: `unschedule` (its runs already enqueued go on).
   */
  schedules: defineTable({
    name: v.string(),
    run: vScheduleRun,
    timing: vTiming,
    startAt: v.optional(v.number()),
    endAt: v.optional(v.number()),
    overlap: vOverlap,
    catchupWindowMs: v.number(),
    jitterMs: v.number(),
    state: vScheduleState,
    /** Bumped whenever the timer is set or dropped: a `fire` carrying another generation is stale
     * (the schedule was replaced, paused, resumed or deleted since) and does nothing. */
    generation: v.number(),
    /** The latest time handled (run, skipped or missed): a replaced or resumed schedule's next
     * time is after it, so that no time runs twice. */
    lastTime: v.optional(v.number()),
    counts: vScheduleCounts,
    /** The latest run enqueued (by a time or `runScheduleNow`): what `overlap` looks at. */
    lastRun: v.optional(v.object({ workId: v.id("work"), scheduledFor: v.number() })),
  }).index("by_name", ["name"]),
});
