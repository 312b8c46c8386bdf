/**
 * The component's layout moved its modules into role folders (src/component/README.md). Calls a
 * deployment of the previous layout stored — scheduled loop passes, workers, reports, deliveries,
 * sweeps and watchdog checks — name the old paths (`loop:main`, `worker:runAction`, ...), so an
 * upgrade must keep those paths callable until they have all run. Here every schedule the pool makes
 * is sent to its old path, and jobs still run end to end. Remove with the forwarding modules
 * (src/component/loop.ts and its siblings: after 2027-03-01).
 */
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import {
  completions,
  componentRows,
  enqueue,
  failCompletionInserts,
  PER_JOB_TABLES,
  renameSchedules,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

/** New path → the path the same function had before the move. */
const OLD_PATHS: Record<string, string> = {
  "mainLoop/main:main": "loop:main",
  "runners/worker:runAction": "worker:runAction",
  "runners/worker:runMutationOrQuery": "worker:runMutationOrQuery",
  "mainLoop/complete:complete": "complete:complete",
  "runners/deliver:deliver": "deliver:deliver",
  "mainLoop/sweep:sweep": "sweep:sweep",
  "mainLoop/watchdog:check": "watchdog:check",
  "mainLoop/watchdog:checkWakes": "watchdog:checkWakes",
};

/** Renames a scheduled function's name (with or without a component prefix) to its old path. */
const toOldPath = (name: string) => {
  for (const [now, before] of Object.entries(OLD_PATHS)) {
    if (name.endsWith(now)) return name.slice(0, name.length - now.length) + before;
  }
  return name;
};

describe("upgrade from the previous layout", () => {
  it("runs actions, mutations and queries scheduled at the old paths to exactly one onComplete each", async () => {
    const t = setup();
    const renamed = renameSchedules(toOldPath);
    const ids = [
      ...(await enqueue(t, "action", [{ key: "a", ms: 50, value: 1 }])),
      ...(await enqueue(t, "mutation", [{ key: "m", value: 2 }])),
      ...(await enqueue(t, "query", [{ key: "q", value: 3 }])),
    ];
    await runUntil(t, async () => (await completions(t)).length === 3);
    const done = await completions(t);
    expect(done.map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(done.every((c) => c.result.kind === "success")).toBe(true);
    // the loop, both kinds of worker and the delivery ran through their old paths
    for (const path of [
      "mainLoop/main:main",
      "runners/worker:runAction",
      "runners/deliver:deliver",
    ]) {
      expect(renamed.some((name) => name.endsWith(path))).toBe(true);
    }
    expect(renamed.some((name) => name.endsWith("runners/worker:runMutationOrQuery"))).toBe(true);
  });

  it("retries through the old paths, and a report scheduled at the old path is recorded once", async () => {
    const t = setup();
    const renamed = renameSchedules(toOldPath);
    // the first attempt's direct report fails, so the worker schedules `complete:complete`
    let failedOnce = false;
    failCompletionInserts(() => (failedOnce ? false : (failedOnce = true)));
    await enqueue(t, "action", [{ key: "flaky", failTimes: 1, value: 7 }], {
      poolOptions: { retryActionsByDefault: true },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 60_000);
    const [done] = await completions(t);
    expect(done.result).toEqual({ kind: "success", returnValue: 7 });
    expect(probe.attempts.get("flaky")).toBe(2);
    expect(renamed.some((name) => name.endsWith("mainLoop/complete:complete"))).toBe(true);
  });

  it("sweeps through the old path, leaving no per-job rows", async () => {
    const t = setup();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const renamed = renameSchedules(toOldPath);
    await enqueue(t, "mutation", [{ key: "m", value: 1 }], { options: {} });
    await runUntil(t, async () => (await completions(t)).length === 1);
    // past the default statusTtl (a day) in coarse steps: the sweeper runs at its old path
    await runFor(t, 25 * 60 * 60 * 1000, 60_000);
    expect(renamed.some((name) => name.endsWith("mainLoop/sweep:sweep"))).toBe(true);
    const rows = await componentRows(t);
    for (const table of PER_JOB_TABLES) expect(rows[table]).toEqual([]);
  });
});
