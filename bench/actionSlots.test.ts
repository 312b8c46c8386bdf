/**
 * The simulated limit of actions at once (bench/actionSlots.ts), on small runs through the harness
 * on the virtual clock: ordinary actions under a limit below maxParallelism wait their turn and the
 * limit sets the pace; started together, they run under one action runner, each job's action in a
 * slot of its own, timed apart; executor
 * actions hold slots of their own and call no action; without a limit nothing waits.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { runScenario, type Scenario } from "./harness.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const quiet = () => {
  vi.spyOn(console, "info").mockImplementation(() => {});
  vi.spyOn(console, "log").mockImplementation(() => {});
};

/** 12 actions of 1 s, 6 slots in the pool. */
const actions: Scenario = {
  id: "slots",
  title: "12 actions of 1 s, maxParallelism 6",
  kind: "action",
  jobs: 12,
  maxParallelism: 6,
  ms: 1000,
  failTimes: 0,
  expectKind: "success",
  deadlineMs: 60_000,
  sides: ["ours"],
};

describe("action slots", () => {
  it("hold actions beyond the limit until one ends: 3 at once set the pace, not the pool's 6", async () => {
    quiet();
    const r = await runScenario("ours", { ...actions, actionLimit: 3 });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    const a = r.actions!;
    expect(a.limit).toBe(3);
    expect(a.maxRunning).toBe(3);
    expect(a.maxWaiting).toBeGreaterThan(0);
    expect(a.waitedMs).toBeGreaterThan(0);
    // Jobs started together run under an action runner, which holds a slot while each job's
    // action waits for one of its own; a job started alone gets a worker, in whose slot its action
    // runs. Never more than 3 at once either way.
    expect(r.maxConcurrency).toBeLessThanOrEqual(3);
    // Twelve seconds of work, at most three at a time: at least 4 s.
    expect(r.makespanMs).toBeGreaterThanOrEqual(4000);
    const runners = a.byFunction["ours:runners/actionRunner:run"]?.count ?? 0;
    const workers = a.byFunction["ours:runners/worker:runAction"]?.count ?? 0;
    expect(runners).toBeGreaterThanOrEqual(1);
    expect(a.topLevel.count).toBe(runners + workers);
    expect(a.nested).toEqual({ count: 12, ms: 12_000 });
    expect(a.byFunction["app:jobs:work"]).toEqual({ count: 12, ms: 12_000 });
  }, 60_000);

  it("without a limit, only measure", async () => {
    quiet();
    const r = await runScenario("ours", actions);
    const a = r.actions!;
    expect(a.limit).toBeUndefined();
    // A runner and its six actions.
    expect(a.maxRunning).toBe(7);
    expect(a.maxWaiting).toBe(0);
    expect(r.maxConcurrency).toBe(6);
    expect(a.nested).toEqual({ count: 12, ms: 12_000 });
  }, 60_000);

  it("give executor actions slots of their own; their tasks call no action", async () => {
    quiet();
    const r = await runScenario("ours", {
      ...actions,
      id: "tasks",
      title: "12 tasks of 1 s, maxParallelism 6",
      actionLimit: 3,
      enqueue: { perMutation: 12, batch: true },
      tasks: { concurrency: 100 },
    });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    const a = r.actions!;
    expect(a.nested).toEqual({ count: 0, ms: 0 });
    expect(a.topLevel.count).toBe(a.byFunction["app:tasks:run"].count);
    expect(a.maxRunning).toBeLessThanOrEqual(3);
    expect(r.maxConcurrency).toBe(6);
  }, 60_000);
});
