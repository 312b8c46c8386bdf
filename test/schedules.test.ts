/**
 * Recurring schedules (API-EXTENSIONS §10), end to end on convex-test: times, overlap rules, the
 * catch-up window, pause/resume/unschedule/runScheduleNow, runs as ordinary jobs, exactly one run
 * per time across replaced schedules and stale or duplicate timers, bad input, and the cost of a
 * firing. Time is virtual (test/helpers.ts); the clock starts at 2026-01-01T00:00:00Z.
 *
 * A late deployment is simulated with `vi.setSystemTime`: fake timers keep their places relative to
 * the clock (a timer due in 60 s is still due in 60 s), so the fire runs with `Date.now()` as late as
 * the jump.
 */
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { onTopLevelTransaction, installInstrumentation } from "../bench/instrument.js";
import { internal } from "../src/component/_generated/api.js";
import { setupDeployment } from "./deployment.js";
import { inComponent, info, runFor, setup, type T } from "./helpers.js";

const MINUTE = 60_000;
/** The most documents (and index ranges) one fire may read, whatever the number of schedules. */
const FIRE_READS_BOUND = 9;
/** Steps of a second: schedules' times are minutes apart, and the loop's passes still run in
 * order within each step. */
const STEP_MS = 1000;

type Kind = "action" | "mutation" | "query";

async function schedule(
  t: T,
  name: string,
  options: Record<string, unknown>,
  { kind = "mutation", args, onComplete }: { kind?: Kind; args?: object; onComplete?: string } = {},
): Promise<string> {
  return await t.mutation(anyApi.schedules.schedule, {
    kind,
    name,
    args: args ?? { key: name },
    options,
    onComplete,
  });
}

async function act(
  t: T,
  method: "pauseSchedule" | "resumeSchedule" | "unschedule" | "runScheduleNow",
  name: string,
): Promise<any> {
  return await t.mutation(anyApi.schedules.act, { method, name });
}

async function getSchedule(t: T, name: string): Promise<any> {
  return await t.query(anyApi.schedules.get, { name });
}

/** The schedule's runs (its jobs), oldest first. */
async function runsOf(t: T, name: string): Promise<any[]> {
  return await inComponent(t, async (ctx) =>
    (
      await ctx.db
        .query("work")
        .withIndex("by_schedule", (q: any) => q.eq("schedule", name))
        .collect()
    ).sort((a: any, b: any) => a._creationTime - b._creationTime),
  );
}

async function scheduleRow(t: T, name: string): Promise<any> {
  return await inComponent(t, async (ctx) =>
    ctx.db
      .query("schedules")
      .withIndex("by_name", (q: any) => q.eq("name", name))
      .unique(),
  );
}

/** The component's pending timers (`schedules.fire`), or with `guards` their pending guards. */
async function pendingFires(t: T, { guards = false } = {}): Promise<any[]> {
  return await inComponent(t, async (ctx) =>
    (await ctx.db.system.query("_scheduled_functions").collect()).filter(
      (f: any) =>
        f.name.includes("schedules") &&
        f.state.kind === "pending" &&
        (f.args[0].guard === true) === guards,
    ),
  );
}

const start = () => Date.now();

afterEach(() => {
  vi.useRealTimers();
});

