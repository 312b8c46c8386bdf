/**
 * Running a finished job again (`retry`): rebuilds its enqueue request from what a job that failed
 * or was canceled keeps while its status is retained (function, args, context, onComplete, retry
 * behavior, key, priority, dedupe key, status TTL, manual completion, and its group while the
 * group is not done). Reads only; the caller enqueues the request.
 */
import type { Doc } from "../_generated/dataModel.js";
import type { DatabaseReader } from "../_generated/server.js";
import type { EnqueueItem } from "./enqueue.js";
import { invalidArgument } from "../model/errors.js";
import { keptForRetry } from "../model/validators.js";

/** The enqueue request that runs `work` again, due now; throws naming `id` if it cannot be. */
export async function rerunRequest(
  db: DatabaseReader,
  work: Doc<"work"> | null,
  id: string,
): Promise<EnqueueItem> {
  if (work === null) {
    invalidArgument("id", "no retained job has this id (a finished job is kept for statusTtl)", id);
  }
  if (work.state.kind !== "finished") {
    invalidArgument("id", `only a finished job can be retried; this one is ${work.state.kind}`, id);
  }
  if (!keptForRetry(work.state.result)) {
    invalidArgument(
      "id",
      "only a job that failed or was canceled can be retried; it succeeded",
      id,
    );
  }
  const payload = work.payloadId ? await db.get("payloads", work.payloadId) : null;
  const fnArgs = payload ? payload.fnArgs : work.fnArgs;
  if (fnArgs === undefined) {
    invalidArgument(
      "id",
      "its arguments were not kept (its runner died before it could hand them back)",
      id,
    );
  }
  // The rerun joins the job's group while the group is not done, even a closed one (section 12).
  const group = work.group === undefined ? null : await db.get("groups", work.group);
  const inGroup = group !== null && group.finishedAt === undefined ? { group: group._id } : {};
  const onComplete = work.onComplete && {
    fnHandle: work.onComplete.fnHandle,
    context: payload ? payload.context : work.onComplete.context,
    excludeKinds: work.onComplete.excludeKinds,
  };
  return {
    fnHandle: work.fnHandle,
    fnName: work.fnName,
    fnArgs,
    fnType: work.fnType,
    retryBehavior: work.retryBehavior,
    onComplete,
    // Infinity (kept forever) is stored as undefined.
    statusTtlMs: work.statusTtlMs ?? Number.POSITIVE_INFINITY,
    key: work.key,
    priority: work.priority,
    dedupeKey: work.dedupeKey,
    task: work.task,
    manualCompletion: work.manualCompletion,
    ...inGroup,
  };
}
