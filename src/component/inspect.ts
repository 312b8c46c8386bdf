/**
 * Looking at a pool from outside: `list` (jobs page by page, by state, outcome and key), `stats`
 * (the pool's health in a constant number of reads) and `overview` (an operator page's view: stats,
 * the last minute second by second, a page of keys). Read-only queries: they never write,
 * and they read only what the loop and the enqueue paths already keep (stats.ts, enqueue.ts).
 */
import { paginationOptsValidator, paginationResultValidator } from "convex/server";
import type { Doc, Id } from "./_generated/dataModel.js";
import { parseGroupId } from "./api/groups.js";
import { query, type QueryCtx } from "./_generated/server.js";
import { readConfig } from "./config.js";
import { ENQUEUE_COUNT_SHARDS } from "./api/enqueue.js";
import { invalidArgument } from "./model/errors.js";
import { deriveListedInfo } from "./api/jobStatus.js";
import {
  vListedWorkInfo,
  vListFilter,
  vOverview,
  vPoolStats,
  type ListFilter,
  type PoolStats,
} from "./model/validators.js";
import {
  emptyTotals,
  LAST_MINUTE_SECONDS,
  secondsOfLastMinute,
  sumLastMinute,
} from "./mainLoop/stats.js";
import { keyStatusOf } from "./keys.js";
import { validateKey, validatePageSize } from "./model/validate.js";
import { validateScheduleName } from "./model/schedule.js";

/** The most jobs one `list` page holds: one read each, well inside a query's limits. */
export const MAX_LIST_PAGE = 1000;

/** Where a page of jobs in `state` starts reading: pending and running jobs from the loop's floors
 * (no such job lies below them), finished ones from the start. */
function listFloor(state: ListFilter["state"], loop: Doc<"loopState"> | null): number {
  return state === "pending"
    ? (loop?.pendingFloor ?? 0)
    : state === "running"
      ? (loop?.recoveryFloor ?? 0)
      : Number.NEGATIVE_INFINITY;
}

/**
 * The query a page reads, in the order `list` promises: pending jobs by due time and running ones
 * by start time (oldest first), finished ones newest first; with no state, newest enqueued first.
 * Pending and running jobs are read from the loop's floors (no such job lies below them), not
 * across the index entries of every job that left those states.
 */
function jobsInListOrder(ctx: QueryCtx, filter: ListFilter, loop: Doc<"loopState"> | null) {
  if (filter.schedule !== undefined) {
    return scheduleRunsInListOrder(ctx, filter.schedule, filter, loop);
  }
  const { key, outcome } = filter;
  const work = ctx.db.query("work");
  if (filter.group !== undefined) return groupJobsInListOrder(ctx, filter, loop);
  if (outcome !== undefined) {
    return key === undefined
      ? work.withIndex("by_outcome", (q) => q.eq("state.result.kind", outcome)).order("desc")
      : work
          .withIndex("by_keyOutcome", (q) => q.eq("key", key).eq("state.result.kind", outcome))
          .order("desc");
  }
  const state = filter.state;
  if (state === undefined) {
    return key === undefined
      ? work.withIndex("by_creation_time").order("desc")
      : work.withIndex("by_key", (q) => q.eq("key", key)).order("desc");
  }
  const floor = listFloor(state, loop);
  const order = state === "finished" ? "desc" : "asc";
  return key === undefined
    ? work.withIndex("by_state", (q) => q.eq("state.kind", state).gte("listAt", floor)).order(order)
    : work
        .withIndex("by_keyState", (q) =>
          q.eq("key", key).eq("state.kind", state).gte("listAt", floor),
        )
        .order(order);
}

/** `jobsInListOrder` for one group's jobs (`group` given, `key` not), in the same orders. */
function groupJobsInListOrder(ctx: QueryCtx, filter: ListFilter, loop: Doc<"loopState"> | null) {
  const group = filter.group as Id<"groups">;
  const work = ctx.db.query("work");
  const { outcome, state } = filter;
  if (outcome !== undefined) {
    return work
      .withIndex("by_groupOutcome", (q) => q.eq("group", group).eq("state.result.kind", outcome))
      .order("desc");
  }
  if (state === undefined) {
    return work.withIndex("by_group", (q) => q.eq("group", group)).order("desc");
  }
  const floor = listFloor(state, loop);
  return work
    .withIndex("by_groupState", (q) =>
      q.eq("group", group).eq("state.kind", state).gte("listAt", floor),
    )
    .order(state === "finished" ? "desc" : "asc");
}

/** `jobsInListOrder` for one schedule's runs (`list({ schedule })`), in the same orders. */
function scheduleRunsInListOrder(
  ctx: QueryCtx,
  schedule: string,
  { state, outcome }: ListFilter,
  loop: Doc<"loopState"> | null,
) {
  const work = ctx.db.query("work");
  if (outcome !== undefined) {
    return work
      .withIndex("by_scheduleOutcome", (q) =>
        q.eq("schedule", schedule).eq("state.result.kind", outcome),
      )
      .order("desc");
  }
  if (state === undefined) {
    return work.withIndex("by_schedule", (q) => q.eq("schedule", schedule)).order("desc");
  }
  const floor = listFloor(state, loop);
  return work
    .withIndex("by_scheduleState", (q) =>
      q.eq("schedule", schedule).eq("state.kind", state).gte("listAt", floor),
    )
    .order(state === "finished" ? "desc" : "asc");
}