describe("times", () => {
  it("enqueues one ordinary job per cron time, at or after its time, that info and list show", async () => {
    const t = setup();
    const t0 = start();
    const id = await schedule(t, "tick", { cron: "* * * * *" });
    await runFor(t, 5 * MINUTE + 2000, STEP_MS);
    const runs = await runsOf(t, "tick");
    // Created at 0:00 exactly: that time is not before the call, so it runs too.
    expect(runs.map((run) => run.scheduledFor)).toEqual(
      [0, 1, 2, 3, 4, 5].map((m) => t0 + m * MINUTE),
    );
    for (const run of runs) {
      expect(run._creationTime).toBeGreaterThanOrEqual(run.scheduledFor);
      expect(run.state.kind).toBe("finished");
    }
    const first = await info(t, runs[1]._id);
    expect(first).toMatchObject({ schedule: "tick", scheduledFor: t0 + MINUTE, name: "tick" });
    expect(first.result.kind).toBe("success");
    const listed = await t.query(anyApi.pool.callComponentQuery, {
      fn: "inspect.list",
      args: { schedule: "tick", paginationOpts: { numItems: 10, cursor: null } },
    });
    expect(listed.page.map((job: any) => job.id).sort()).toEqual(runs.map((r) => r._id).sort());
    const finished = await t.query(anyApi.pool.callComponentQuery, {
      fn: "inspect.list",
      args: { schedule: "tick", outcome: "success", paginationOpts: { numItems: 2, cursor: null } },
    });
    expect(finished.page.map((job: any) => job.scheduledFor)).toEqual([
      t0 + 5 * MINUTE,
      t0 + 4 * MINUTE,
    ]);
    const s = await getSchedule(t, "tick");
    expect(s).toMatchObject({
      id,
      name: "tick",
      fnName: "jobs:mutation",
      cron: "* * * * *",
      timezone: "UTC",
      overlap: "skip",
      catchupWindowMs: 60_000,
      jitterMs: 0,
      paused: false,
      nextRunAt: t0 + 6 * MINUTE,
      counts: { enqueued: 6, skipped: 0, missed: 0 },
    });
    expect(s.lastRun).toMatchObject({
      workId: runs[5]._id,
      scheduledFor: t0 + 5 * MINUTE,
      state: "finished",
      outcome: "success",
    });
  });

  it("runs every everyMs from the call, and from startAt to endAt when given", async () => {
    const t = setup();
    const t0 = start();
    await schedule(t, "every", { everyMs: 2 * MINUTE });
    await schedule(t, "window", {
      everyMs: MINUTE,
      startAt: t0 + 3 * MINUTE,
      endAt: t0 + 5 * MINUTE,
    });
    await runFor(t, 7 * MINUTE, STEP_MS);
    expect((await runsOf(t, "every")).map((r) => r.scheduledFor - t0)).toEqual([
      2 * MINUTE,
      4 * MINUTE,
      6 * MINUTE,
    ]);
    expect((await runsOf(t, "window")).map((r) => r.scheduledFor - t0)).toEqual([
      3 * MINUTE,
      4 * MINUTE,
      5 * MINUTE,
    ]);
    const ended = await getSchedule(t, "window");
    expect(ended.nextRunAt).toBeNull();
    expect(ended.counts).toEqual({ enqueued: 3, skipped: 0, missed: 0 });
    expect(await pendingFires(t)).toHaveLength(1); // only "every" still has a timer
  });

  it("makes each run due a random 0 to jitterMs after its time", async () => {
    const t = setup();
    const jitterMs = 20_000;
    await schedule(t, "jittery", { everyMs: MINUTE, jitterMs });
    await runFor(t, 6 * MINUTE, STEP_MS);
    const runs = await runsOf(t, "jittery");
    expect(runs.length).toBeGreaterThanOrEqual(5);
    const delays = runs
      .filter((run) => run.state.kind === "finished")
      .map((run) => run.state.startedAt - run.scheduledFor);
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(jitterMs + 1000);
    }
    // Not all at once: five draws all under a second of a 20 s jitter would be a broken draw.
    expect(Math.max(...delays)).toBeGreaterThan(1000);
  });

  it("still enqueues runs at their times while the pool is paused, and overlap applies", async () => {
    const t = setup();
    await t.mutation(anyApi.pool.callComponent, { fn: "keys.pause", args: {} });
    await schedule(t, "waiting", { everyMs: MINUTE });
    await runFor(t, 2 * MINUTE + 2000, STEP_MS);
    const runs = await runsOf(t, "waiting");
    expect(runs).toHaveLength(1);
    expect(runs[0].state.kind).toBe("pending");
    expect((await getSchedule(t, "waiting")).counts).toEqual({
      enqueued: 1,
      skipped: 1,
      missed: 0,
    });
  });
});

