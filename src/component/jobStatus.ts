/**
 * Deriving the public status of a job from its `work` row — the one place that does it. Read-only.
 */
import type { Doc, Id } from "./_generated/dataModel.js";
import type { DatabaseReader } from "./_generated/server.js";
import { invalidArgument } from "./errors.js";
import { assertNever, type RunResult } from "./model.js";

/** What status returns: the public Status, plus the result while a finished job is retained. */
export type StatusWithResult =
  | { state: "pending"; previousAttempts: number }
  | { state: "running"; previousAttempts: number }
  | { state: "finished"; result?: RunResult };

/** Parses a WorkId given by a caller; a malformed one is an invalid argument. */
export function parseWorkId(db: DatabaseReader, id: string, argument = "id"): Id<"work"> {
  const parsed = db.normalizeId("work", id);
  if (parsed === null) invalidArgument(argument, "must be a WorkId returned by enqueue", id);
  return parsed;
}

export async function deriveStatus(
  db: DatabaseReader,
  work: Doc<"work"> | null,
): Promise<StatusWithResult> {
  // An unknown id is a job that finished and was swept (or never existed in this pool).
  if (work === null) return { state: "finished" };
  const state = work.state;
  switch (state.kind) {
    case "pending":
      return { state: "pending", previousAttempts: work.attempts };
    case "running":
      return { state: "running", previousAttempts: work.attempts };
    case "finished": {
      if (work.resultPayloadId !== undefined && state.result.kind === "success") {
        const payload = await db.get("payloads", work.resultPayloadId);
        return {
          state: "finished",
          result: { kind: "success", returnValue: payload?.returnValue },
        };
      }
      return { state: "finished", result: state.result };
    }
    default:
      return assertNever(state, "job state");
  }
}
