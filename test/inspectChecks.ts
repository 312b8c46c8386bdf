/**
 * The model test's checks of what operators read (section 7): after every step, `stats`, `list`
 * and `info` must agree with the jobs' rows (read in full, not through the indexes and floors the
 * queries use) and with the loop's own log of what it did (for `lastMinute`).
 */
import { expect } from "vitest";
import { anyApi } from "convex/server";
import { listAll, poolStatsAt } from "./helpers.js";

/** A work row as these checks read it. */
export type InspectedRow = {
  _id: string;
  _creationTime: number;
  key?: string;
  priority?: "high" | "low";
  attempts: number;
  snoozes?: number;
  listAt: number;
  state:
    | { kind: "pending" }
    | { kind: "running"; startedAt: number }
    | { kind: "finished"; finishedAt: number; result: { kind: string; error?: string } };
};

/** One event the loop logged, at the (virtual) time of its pass. */
export type LoggedEvent = {
  at: number;
  /** "startUndone": the loop undid the latest "started" of the job (its executor gave the task
   * back unstarted); the reader drops that "started" instead of recording this. */
  kind: "started" | "succeeded" | "failed" | "canceled" | "retried" | "startUndone";
  /** The job an attempt was started for (on "started" and "startUndone" only). */
  workId?: string;
};

/** Reads the loop's events from its log lines (DEBUG "started" and "startUndone", INFO "retry",
 * and "finished": INFO, or WARN for a failure). */
export function eventOfLogLine(line: string, at: number): LoggedEvent | undefined {
  if (!line.startsWith("{")) return undefined;
  const entry = JSON.parse(line);
  if (entry.component !== "workpool") return undefined;
  if (entry.event === "started") return { at, kind: "started", workId: entry.workId };
  if (entry.event === "startUndone") return { at, kind: "startUndone", workId: entry.workId };
  if (entry.event === "retry") return { at, kind: "retried" };
  if (entry.event === "finished") {
    const kind = { success: "succeeded", failed: "failed", canceled: "canceled" }[
      entry.result as string
    ] as LoggedEvent["kind"];
    return { at, kind };
  }
  return undefined;
}

/** `lastMinute` as the log says it: events of the current second and the 59 before it (and with
 * `now` 0, every event: the totals). */
function expectedLastMinute(events: LoggedEvent[], now: number) {
  const from = Math.floor(now / 1000) - 59;
  const sum = { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 };
  for (const event of events) {
    if (event.kind !== "startUndone" && Math.floor(event.at / 1000) >= from) sum[event.kind]++;
  }
  return sum;
}

/** Rows in `list`'s order for a state: pending and running oldest first, finished newest first. */
function inListOrder(rows: InspectedRow[], descending: boolean): string[] {
  const sorted = [...rows].sort((a, b) => a.listAt - b.listAt || a._creationTime - b._creationTime);
  return (descending ? sorted.reverse() : sorted).map((row) => row._id);
}

export async function checkInspection(
  t: any,
  rows: InspectedRow[],
  expected: {
    /** The value in force (the operator's while set, else the clients'). */
    maxParallelism: number;
    /** The operator's value (`setMaxParallelism`), null when unset. */
    operatorMaxParallelism: number | null;
    paused: boolean;
    events: LoggedEvent[];
    /** Never-started jobs' due times, by id, as the model knows them. */
    dueAt: Map<string, number>;
  },
): Promise<void> {
  // The time `stats` ran at, by its own transaction's clock (which may be a millisecond past the
  // test's: convex-test pins a transaction's time at or after the last commit).
  const { stats, at: now } = await poolStatsAt(t);
  const inState = (kind: string) => rows.filter((row) => row.state.kind === kind);
  const pending = inState("pending");
  // Each row's time is what its state says it is.
  for (const row of rows) {
    if (row.state.kind === "running") expect(row.listAt).toBe(row.state.startedAt);
    if (row.state.kind === "finished") expect(row.listAt).toBe(row.state.finishedAt);
    const due = expected.dueAt.get(row._id);
    const neverRan = row.attempts === 0 && !row.snoozes;
    if (row.state.kind === "pending" && neverRan && due !== undefined) {
      expect(row.listAt, `due time of ${row._id}`).toBe(due);
    }
  }
  const due = pending.filter((row) => row.listAt <= now).map((row) => row.listAt);
  const { totals, ...current } = stats;
  expect(current, "stats").toEqual({
    pending: pending.length,
    running: inState("running").length,
    maxParallelism: expected.maxParallelism,
    operatorMaxParallelism: expected.operatorMaxParallelism,
    paused: expected.paused,
    oldestPendingMs: due.length === 0 ? 0 : now - Math.min(...due),
    lastMinute: expectedLastMinute(expected.events, now),
  });
  // The totals are every event the loop logged, and every job enqueued is pending, running or
  // finished by them.
  const { enqueued, ...eventTotals } = totals;
  expect(eventTotals, "stats.totals").toEqual(expectedLastMinute(expected.events, 0));
  expect(
    enqueued - eventTotals.succeeded - eventTotals.failed - eventTotals.canceled,
    "enqueued",
  ).toBe(pending.length + inState("running").length);
  // Pages of three, so that every list crosses page boundaries.
  const ids = async (filter: Record<string, unknown>) =>
    (await listAll(t, filter, 3)).map((job) => job.id);
  expect(await ids({ state: "pending" }), "list pending").toEqual(inListOrder(pending, false));
  expect(await ids({ state: "running" }), "list running").toEqual(
    inListOrder(inState("running"), false),
  );
  const finished = inState("finished");
  expect(await ids({ state: "finished" }), "list finished").toEqual(inListOrder(finished, true));
  for (const outcome of ["success", "failed", "canceled"]) {
    const of = finished.filter(
      (row) => row.state.kind === "finished" && row.state.result.kind === outcome,
    );
    expect(await ids({ outcome }), `list ${outcome}`).toEqual(inListOrder(of, true));
  }
  for (const row of rows) {
    const info = await t.query(anyApi.pool.callComponentQuery, {
      fn: "lib.info",
      args: { id: row._id },
    });
    expect(info, `info of ${row._id}`).toMatchObject({
      id: row._id,
      state: row.state.kind,
      previousAttempts: row.attempts,
      priority: row.priority ?? "normal",
      enqueuedAt: Math.floor(row._creationTime),
      ...(row.key !== undefined ? { key: row.key } : {}),
      ...(row.state.kind === "running" ? { startedAt: row.state.startedAt } : {}),
      ...(row.state.kind === "finished"
        ? { finishedAt: row.state.finishedAt, result: { kind: row.state.result.kind } }
        : {}),
    });
  }
}