describe("overlap", () => {
  /** An action that runs 150 s, scheduled every minute: each run overlaps the next two times. */
  async function slowSchedule(t: T, overlap: string) {
    return await schedule(
      t,
      "slow",
      { everyMs: MINUTE, overlap },
      { kind: "action", args: { key: "slow", ms: 150_000 } },
    );
  }

  it("skip: enqueues nothing while the last run is unfinished", async () => {
    const t = setup();
    const t0 = start();
    await slowSchedule(t, "skip");
    await runFor(t, 5 * MINUTE + 2000, STEP_MS);
    const runs = await runsOf(t, "slow");
    // 1 min runs to 3.5; 2 and 3 skipped; 4 runs; 5 skipped.
    expect(runs.map((r) => r.scheduledFor - t0)).toEqual([MINUTE, 4 * MINUTE]);
    expect((await getSchedule(t, "slow")).counts).toEqual({ enqueued: 2, skipped: 3, missed: 0 });
  });

  it("bufferOne: holds one run until the last ends, and skips times while one waits", async () => {
    const t = setup();
    const t0 = start();
    await slowSchedule(t, "bufferOne");
    await runFor(t, 4 * MINUTE + 30_000, STEP_MS);
    const [a, b, c] = await runsOf(t, "slow");
    expect([a, b, c].map((r) => r.scheduledFor - t0)).toEqual([MINUTE, 2 * MINUTE, 4 * MINUTE]);
    // b waited for a (1 min + 150 s), then ran; c waits for b.
    expect(a.state.kind).toBe("finished");
    expect(b.state.kind).toBe("running");
    expect(b.state.startedAt).toBeGreaterThanOrEqual(a.state.finishedAt);
    expect(c.state.kind).toBe("pending");
    expect(c.waitsFor).toBe(b._id);
    expect(b.waitsFor).toBeUndefined();
    expect((await getSchedule(t, "slow")).counts).toEqual({ enqueued: 3, skipped: 1, missed: 0 });
    await runFor(t, 3 * MINUTE, STEP_MS);
    const later = await runsOf(t, "slow");
    const c2 = later.find((r) => r._id === c._id);
    expect(c2.state.kind).not.toBe("pending");
    expect(c2.state.startedAt).toBeGreaterThanOrEqual(
      later.find((r) => r._id === b._id).state.finishedAt,
    );
  });

  it("allowAll: enqueues every time, runs overlapping", async () => {
    const t = setup();
    await slowSchedule(t, "allowAll");
    await runFor(t, 2 * MINUTE + 30_000, STEP_MS);
    const runs = await runsOf(t, "slow");
    expect(runs.map((r) => r.state.kind)).toEqual(["running", "running"]);
    expect((await getSchedule(t, "slow")).counts.enqueued).toBe(2);
  });

  it("cancelOther: cancels the unfinished run and enqueues", async () => {
    const t = setup();
    await slowSchedule(t, "cancelOther");
    await runFor(t, 2 * MINUTE + 5000, STEP_MS);
    const [a, b] = await runsOf(t, "slow");
    // A running action runs on, marked canceled (not retried), as pool.cancel leaves it.
    expect(a.state.kind).toBe("running");
    expect(a.canceled).toBe(true);
    expect(b.state.kind).toBe("running");
    await runFor(t, 2 * MINUTE, STEP_MS);
    const runs = await runsOf(t, "slow");
    expect(runs.map((r) => r.canceled === true)).toEqual([true, true, true, false]);
    expect((await getSchedule(t, "slow")).counts.enqueued).toBe(4);
  });
});

