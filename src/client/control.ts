/**
 * `WorkpoolControl`, the base of the `Workpool` class (src/client/workpool.ts): a pool's component
 * and options, checked once in the constructor, and the methods that act on jobs already enqueued
 * or on the pool as a whole (cancel, complete, retry, cancelAll, pause, resume, setKeyParallelism,
 * setKeyShare, setKeyRateLimit, setMaxParallelism), that act on schedules already created (pauseSchedule, resumeSchedule,
 * unschedule, runScheduleNow), and that read them (status, statusBatch, keyStatus, info, list,
 * stats, getSchedule, listSchedules). Each method is one call of the
 * component's public functions: it never builds an enqueue request (workpool.ts and enqueue.ts do;
 * `retry` asks the component to copy a finished job), never touches the component's tables and
 * holds no state besides its options. Apps use it only through `Workpool`; it is not exported from
 * the package's entry point.
 */
import {
  createFunctionHandle,
  type FunctionReference,
  type FunctionVisibility,
  type PaginationOptions,
  type PaginationResult,
} from "convex/server";
import type { ScheduleInfo } from "./schedules.js";
import {
  poolConfigOf,
  validateWorkpoolOptions,
  type PoolConfig,
  type RateLimit,
  type WorkpoolOptions,
} from "./options.js";
import {
  validateCompletionOutcome,
  MAX_NAME_LENGTH,
  validateKey,
  validateKeyRateLimit,
  validateKeyShare,
  validateListFilter,
  validateMaxParallelism,
  validateString,
} from "../component/model/validate.js";
import type { CompletionOutcome } from "../component/model/validators.js";
import type {
  ActionCtx,
  AnyCtx,
  GroupId,
  GroupOnCompleteArgs,
  GroupStatus,
  KeyStatus,
  ListArgs,
  ListedWorkInfo,
  MutationCtx,
  Stats,
  Status,
  WorkId,
  WorkInfo,
  WorkpoolComponent,
} from "./types.js";

/** A pool's control and inspection methods: everything `Workpool` does but enqueue. */
export class WorkpoolControl {
  /**
   * @param component `components.<name>` from your app's `_generated/api`.
   * @param options the pool's options; bad values throw here, naming the option.
   */
  constructor(
    public component: WorkpoolComponent,
    public options: WorkpoolOptions = {},
  ) {
    validateWorkpoolOptions(options);
  }

  /**
   * Cancels a job: pending work never starts and is not retried; a running action, mutation or
   * query is not interrupted (it is not retried, and onComplete gets its outcome, or "canceled"
   * where it would have retried); a running task's `signal` aborts and it ends "canceled".
   * An unknown id is ignored; a malformed one throws.
   */
  async cancel(ctx: MutationCtx | ActionCtx, id: WorkId): Promise<void> {
    await ctx.runMutation(this.component.lib.cancel, { id, config: this.config() });
  }

  /**
   * Completes the current attempt of a job enqueued with `manualCompletion`, as if its function had
   * returned (`{ kind: "success", returnValue? }`, `returnValue` default null) or thrown
   * (`{ kind: "failed", error, nonRetryable? }`: retried under the job's retry policy unless
   * `nonRetryable`). Call it from the webhook (mutation or action) that hears the outside work is
   * done: in a mutation, the completion commits with the webhook's own writes, or not at all.
   *
   * A completion that comes while the function still runs is kept: the attempt ends with it once
   * the function returns (a function that throws decides instead).
   * @param id the job's id, as enqueue returned it.
   * @param outcome the attempt's outcome.
   * @param options `attempt`: the attempt's `previousAttempts` (as `info` reads it during the
   *   attempt); the completion then decides that attempt only.
   * @returns true when the completion was taken for the attempt; false when it decides nothing
   *   (the job is finished, canceled, timed out, unknown to the pool or not enqueued with
   *   `manualCompletion`, or the attempt has its completion already). It never throws for those,
   *   so a webhook delivered twice is harmless. A malformed id or outcome, or a `returnValue` the
   *   pool cannot store, throws InvalidArgument naming `id`, `outcome` or `returnValue`.
   */
  async complete(
    ctx: MutationCtx | ActionCtx,
    id: WorkId,
    outcome: CompletionOutcome,
    options?: { attempt?: number },
  ): Promise<boolean> {
    validateCompletionOutcome(outcome);
    return await ctx.runMutation(this.component.lib.complete, {
      id,
      outcome,
      ...(options?.attempt !== undefined ? { attempt: options.attempt } : {}),
    });
  }

