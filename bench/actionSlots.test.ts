/**
 * The simulated limit of actions at once (bench/actionSlots.ts), on small runs through the harness
 * on the virtual clock: never more scheduler-started actions at once than the limit; ordinary
 * actions started together run under one action runner, each job's action in its caller's slot,
 * timed apart; executor actions hold slots of their own and call no action; without a limit
 * nothing waits.
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
  it("hold no more than the limit at once; a runner's jobs run in its slot", async () => {
    quiet();
    const r = await runScenario("ours", { ...actions, actionLimit: 3 });
    expect(r.lost + r.duplicates + r.wrongKind).toBe(0);
    const a = r.actions!;
    expect(a.limit).toBe(3);
    expect(a.maxRunning).toBeGreaterThanOrEqual(1);
    expect(a.maxRunning).toBeLessThanOrEqual(3);
    // Six start together in one action runner (one slot), and six more when they end: the pool's
    // six at once, in the runner's one slot.
    expect(r.maxConcurrency).toBe(6);
    const runners = a.byFunction["ours:runners/actionRunner:run"]?.count ?? 0;
    const workers = a.byFunction["ours:runners/worker:runAction"]?.count ?? 0;
    expect(runners).toBeGreaterThanOrEqual(1);
    expect(a.topLevel.count).toBe(runners + workers);
    // Each job's own action runs in its caller's slot and is timed apart.
    expect(a.nested).toEqual({ count: 12, ms: 12_000 });
    expect(a.byFunction["app:jobs:work"]).toEqual({ count: 12, ms: 12_000 });
    // Counted as a deployment counts them, every execution at once: the six jobs' actions and at
    // least their runner, past the three slots the blocking rule kept.
    expect(a.maxExecutions).toBeGreaterThanOrEqual(6 + 1);
    expect(a.maxExecutions).toBeGreaterThan(a.maxRunning);
  }, 60_000);

  it("without a limit, only measure", async () => {
    quiet();
    const r = await runScenario("ours", actions);
    const a = r.actions!;
    expect(a.limit).toBeUndefined();
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
    // Executors call no action: both rules count the same.
    expect(a.maxExecutions).toBe(a.maxRunning);
    expect(r.maxConcurrency).toBe(6);
  }, 60_000);
});
