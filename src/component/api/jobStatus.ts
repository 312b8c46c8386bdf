/**
 * Deriving what callers see of a job from its `work` row — the one place that does it: the public
 * `status` (exactly the peer's shape) and `info` (everything retained). Read-only.
 */
import type { Doc, Id } from "../_generated/dataModel.js";
import type { DatabaseReader } from "../_generated/server.js";
import { invalidArgument } from "../model/errors.js";
import {
  assertNever,
  type ListedWorkInfo,
  type Priority,
  type RunResult,
  type Status,
  type WorkInfo,
} from "../model/validators.js";

/** Parses a WorkId given by a caller; a malformed one is an invalid argument. */
export function parseWorkId(db: DatabaseReader, id: string, argument = "id"): Id<"work"> {
  const parsed = db.normalizeId("work", id);
  if (parsed === null) invalidArgument(argument, "must be a WorkId returned by enqueue", id);
  return parsed;
}

/** The public status. An unknown id is a job that finished and was swept (or never existed). */
export function deriveStatus(work: Doc<"work"> | null): Status {
  if (work === null) return { state: "finished" };
  const state = work.state;
  switch (state.kind) {
    case "pending":
      return { state: "pending", previousAttempts: work.attempts };
    case "running":
      return { state: "running", previousAttempts: work.attempts };
    case "finished":
      return { state: "finished" };
    default:
      return assertNever(state, "job state");
  }
}

/** The result of a finished job, with a large return value read back from its payload. */
async function finishedResult(db: DatabaseReader, work: Doc<"work">, result: RunResult) {
  if (work.resultPayloadId !== undefined && result.kind === "success") {
    const payload = await db.get("payloads", work.resultPayloadId);
    return { kind: "success" as const, returnValue: payload?.returnValue ?? null };
  }
  return result;
}

/** What `list` shows of a job: everything `info` has but a success's return value (so it reads
 * no payload). */
export function deriveListedInfo(work: Doc<"work">): ListedWorkInfo {
  const base = {
    id: work._id as string,
    name: work.fnName,
    fnType: work.fnType,
    priority: (work.priority ?? "normal") as Priority,
    ...(work.key !== undefined ? { key: work.key } : {}),
    ...(work.group !== undefined ? { group: work.group as string } : {}),
    previousAttempts: work.attempts,
    ...(work.retriedAs !== undefined ? { retriedAs: work.retriedAs as string } : {}),
    ...(work.schedule !== undefined ? { schedule: work.schedule } : {}),
    ...(work.scheduledFor !== undefined ? { scheduledFor: work.scheduledFor } : {}),
    // _creationTime carries a sub-millisecond tiebreak; a pass in the same ms reads a whole `now`.
    enqueuedAt: Math.floor(work._creationTime),
  };
  const state = work.state;
  switch (state.kind) {
    case "pending":
      return { ...base, state: "pending" };
    case "running": {
      const wait = state.wait;
      const awaiting =
        wait?.kind === "awaiting"
          ? { awaiting: { since: wait.since, deadline: wait.deadline } }
          : {};
      return { ...base, state: "running", startedAt: state.startedAt, ...awaiting };
    }
    case "finished":
      return {
        ...base,
        state: "finished",
        startedAt: state.startedAt,
        finishedAt: state.finishedAt,
        result: state.result.kind === "success" ? { kind: "success" } : state.result,
      };
    default:
      return assertNever(state, "job state");
  }
}

/** Everything retained about a job; null once it was swept (or never existed). */
export async function deriveInfo(
  db: DatabaseReader,
  work: Doc<"work"> | null,
): Promise<WorkInfo | null> {
  if (work === null) return null;
  const listed = deriveListedInfo(work);
  const state = work.state;
  if (state.kind !== "finished") return listed as WorkInfo;
  return { ...listed, result: await finishedResult(db, work, state.result) };
}