describe("catch-up window", () => {
  it("fires a missed time within the catch-up window once: the latest passed time runs", async () => {
    const t = setup();
    const t0 = start();
    await schedule(t, "late", { everyMs: MINUTE, catchupWindowMs: 2 * MINUTE });
    // The deployment is down 100 s: the 1-min fire runs at 2:40, when 1:00 and 2:00 have passed.
    vi.setSystemTime(Date.now() + 100_000);
    await runFor(t, MINUTE + 1000, STEP_MS);
    const runs = await runsOf(t, "late");
    expect(runs.map((r) => r.scheduledFor - t0)).toEqual([2 * MINUTE]);
    expect((await getSchedule(t, "late")).counts).toEqual({ enqueued: 1, skipped: 1, missed: 0 });
    expect((await getSchedule(t, "late")).nextRunAt).toBe(t0 + 3 * MINUTE);
  });

  it("misses times that passed longer ago than the window, and goes on at the next", async () => {
    const t = setup();
    const t0 = start();
    await schedule(t, "late", { everyMs: MINUTE, catchupWindowMs: 30_000 });
    vi.setSystemTime(Date.now() + 100_000);
    await runFor(t, MINUTE + 1000, STEP_MS);
    expect(await runsOf(t, "late")).toEqual([]);
    expect((await getSchedule(t, "late")).counts).toEqual({ enqueued: 0, skipped: 0, missed: 2 });
    await runFor(t, 30_000, STEP_MS);
    expect((await runsOf(t, "late")).map((r) => r.scheduledFor - t0)).toEqual([3 * MINUTE]);
  });
});

describe("exactly once per time", () => {
  it("runs no time twice and skips none while the schedule is replaced again and again", async () => {
    const t = setup();
    const t0 = start();
    for (let i = 0; i < 30; i++) {
      // Replaced every 10 s, and at its times exactly (every sixth call).
      await schedule(t, "replaced", { cron: "* * * * *" });
      await runFor(t, 10_000, STEP_MS);
    }
    const times = (await runsOf(t, "replaced")).map((r) => r.scheduledFor - t0);
    expect(times).toEqual([0, 1, 2, 3, 4, 5].map((m) => m * MINUTE));
    expect(await pendingFires(t)).toHaveLength(1);
  });

  it("ignores a replaced schedule's stale timer", async () => {
    const t = setup();
    await schedule(t, "s", { everyMs: MINUTE });
    const before = await scheduleRow(t, "s");
    await schedule(t, "s", { everyMs: 5 * MINUTE });
    // The old timer is canceled; even if it ran (a fire already under way), its generation is old.
    await inComponent(t, async (ctx) => {
      await ctx.scheduler.runAfter(0, internal.schedules.fire, {
        scheduleId: before._id,
        generation: before.generation,
      });
    });
    await runFor(t, 2 * MINUTE, STEP_MS);
    expect(await runsOf(t, "s")).toEqual([]);
    const after = await scheduleRow(t, "s");
    expect(after.counts).toEqual({ enqueued: 0, skipped: 0, missed: 0 });
    expect(after.generation).toBe(before.generation + 1);
  });

  it("enqueues one run when a time's fire runs twice", async () => {
    const t = setup();
    const t0 = start();
    await schedule(t, "twice", { everyMs: MINUTE });
    const row = await scheduleRow(t, "twice");
    // A second delivery of the same timer, at the same time.
    await inComponent(t, async (ctx) => {
      await ctx.scheduler.runAt(row.state.nextRunAt, internal.schedules.fire, {
        scheduleId: row._id,
        generation: row.generation,
      });
    });
    await runFor(t, MINUTE + 30_000, STEP_MS);
    expect((await runsOf(t, "twice")).map((r) => r.scheduledFor - t0)).toEqual([MINUTE]);
    expect((await getSchedule(t, "twice")).counts.enqueued).toBe(1);
  });

  it("runs each time once when scheduled functions start late and in any order", async () => {
    // The deployment-like backend (test/deployment.ts): every scheduled function, the timers and
    // the loop's passes included, may start up to 3 s late, so functions due together run in a
    // random order; finished timers are garbage-collected as Convex does.
    for (const seed of [1, 2, 3]) {
      const { t, deployment } = await setupDeployment({ seed, gcAfterMs: 30_000 });
      const t0 = start();
      // Created at 0:30, between times.
      await deployment.run(MINUTE / 2, STEP_MS);
      await schedule(t, "late", { everyMs: MINUTE, overlap: "allowAll" });
      await schedule(t, "replaced", { cron: "* * * * *" });
      for (let i = 0; i < 8; i++) {
        await deployment.run(MINUTE / 2, STEP_MS);
        await schedule(t, "replaced", { cron: "* * * * *" });
      }
      await deployment.run(10_000, STEP_MS);
      const late = (await runsOf(t, "late")).map((r) => (r.scheduledFor - t0) / MINUTE);
      expect(late, `seed ${seed}`).toEqual([1.5, 2.5, 3.5, 4.5]);
      const replaced = (await runsOf(t, "replaced")).map((r) => (r.scheduledFor - t0) / MINUTE);
      expect(replaced, `seed ${seed}`).toEqual([1, 2, 3, 4]);
      expect(deployment.stats.delayedSchedules, `seed ${seed}`).toBeGreaterThan(0);
      vi.useRealTimers();
    }
  });

  it("keeps exactly one timer per waiting schedule through pause, resume and replace", async () => {
    const t = setup();
    await schedule(t, "a", { everyMs: MINUTE });
    await schedule(t, "b", { cron: "*/5 * * * *" });
    expect(await pendingFires(t)).toHaveLength(2);
    await act(t, "pauseSchedule", "a");
    expect(await pendingFires(t)).toHaveLength(1);
    await act(t, "resumeSchedule", "a");
    await schedule(t, "b", { cron: "*/2 * * * *" });
    await schedule(t, "b", { cron: "*/3 * * * *", paused: true });
    const a = await scheduleRow(t, "a");
    expect((await pendingFires(t)).map((f) => f.args[0].scheduleId)).toEqual([a._id]);
    // And one guard, due after the timer, for the same time.
    const [guard] = await pendingFires(t, { guards: true });
    expect(await pendingFires(t, { guards: true })).toHaveLength(1);
    expect(guard.args[0]).toEqual({ scheduleId: a._id, generation: a.generation, guard: true });
    expect(guard.scheduledTime).toBeGreaterThan(a.state.nextRunAt);
  });
});

