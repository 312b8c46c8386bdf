/**
 * The public types and validators of what a pool's methods take and return, besides options and
 * onComplete: job ids, `status`, `keyStatus`, `info`, `list` pages and `stats`; and the component
 * and ctx types every method takes. Declarations only: it never calls the component, checks no
 * value and holds no state. The component owns the underlying validators (src/component/model);
 * this file only adds the client's view of them (a typed `WorkId` in place of a plain string).
 */
import type {
  GenericActionCtx,
  GenericDataModel,
  GenericMutationCtx,
  GenericQueryCtx,
  PaginationOptions,
} from "convex/server";
import { v, type Infer, type VString } from "convex/values";
import type { ComponentApi } from "../component/_generated/component.js";
import {
  vWorkInfo as vComponentWorkInfo,
  vListedWorkInfo as vComponentListedWorkInfo,
  vListFilter,
  vPoolStats,
  type CompletionOutcome,
  type GroupStatus,
  type ListFilter,
  type PoolStats,
  type Status,
  vStatus,
} from "../component/model/validators.js";
import { vKeyStatus } from "../component/keys.js";

/** The id of a job, as enqueue returns it. */
export type WorkId = string & { __isWorkId: true };
/** Validator of a WorkId, for your own function arguments and tables. */
export const vWorkId = v.string() as VString<WorkId>;

/** The component's API, as `components.<name>` in your app's `_generated/api`. */
export type WorkpoolComponent = ComponentApi;

/** The ctx of a query (what `status`, `info` and the other reads need). */
export type QueryCtx = Pick<GenericQueryCtx<GenericDataModel>, "runQuery">;
/** The ctx of a mutation (what enqueue and the control methods need, besides an action's). */
export type MutationCtx = Pick<GenericMutationCtx<GenericDataModel>, "runQuery" | "runMutation">;
/** The ctx of an action. */
export type ActionCtx = Pick<
  GenericActionCtx<GenericDataModel>,
  "runQuery" | "runMutation" | "runAction"
>;
/** Any ctx that can read the component. */
export type AnyCtx = QueryCtx | MutationCtx | ActionCtx;

/**
 * What `status` returns: `{ state: "pending" | "running", previousAttempts }` or
 * `{ state: "finished" }` (exactly the peer's shapes; `info` has the result and timings).
 */
export type { Status };
/** Validator of what `status` returns, for a function of yours that returns a job's status
 * (`returns: vStatus`, or inside an object of yours). */
export { vStatus };

/** Validator of what `keyStatus` returns. */
export { vKeyStatus };
/** A key's progress: `{ pending, running, succeeded, failed, canceled, paused, parallelism }`. */
export type KeyStatus = Infer<typeof vKeyStatus>;

/**
 * Validator of what `info` returns (without the `null`): a job's name, function type, state,
 * attempts, timings and, once finished, its result.
 */
export const vWorkInfo = v.object({
  ...vComponentWorkInfo.fields,
  id: vWorkId,
  retriedAs: v.optional(vWorkId),
});
/**
 * What `info` returns for a retained job: `{ id, name, fnType, key?, priority, state,
 * previousAttempts, enqueuedAt, startedAt?, finishedAt?, result?, awaiting? }`, `result` being the
 * `RunResult` onComplete got, and `awaiting: { since, deadline }` present while a `manualCompletion`
 * attempt (state "running") waits for its completion after its function returned.
 */
export type WorkInfo = Infer<typeof vWorkInfo>;

/** Validator of one job of a `list` page: `info`'s shape, without a success's return value. */
export const vListedWorkInfo = v.object({
  ...vComponentListedWorkInfo.fields,
  id: vWorkId,
  retriedAs: v.optional(vWorkId),
});
/** One job of a `list` page. */
export type ListedWorkInfo = Infer<typeof vListedWorkInfo>;

/** Validator of `list`'s filters (spread it into your query's args, beside `paginationOpts`). */
export { vListFilter };
/** What `list` takes: filters (all optional) and Convex's `paginationOpts`. */
export type ListArgs = ListFilter & { paginationOpts: PaginationOptions };

/** What `pool.complete` takes: `{ kind: "success", returnValue? }` or `{ kind: "failed", error,
 * nonRetryable? }`. */
export type { CompletionOutcome };

/** A group's id, as `createGroup` returns it. */
export type GroupId = string & { __isGroupId: true };
/** What a group's onComplete receives. */
export type GroupOnCompleteArgs<Context = unknown> = {
  groupId: string;
  context: Context;
  counts: { succeeded: number; failed: number; canceled: number };
};
/** What `groupStatus` returns: `{ id, name?, closed, done, total, pending, running, succeeded,
 * failed, canceled, createdAt, finishedAt? }`. */
export type { GroupStatus };

/** Validator of what `stats` returns. */
export { vPoolStats as vStats };
/**
 * What `stats` returns: `{ pending, running, maxParallelism, paused, oldestPendingMs, lastMinute:
 * { started, succeeded, failed, canceled, retried }, totals: { enqueued, started, succeeded,
 * failed, canceled, retried } }`.
 */
export type Stats = PoolStats;
