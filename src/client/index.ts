/**
 * The package's entry point (`convex-workpool`, a drop-in for `@convex-dev/workpool`): the public
 * names of the client, each re-exported by name from the module that owns it. Nothing is declared
 * here, and nothing is exported beyond the public API (the peer's names and our documented
 * extensions): the client's helpers (option checks, the ctx types, `WorkpoolControl`) stay internal.
 *
 * - workpool.ts: the `Workpool` class (enqueue methods, `defineOnComplete`), on control.ts's
 *   `WorkpoolControl` (constructor, cancel, retry, pause, status, info, list, stats, ...).
 * - enqueue.ts: the standalone `enqueue` / `enqueueBatch`, and the building and sending of enqueue
 *   requests (batches.ts splits big batches).
 * - options.ts: the types of a pool's and an enqueue's options, and their checks.
 * - onComplete.ts: what an onComplete mutation receives, and its validators.
 * - types.ts: ids, and what status, keyStatus, info, list and stats return.
 * - metrics.ts: `workpoolMetrics`, stats in Prometheus' text format.
 * - admin.ts: `pool.adminApi`'s types (the functions an operator's page calls).
 * - the component's model: the errors user code throws, the retry and result validators.
 */
export {
  NonRetryableError,
  SnoozeError,
  isNonRetryableError,
  isInvalidArgumentError,
  isUnauthorizedError,
} from "../component/model/errors.js";
export {
  DEFAULT_RETRY_BEHAVIOR,
  vLogLevel,
  vResult,
  vResult as vResultValidator,
  vResult as resultValidator,
  vRetryBehavior,
  vRateLimit,
  type LogLevel,
  type Priority,
  type RetryBehavior,
  type RunResult,
} from "../component/model/validators.js";

export { Workpool } from "./workpool.js";
export { enqueue, enqueueBatch } from "./enqueue.js";
export type {
  EnqueueOptions,
  RateLimit,
  RetryOption,
  StandaloneEnqueueOptions,
  WorkpoolOptions,
  WorkpoolRetryOptions,
} from "./options.js";
export {
  vOnComplete,
  vOnCompleteArgs,
  vOnCompleteValidator,
  vRunResult,
  type OnCompleteArgs,
} from "./onComplete.js";
export {
  vKeyStatus,
  vListedWorkInfo,
  vListFilter,
  vStats,
  vStatus,
  vWorkId,
  vWorkId as vWorkIdValidator,
  vWorkId as workIdValidator,
  vWorkInfo,
  type CompletionOutcome,
  type GroupId,
  type GroupOnCompleteArgs,
  type GroupStatus,
  type KeyStatus,
  type ListArgs,
  type ListedWorkInfo,
  type Stats,
  type Status,
  type WorkId,
  type WorkInfo,
  type WorkpoolComponent,
} from "./types.js";
export { METRICS_CONTENT_TYPE, workpoolMetrics } from "./metrics.js";
export {
  vScheduleInfo,
  type ScheduleId,
  type ScheduleInfo,
  type ScheduleOptions,
  type ScheduleTiming,
} from "./schedules.js";
export {
  vAdminOverview,
  type AdminApi,
  type AdminApiOptions,
  type AdminArgs,
  type AdminOperation,
  type AdminOverview,
  type AdminRequest,
  type Authorize,
  type KeyRow,
  type SecondEvents,
} from "./admin.js";
export type {
  ExecutorAction,
  ExecutorArgs,
  ExecutorDefinition,
  TaskArgs,
  TaskDefinition,
  TaskInfo,
  TaskReturns,
} from "./executor.js";