describe("a fire that fails for good", () => {
  // Convex gives up on a scheduled mutation after OCC retries (the deployment backend's
  // `commitFails`): the failed fire's writes, its next timer among them, roll back. The time's
  // guard, set beside its timer, handles it instead.
  async function failedFire(catchupWindowMs: number) {
    const { t, deployment } = await setupDeployment({ seed: 5, maxStartDelayMs: 0 });
    const t0 = start();
    // allowAll: each time's run is enqueued whether or not the late run before it has finished.
    await schedule(t, "sturdy", { everyMs: MINUTE, catchupWindowMs, overlap: "allowAll" });
    deployment.arm({ kind: "commitFails", fn: "fire" });
    await deployment.run(3 * MINUTE + 5000, STEP_MS);
    expect(deployment.fired.map((f) => f.fn)).toEqual(["schedules:fire"]);
    const runs = await runsOf(t, "sturdy");
    return { t, t0, runs, times: runs.map((r) => (r.scheduledFor - t0) / MINUTE) };
  }

  it("runs the failed time late, within the catch-up window, and the next times on time", async () => {
    const { t, t0, runs, times } = await failedFire(MINUTE);
    expect(times).toEqual([1, 2, 3]);
    // The failed time's run is enqueued by its guard, after the time but within the window.
    expect(runs[0]._creationTime).toBeGreaterThan(t0 + MINUTE);
    expect(runs[0]._creationTime).toBeLessThanOrEqual(t0 + 2 * MINUTE);
    const s = await getSchedule(t, "sturdy");
    expect(s.counts).toEqual({ enqueued: 3, skipped: 0, missed: 0 });
    expect(s.nextRunAt).toBe(t0 + 4 * MINUTE);
    expect(await pendingFires(t)).toHaveLength(1);
  });

  it("goes on firing after a run that fails for good, under every overlap", async () => {
    for (const overlap of ["skip", "bufferOne", "allowAll", "cancelOther"]) {
      const t = setup();
      const t0 = start();
      // Every run fails for good: a 90 s action that throws NonRetryableError at its end (runs
      // overlap the next time: skip, bufferOne and cancelOther each decide on a failing run).
      await schedule(
        t,
        "failing",
        { everyMs: MINUTE, overlap },
        { kind: "action", args: { key: "failing", ms: 90_000, failTimes: 99, nonRetryable: true } },
      );
      await runFor(t, 6 * MINUTE + 5000, STEP_MS);
      const runs = await runsOf(t, "failing");
      const outcomes = await Promise.all(runs.map(async (r) => (await info(t, r._id)).result));
      expect(outcomes.filter((r) => r?.kind === "failed").length, overlap).toBeGreaterThanOrEqual(
        2,
      );
      // Times after the failures still enqueue runs; the schedule is still waiting.
      expect(runs.at(-1).scheduledFor, overlap).toBeGreaterThanOrEqual(t0 + 5 * MINUTE);
      const s = await getSchedule(t, "failing");
      expect(s.nextRunAt, overlap).toBe(t0 + 7 * MINUTE);
      expect(s.counts.enqueued + s.counts.skipped, overlap).toBe(6);
      vi.useRealTimers();
    }
  });

  it("counts the failed time missed when its window has passed, and still fires the next", async () => {
    const { t, t0, times } = await failedFire(10_000);
    expect(times).toEqual([2, 3]);
    const s = await getSchedule(t, "sturdy");
    expect(s.counts).toEqual({ enqueued: 2, skipped: 0, missed: 1 });
    expect(s.nextRunAt).toBe(t0 + 4 * MINUTE);
  });
});