  /**
   * Creates a group (fan-out, fan-in): jobs join it with the enqueue option `group`, from any
   * number of transactions, until `closeGroup`. Its progress is `groupStatus`. Once it is closed
   * and every job of it finished, `onComplete` runs exactly once, after every job's own onComplete
   * has committed, as `{ groupId, context, counts: { succeeded, failed, canceled } }` (a throw
   * rolls back its own writes and is logged).
   * @param options `name`: 1 to 1,024 characters, for people; `onComplete`: a mutation;
   *   `context`: passed to it as is (at most what a job's inline context may be).
   * @returns the group's id.
   */
  async createGroup<Context = unknown>(
    ctx: MutationCtx | ActionCtx,
    options?: {
      name?: string;
      onComplete?: FunctionReference<
        "mutation",
        FunctionVisibility,
        GroupOnCompleteArgs<Context>
      > | null;
      context?: Context;
    },
  ): Promise<GroupId> {
    if (options?.name !== undefined) validateString(options.name, MAX_NAME_LENGTH, "name");
    const onComplete = options?.onComplete
      ? await createFunctionHandle(options.onComplete)
      : undefined;
    return (await ctx.runMutation(this.component.groups.createGroup, {
      ...(options?.name !== undefined ? { name: options.name } : {}),
      ...(onComplete !== undefined ? { onComplete, context: options?.context } : {}),
    })) as GroupId;
  }

  /**
   * Ends joining a group: a later enqueue into it is rejected (InvalidArgument naming `group`).
   * Once closed and every job of it finished, the group is `done`. Closing a closed group does
   * nothing; an unknown or malformed id throws InvalidArgument naming `id`.
   */
  async closeGroup(ctx: MutationCtx | ActionCtx, id: GroupId): Promise<void> {
    await ctx.runMutation(this.component.groups.closeGroup, { id });
  }

  /**
   * Closes a group and cancels its unfinished jobs as `cancel` does, `limit` (1 to 1,000, default
   * 500) per transaction, the rest in transactions of their own. A group that is done already is
   * left as it is; an unknown or malformed id throws InvalidArgument naming `id`.
   */
  async cancelGroup(
    ctx: MutationCtx | ActionCtx,
    id: GroupId,
    options?: { limit?: number },
  ): Promise<void> {
    await ctx.runMutation(this.component.groups.cancelGroup, {
      id,
      ...(options?.limit !== undefined ? { limit: options.limit } : {}),
    });
  }

  /**
   * A group's progress: `{ id, name?, closed, done, total, pending, running, succeeded, failed,
   * canceled, createdAt, finishedAt? }` (`pending`: unfinished jobs not running; `done`: closed and
   * every job finished, at `finishedAt`). Exact, reactive, and a constant number of reads however
   * large the group; `null` for a group the pool does not know.
   */
  async groupStatus(ctx: AnyCtx, id: GroupId): Promise<GroupStatus | null> {
    return await ctx.runQuery(this.component.groups.groupStatus, { id });
  }

  /**
   * Runs a job that failed or was canceled again, while its status is retained: a new job, due now,
   * with the same function, args and options (name, key, priority, retry, onComplete, context).
   * Returns the new job's id; the old job keeps its one onComplete. An unknown, unfinished or
   * succeeded job is rejected (an InvalidArgument error naming `id`).
   */
  async retry(ctx: MutationCtx | ActionCtx, id: WorkId): Promise<WorkId> {
    return (await ctx.runMutation(this.component.lib.retry, {
      id,
      config: this.config(),
    })) as WorkId;
  }

  /** Cancels every unfinished job (with `key`: every unfinished job of that key, and no others),
   * `limit` per transaction (default 500). */
  async cancelAll(
    ctx: MutationCtx | ActionCtx,
    options?: { limit?: number; key?: string },
  ): Promise<void> {
    await ctx.runMutation(this.component.lib.cancelAll, {
      limit: options?.limit,
      key: options?.key,
      config: this.config(),
    });
  }

  /** Sets one key's parallelism (whole number ≥ 1); `null` returns it to the pool's
   * `keyParallelism`. Lowering it lets running jobs finish and starts none of the key's jobs until
   * it has room. */
  async setKeyParallelism(
    ctx: MutationCtx | ActionCtx,
    key: string,
    parallelism: number | null,
  ): Promise<void> {
    await ctx.runMutation(this.component.keys.setKeyParallelism, { key, parallelism });
  }