/** A page of jobs, filtered by state, outcome and key (see `jobsInListOrder` for the order). */
export const list = query({
  args: { ...vListFilter, paginationOpts: paginationOptsValidator },
  returns: paginationResultValidator(vListedWorkInfo),
  handler: async (ctx, { paginationOpts, ...filter }) => {
    const { numItems } = paginationOpts;
    validatePageSize("paginationOpts.numItems", numItems, MAX_LIST_PAGE);
    if (filter.outcome !== undefined && filter.state !== undefined && filter.state !== "finished") {
      invalidArgument(
        "state",
        'must be "finished" (or left out) when an outcome is given',
        filter.state,
      );
    }
    if (filter.key !== undefined) validateKey(filter.key);
    if (filter.group !== undefined) {
      if (filter.key !== undefined || filter.schedule !== undefined) {
        invalidArgument("group", "give one of key, group or schedule, not two", filter.group);
      }
      parseGroupId(ctx.db, filter.group, "group");
    }
    if (filter.schedule !== undefined) {
      validateScheduleName(filter.schedule, "schedule");
      if (filter.key !== undefined) {
        invalidArgument("schedule", "cannot be combined with key", filter.schedule);
      }
    }
    // Only pending and running pages start at the loop's floors; others need not re-run (as a
    // subscription) on every pass that rewrites the loop's state.
    const needsFloor =
      filter.outcome === undefined && (filter.state === "pending" || filter.state === "running");
    const loop = needsFloor ? await ctx.db.query("loopState").first() : null;
    const query = () => jobsInListOrder(ctx, filter, loop);
    let result;
    try {
      result = await query().paginate(paginationOpts);
    } catch (error) {
      // A cursor is opaque: the only way to tell a bad one is that the same list reads without it.
      if (paginationOpts.cursor === null) throw error;
      // (A query may paginate once: the check reads with `take`.)
      await query().take(1);
      invalidArgument(
        "paginationOpts.cursor",
        "must be a cursor a page of this same list returned",
        paginationOpts.cursor,
      );
    }
    return { ...result, page: result.page.map(deriveListedInfo) };
  },
});

/**
 * The pool's health: exact counts from a constant number of reads (16 counter shards, the loop's
 * state, the config, the 60-slot event ring and the oldest pending job), whatever the backlog.
 * pending = jobs enqueued (counted by the enqueue paths) − finished − running (counted by the loop).
 * `totals` adds no read: `enqueued` is the shards' sum, the rest the loop's `loopState.totals`.
 */
export const stats = query({
  args: {},
  returns: vPoolStats,
  handler: async (ctx): Promise<PoolStats> => (await readHealth(ctx, Date.now())).stats,
});

/** `stats` at `now`, with the rows it read that `overview` uses too. */
async function readHealth(ctx: QueryCtx, now: number) {
  const [loop, config, shards, ring] = await Promise.all([
    ctx.db.query("loopState").first(),
    readConfig(ctx.db),
    ctx.db.query("enqueueCounts").take(ENQUEUE_COUNT_SHARDS),
    ctx.db.query("eventCounts").take(LAST_MINUTE_SECONDS),
  ]);
  const enqueued = shards.reduce((sum, shard) => sum + shard.enqueued, 0);
  const running = loop?.running ?? 0;
  const oldest = await ctx.db
    .query("work")
    .withIndex("by_state", (q) =>
      q.eq("state.kind", "pending").gte("listAt", loop?.pendingFloor ?? 0),
    )
    .first();
  const stats: PoolStats = {
    pending: enqueued - (loop?.finishedTotal ?? 0) - running,
    running,
    maxParallelism: config.maxParallelism,
    operatorMaxParallelism: config.operatorMaxParallelism,
    paused: config.paused,
    oldestPendingMs: oldest !== null && oldest.listAt <= now ? now - oldest.listAt : 0,
    lastMinute: sumLastMinute(now, ring, loop?.thisSecond),
    totals: { enqueued, ...(loop?.totals ?? emptyTotals()) },
  };
  return { stats, config, ring, current: loop?.thisSecond };
}

/** The most keys one `overview` page holds: each costs its `keyState` row, its ledger's rows (at
 * most 17) and its settings row, so a page reads at most about 1,900 documents, far inside a
 * query's limits, and a dashboard shows a screenful. */
export const MAX_KEY_PAGE = 100;

/**
 * What an operator's page shows at a glance: `stats`, the last minute second by second (oldest
 * first, 60 entries, seconds without events as zeros: the same ring `lastMinute` sums), and a page
 * of keys in key order with each key's `keyStatus`. Keys are those the loop has counts for (a
 * `keyState` row: a key whose jobs it has started, queued or finished, until they are all swept).
 * Bounded: `stats`' reads, plus MAX_KEY_PAGE keys at most.
 */
export const overview = query({
  args: { keysPaginationOpts: paginationOptsValidator },
  returns: vOverview,
  handler: async (ctx, { keysPaginationOpts }) => {
    const { numItems } = keysPaginationOpts;
    validatePageSize("keysPaginationOpts.numItems", numItems, MAX_KEY_PAGE);
    const now = Date.now();
    const { stats, config, ring, current } = await readHealth(ctx, now);
    const keyRows = () => ctx.db.query("keyState").withIndex("by_key");
    let keyPage;
    try {
      keyPage = await keyRows().paginate(keysPaginationOpts);
    } catch (error) {
      if (keysPaginationOpts.cursor === null) throw error;
      invalidArgument(
        "keysPaginationOpts.cursor",
        "must be a cursor a page of keys returned",
        keysPaginationOpts.cursor,
      );
    }
    const keys = await Promise.all(
      keyPage.page.map(async (state) => ({
        key: state.key,
        ...(await keyStatusOf(ctx.db, state.key, state, async () => config)),
      })),
    );
    return {
      stats,
      series: secondsOfLastMinute(now, ring, current),
      keys: { ...keyPage, page: keys },
    };
  },
});