describe("pause, resume, unschedule, run now", () => {
  it("pauseSchedule stops its times uncounted; resumeSchedule goes on from the next future time", async () => {
    const t = setup();
    const t0 = start();
    await schedule(t, "p", { everyMs: MINUTE });
    await runFor(t, 30_000, STEP_MS);
    expect(await act(t, "pauseSchedule", "p")).toBe(true);
    expect(await getSchedule(t, "p")).toMatchObject({ paused: true, nextRunAt: null });
    await runFor(t, 3 * MINUTE, STEP_MS);
    expect(await runsOf(t, "p")).toEqual([]);
    expect((await getSchedule(t, "p")).counts).toEqual({ enqueued: 0, skipped: 0, missed: 0 });
    expect(await act(t, "resumeSchedule", "p")).toBe(true);
    expect(await getSchedule(t, "p")).toMatchObject({ paused: false, nextRunAt: t0 + 4 * MINUTE });
    await runFor(t, MINUTE, STEP_MS);
    expect((await runsOf(t, "p")).map((r) => r.scheduledFor - t0)).toEqual([4 * MINUTE]);
  });

  it("creates a schedule paused when asked", async () => {
    const t = setup();
    await schedule(t, "quiet", { everyMs: MINUTE, paused: true });
    await runFor(t, 2 * MINUTE, STEP_MS);
    expect(await runsOf(t, "quiet")).toEqual([]);
    expect(await getSchedule(t, "quiet")).toMatchObject({ paused: true, nextRunAt: null });
  });

  it("unschedule deletes it; a run already enqueued goes on", async () => {
    const t = setup();
    await schedule(
      t,
      "gone",
      { everyMs: MINUTE },
      { kind: "action", args: { key: "gone", ms: 30_000 } },
    );
    await runFor(t, MINUTE + 5000, STEP_MS);
    expect(await act(t, "unschedule", "gone")).toBe(true);
    expect(await getSchedule(t, "gone")).toBeNull();
    expect(await pendingFires(t)).toEqual([]);
    await runFor(t, 2 * MINUTE, STEP_MS);
    const runs = await runsOf(t, "gone");
    expect(runs).toHaveLength(1);
    expect((await info(t, runs[0]._id)).result.kind).toBe("success");
  });

  it("answers false for an unknown name, and getSchedule null", async () => {
    const t = setup();
    expect(await act(t, "pauseSchedule", "nobody")).toBe(false);
    expect(await act(t, "resumeSchedule", "nobody")).toBe(false);
    expect(await act(t, "unschedule", "nobody")).toBe(false);
    expect(await getSchedule(t, "nobody")).toBeNull();
    await expect(act(t, "runScheduleNow", "nobody")).rejects.toThrow(/invalid name/);
  });

  it("runScheduleNow enqueues a run now under overlap, uncounted, also while paused", async () => {
    const t = setup();
    await schedule(
      t,
      "now",
      { everyMs: 10 * MINUTE, paused: true },
      { kind: "action", args: { key: "now", ms: 30_000 } },
    );
    const calledAt = Date.now();
    const workId = await act(t, "runScheduleNow", "now");
    expect(workId).toEqual(expect.any(String));
    expect(await info(t, workId)).toMatchObject({ schedule: "now", scheduledFor: calledAt });
    // The run is unfinished: overlap "skip" enqueues nothing.
    expect(await act(t, "runScheduleNow", "now")).toBeNull();
    const s = await getSchedule(t, "now");
    expect(s.counts).toEqual({ enqueued: 0, skipped: 0, missed: 0 });
    expect(s.lastRun).toMatchObject({ workId, scheduledFor: calledAt });
    await runFor(t, MINUTE, STEP_MS);
    expect((await getSchedule(t, "now")).lastRun).toMatchObject({
      state: "finished",
      outcome: "success",
    });
  });

  it("lists schedules by name, page by page", async () => {
    const t = setup();
    for (const name of ["c", "a", "b"]) await schedule(t, name, { everyMs: MINUTE });
    const first = await t.query(anyApi.schedules.list, { numItems: 2, cursor: null });
    expect(first.page.map((s: any) => s.name)).toEqual(["a", "b"]);
    const second = await t.query(anyApi.schedules.list, {
      numItems: 2,
      cursor: first.continueCursor,
    });
    expect(second.page.map((s: any) => s.name)).toEqual(["c"]);
  });

  it("replacing keeps counts and the last run, and computes the next time afresh", async () => {
    const t = setup();
    const t0 = start();
    const id = await schedule(t, "r", { everyMs: MINUTE });
    await runFor(t, MINUTE + 5000, STEP_MS);
    expect(await schedule(t, "r", { cron: "*/5 * * * *", overlap: "allowAll" })).toBe(id);
    const s = await getSchedule(t, "r");
    expect(s).toMatchObject({
      cron: "*/5 * * * *",
      overlap: "allowAll",
      nextRunAt: t0 + 5 * MINUTE,
      counts: { enqueued: 1, skipped: 0, missed: 0 },
    });
    expect(s.everyMs).toBeUndefined();
    expect(s.lastRun.scheduledFor).toBe(t0 + MINUTE);
  });
});