  /**
   * Sets one key's share of its priority level's starts (API-EXTENSIONS section 13; used while
   * the pool's `fairness` is "share"): `weight` (whole number 1 to 100, default 1) gives it starts
   * in proportion to the weight, against the other keys with due jobs and the jobs without a key
   * (weight 1); `reserve` (whole number 0 to 1,000, default 0, in effect at most its
   * parallelism and the pool's) serves it first while fewer of its attempts run. A field left out
   * keeps its value; `null` restores both defaults.
   *
   * ```ts
   * await pool.setKeyShare(ctx, "tenant:acme", { weight: 3, reserve: 2 });
   * ```
   */
  async setKeyShare(
    ctx: MutationCtx | ActionCtx,
    key: string,
    share: { weight?: number; reserve?: number } | null,
  ): Promise<void> {
    validateKey(key);
    validateKeyShare(share);
    await ctx.runMutation(this.component.keys.setKeyShare, { key, share });
  }

  /**
   * Sets one key's rate limit (section 13): at most `starts` of its attempts start in any interval
   * of `periodMs` ms; `false` exempts the key from the pool's `keyRateLimit`; `null` follows that
   * default again. A key at its limit delays no other key.
   */
  async setKeyRateLimit(
    ctx: MutationCtx | ActionCtx,
    key: string,
    rateLimit: RateLimit | false | null,
  ): Promise<void> {
    validateKey(key);
    validateKeyRateLimit(rateLimit);
    await ctx.runMutation(this.component.keys.setKeyRateLimit, { key, rateLimit });
  }

  /**
   * Sets the operator's maxParallelism, stored apart from the clients' option (as the pause is):
   * while set, it is the pool's maxParallelism whatever `maxParallelism` any client passes with an
   * enqueue, cancel, retry or `config.update`. `null` clears it, and the clients' value (the last
   * one a client passed, or the default 10) is in force at once. 0 starts nothing new without
   * pausing the pool (`stats().paused` stays false); running jobs finish.
   *
   * @param ctx a mutation's or an action's ctx.
   * @param maxParallelism a whole number ≥ 0, or null to clear the operator's value; anything else
   *   throws an InvalidArgument error naming `maxParallelism`, and nothing changes.
   * @returns once stored; `stats()` shows it as `operatorMaxParallelism`.
   * @example
   * // During an incident: start nothing new, whatever the clients' options say.
   * await pool.setMaxParallelism(ctx, 0);
   * // Later: back to the clients' maxParallelism.
   * await pool.setMaxParallelism(ctx, null);
   */
  async setMaxParallelism(
    ctx: MutationCtx | ActionCtx,
    maxParallelism: number | null,
  ): Promise<void> {
    if (maxParallelism !== null) validateMaxParallelism(maxParallelism);
    await ctx.runMutation(this.component.config.setMaxParallelism, { maxParallelism });
  }

  /** A key's progress: `{ pending, running, succeeded, failed, canceled, paused, parallelism,
   * weight, reserve, rateLimit }` (the settings in force; finished counts while the jobs' status is retained). Reactive; its cost does not grow with
   * the key's backlog. */
  async keyStatus(ctx: AnyCtx, key: string): Promise<KeyStatus> {
    return await ctx.runQuery(this.component.keys.keyStatus, { key });
  }

  /** Pauses the pool (or, with `key`, one key): no attempt starts, retries included, until
   * `resume`. Stored in the component: it lasts across deploys, whatever options clients pass. */
  async pause(ctx: MutationCtx | ActionCtx, options?: { key?: string }): Promise<void> {
    await ctx.runMutation(this.component.keys.pause, { key: options?.key });
  }

  /** Ends a pause of the pool (or, with `key`, of one key). */
  async resume(ctx: MutationCtx | ActionCtx, options?: { key?: string }): Promise<void> {
    await ctx.runMutation(this.component.keys.resume, { key: options?.key });
  }

  /**
   * A job's status: `{ state: "pending" | "running", previousAttempts }` or `{ state: "finished" }`
   * (also once its status is no longer retained). For its result and timings, see `info`.
   */
  async status(ctx: AnyCtx, id: WorkId): Promise<Status> {
    return await ctx.runQuery(this.component.lib.status, { id });
  }

  /** The statuses of many jobs (at most 1,000 ids), in the order of `ids`. */
  async statusBatch(ctx: AnyCtx, ids: WorkId[]): Promise<Status[]> {
    return await ctx.runQuery(this.component.lib.statusBatch, { ids });
  }

  /**
   * Everything the pool knows about a job: name, function type, state, attempts, when it was
   * enqueued, started and finished, and (once finished) the `RunResult` onComplete got. `null` once
   * the job's status is no longer retained (after `statusTtl`); a malformed id throws.
   */
  async info(ctx: AnyCtx, id: WorkId): Promise<WorkInfo | null> {
    return (await ctx.runQuery(this.component.lib.info, { id })) as WorkInfo | null;
  }

  /**
   * A page of jobs, for an admin page (`usePaginatedQuery`): `state` filters by state, `outcome`
   * (`"success" | "failed" | "canceled"`) by outcome (finished jobs only), `key` by key, `group`
   * by group (not with `key`). Pending
   * jobs come by due time and running ones by start time (oldest first), finished ones newest
   * first; with neither state nor outcome, newest enqueued first. Each job is as `info` shows it,
   * without a success's return value. At most 1,000 jobs a page.
   */
  async list(ctx: AnyCtx, args: ListArgs): Promise<PaginationResult<ListedWorkInfo>> {
    validateListFilter(args);
    return (await ctx.runQuery(
      this.component.inspect.list,
      args,
    )) as PaginationResult<ListedWorkInfo>;
  }

  /**
   * The pool's health: `{ pending, running, maxParallelism, operatorMaxParallelism, paused,
   * oldestPendingMs, lastMinute: { started, succeeded, failed, canceled, retried }, totals:
   * { enqueued, ...the same } }`. `maxParallelism` is the value in force: the operator's
   * (`setMaxParallelism`, shown as `operatorMaxParallelism`, null when unset) while set, else the
   * clients'. Exact, and it costs the same few reads at any backlog. `lastMinute` counts the current second and the
   * 59 before it; `totals` only grow, since the pool began (or since the upgrade that added them).
   */
  async stats(ctx: AnyCtx): Promise<Stats> {
    return await ctx.runQuery(this.component.inspect.stats, {});
  }

  /**
   * Stops a schedule's times until `resumeSchedule` (they are not counted; its `nextRunAt` is null
   * meanwhile). Runs already enqueued go on.
   *
   * ```ts
   * await pool.pauseSchedule(ctx, "nightly-report");
   * ```
   * @returns false for an unknown name (it never throws for one), else true.
   */
  async pauseSchedule(ctx: MutationCtx | ActionCtx, name: string): Promise<boolean> {
    return await ctx.runMutation(this.component.schedules.pause, { name });
  }

  /**
   * Ends a schedule's pause: it goes on from its next future time (times passed while paused are
   * not run).
   *
   * ```ts
   * await pool.resumeSchedule(ctx, "nightly-report");
   * ```
   * @returns false for an unknown name, else true.
   */
  async resumeSchedule(ctx: MutationCtx | ActionCtx, name: string): Promise<boolean> {
    return await ctx.runMutation(this.component.schedules.resume, { name });
  }

  /**
   * Deletes a schedule; a run it enqueued already goes on.
   *
   * ```ts
   * await pool.unschedule(ctx, `digest:${userId}`);
   * ```
   * @returns false for an unknown name, else true.
   */
  async unschedule(ctx: MutationCtx | ActionCtx, name: string): Promise<boolean> {
    return await ctx.runMutation(this.component.schedules.unschedule, { name });
  }

  /**
   * Enqueues one run of a schedule now (its `scheduledFor` is the call time), under the schedule's
   * `overlap`, also while it is paused or past its `endAt`. Not counted in `counts`; it becomes the
   * schedule's `lastRun`. An unknown name is rejected (InvalidArgument naming `name`).
   *
   * ```ts
   * const workId = await pool.runScheduleNow(ctx, "nightly-report");
   * ```
   * @returns the run's id, or null when `overlap` enqueued nothing.
   */
  async runScheduleNow(ctx: MutationCtx | ActionCtx, name: string): Promise<WorkId | null> {
    return (await ctx.runMutation(this.component.schedules.runNow, {
      name,
      config: this.config(),
    })) as WorkId | null;
  }

  /**
   * A schedule: its timing, rules, `nextRunAt` (null when paused or no time is left), `lastRun`
   * (`{ workId, scheduledFor, state, outcome? }`) and `counts` (`{ enqueued, skipped, missed }`).
   *
   * ```ts
   * const schedule = await pool.getSchedule(ctx, "nightly-report");
   * ```
   * @returns the schedule, or null for an unknown name.
   */
  async getSchedule(ctx: AnyCtx, name: string): Promise<ScheduleInfo | null> {
    return await ctx.runQuery(this.component.schedules.get, { name });
  }

  /**
   * A page of the pool's schedules, by name (for `usePaginatedQuery`; at most 1,000 a page).
   *
   * ```ts
   * const { page, isDone, continueCursor } = await pool.listSchedules(ctx, {
   *   paginationOpts: { numItems: 50, cursor: null },
   * });
   * ```
   * @returns Convex's `PaginationResult` of `ScheduleInfo`.
   */
  async listSchedules(
    ctx: AnyCtx,
    args: { paginationOpts: PaginationOptions },
  ): Promise<PaginationResult<ScheduleInfo>> {
    return await ctx.runQuery(this.component.schedules.list, args);
  }

  /** The options this pool writes to the component's config with each enqueue and cancel. */
  protected config(): PoolConfig {
    return poolConfigOf(this.options);
  }
}