describe("bad input", () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["neither timing", {}, /invalid cron\/everyMs/],
    ["both timings", { cron: "* * * * *", everyMs: MINUTE }, /invalid cron\/everyMs/],
    ["a cron that does not parse", { cron: "every day" }, /invalid cron/],
    ["a cron with no time in 28 years", { cron: "0 0 30 2 *" }, /invalid cron/],
    ["an unknown timezone", { cron: "* * * * *", timezone: "Mars/Olympus" }, /invalid timezone/],
    ["a timezone with everyMs", { everyMs: MINUTE, timezone: "UTC" }, /invalid timezone/],
    ["everyMs under a second", { everyMs: 999 }, /invalid everyMs/],
    ["a fractional everyMs", { everyMs: 1500.5 }, /invalid everyMs/],
    ["endAt before startAt", { everyMs: MINUTE, startAt: 2e12, endAt: 1.9e12 }, /invalid endAt/],
    ["endAt in the past", { everyMs: MINUTE, endAt: 1 }, /invalid endAt/],
    ["an unknown overlap", { everyMs: MINUTE, overlap: "sometimes" }, /invalid overlap/],
    ["a negative catchupWindowMs", { everyMs: MINUTE, catchupWindowMs: -1 }, /catchupWindowMs/],
    ["a fractional jitterMs", { everyMs: MINUTE, jitterMs: 0.5 }, /invalid jitterMs/],
  ];

  it.each(cases)("rejects %s, naming the option, and writes nothing", async (_, options, names) => {
    const t = setup();
    await expect(schedule(t, "bad", options)).rejects.toThrow(names);
    expect(await inComponent(t, async (ctx) => ctx.db.query("schedules").collect())).toEqual([]);
    expect(await pendingFires(t)).toEqual([]);
  });

  it.each([
    ["an empty name", ""],
    ["a name over 256 characters", "n".repeat(257)],
  ])("rejects %s", async (_, name) => {
    const t = setup();
    await expect(schedule(t, name, { everyMs: MINUTE })).rejects.toThrow(/invalid name/);
    expect(await inComponent(t, async (ctx) => ctx.db.query("schedules").collect())).toEqual([]);
  });

  it("rejects bad input in the component too, when a caller skips the client", async () => {
    const t = setup();
    const call = t.mutation(anyApi.pool.callComponent, {
      fn: "schedules.schedule",
      args: {
        name: "raw",
        run: {
          fnHandle: "$handle:jobs.mutation",
          fnName: "jobs:mutation",
          fnArgs: {},
          fnType: "mutation",
        },
        cron: "61 * * * *",
      },
    });
    await expect(call).rejects.toThrow(/invalid cron/);
    expect(await inComponent(t, async (ctx) => ctx.db.query("schedules").collect())).toEqual([]);
  });
});

describe("cost", () => {
  /** Records the top-level transactions of `fn` while `body` runs. */
  async function recording(body: () => Promise<void>) {
    installInstrumentation();
    const seen: Array<{ fn: string; total: any }> = [];
    const stop = onTopLevelTransaction((fn, total) => seen.push({ fn, total }));
    try {
      await body();
    } finally {
      stop();
    }
    return seen;
  }

  it("costs one transaction per time, whose reads do not grow with the number of schedules", async () => {
    const fireReads = async (others: number) => {
      const t = setup();
      for (let i = 0; i < others; i++) {
        await schedule(t, `other-${i}`, { everyMs: 10 * MINUTE });
      }
      await schedule(t, "measured", { everyMs: MINUTE });
      const seen = await recording(() => runFor(t, 3 * MINUTE + 1000, STEP_MS));
      const fires = seen.filter((s) => s.fn.includes("schedules:fire"));
      return fires.map((s) => s.total);
    };
    const alone = await fireReads(0);
    const among = await fireReads(50);
    expect(alone).toHaveLength(3);
    expect(among).toHaveLength(3);
    // By design a fire reads the schedule, its last run, the segment's wake-up, a counter shard,
    // its own timer and its guard (whether a counter shard exists yet varies by one read): a bound
    // that does not depend on how many schedules exist.
    for (const fire of [...alone, ...among]) {
      expect(fire.documentsRead).toBeLessThanOrEqual(FIRE_READS_BOUND);
      expect(fire.databaseQueries).toBeLessThanOrEqual(FIRE_READS_BOUND);
    }
    // For docs/PERFORMANCE.md.
    console.log("schedule fire, per time:", JSON.stringify(alone[1]));
  });

  it("runs nothing between times, however many schedules wait", async () => {
    const t = setup();
    const SCHEDULES = 100;
    for (let i = 0; i < SCHEDULES; i++) {
      await schedule(t, `idle-${i}`, { everyMs: 10 * MINUTE });
    }
    // The first time's 100 runs are done well before 13:00 (10 at once, a few steps each).
    await runFor(t, 13 * MINUTE, STEP_MS);
    // From 13:00 to 19:00, between two times, no function runs for any schedule, and the pool's
    // loop sleeps (the pool's own watchdog is no schedule's).
    const seen = await recording(() => runFor(t, 6 * MINUTE, STEP_MS));
    expect(seen.filter((s) => /schedules|mainLoop\/main/.test(s.fn)).map((s) => s.fn)).toEqual([]);
    expect((await getSchedule(t, "idle-0")).counts.enqueued).toBe(1);
    expect(await pendingFires(t)).toHaveLength(SCHEDULES);
  });
});
