/**
 * Action runners (runners/actionRunner.ts): ordinary action jobs a pass starts together run many to
 * one runner action, each its own `ctx.runAction`, with outcomes reported in batches; a lone action
 * still gets a worker of its own. Every job keeps its guarantees: one onComplete, its retry
 * policy, its runner's death found per job, and a failed report never runs it again.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { runAction } from "../src/component/runners/worker.js";
import { probe } from "./app/probe.js";
import {
  completions,
  enqueue,
  failReports,
  inComponent,
  info,
  runFor,
  runUntil,
  setup,
  type T,
} from "./helpers.js";

/** The pool's scheduled actions, by name: runners and workers. */
async function scheduledActions(t: T): Promise<{ runners: number; workers: number }> {
  return await inComponent(t, async (ctx) => {
    const runs = await ctx.db.system.query("_scheduled_functions").collect();
    const named = (suffix: string) =>
      runs.filter((run: { name: string }) => run.name.endsWith(suffix)).length;
    return { runners: named("actionRunner:run"), workers: named("worker:runAction") };
  });
}

type Handler = (ctx: any, args: any) => Promise<unknown>;

const keys = (n: number) => Array.from({ length: n }, (_, i) => `a${i}`);
/** Six actions of 500 ms (or as `extra` says), enqueued together. */
const sixActions = (extra: Record<string, unknown> = {}) =>
  keys(6).map((key) => ({ key, ms: 500, ...extra }));

describe("action runners", () => {
  it("run actions started together in one runner action, each reported to onComplete once", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", sixActions({ value: 1 }));
    await runUntil(t, async () => (await completions(t)).length === 6, 10_000, 50);
    expect(await scheduledActions(t)).toEqual({ runners: 1, workers: 0 });
    const done = await completions(t);
    expect(done.map((c) => c.workId).sort()).toEqual([...ids].sort());
    expect(done.every((c) => c.result.kind === "success" && c.result.returnValue === 1)).toBe(true);
    // Each job's own action ran once.
    for (const key of keys(6)) expect(probe.attempts.get(key)).toBe(1);
  });

  it("file a runner's reports a row each, not a row per job, under the token its jobs' running state names", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", sixActions());
    const running = async () =>
      await inComponent(t, async (ctx) => {
        const work = await Promise.all(ids.map((id) => ctx.db.get(id)));
        return work.map((w: any) => (w.state.kind === "running" ? (w.state.runner ?? null) : null));
      });
    await runUntil(t, async () => (await running()).every((r) => r !== null), 2_000);
    const [token, ...others] = await running();
    expect(others.every((r) => r === token)).toBe(true);
    const filed = async () =>
      await inComponent(t, async (ctx) => await ctx.db.query("pendingCompletion").collect());
    const outcomesIn = (rows: any[]) =>
      rows.flatMap((row) => [row.workId, ...(row.more ?? []).map((o: any) => o.workId)]);
    // The runner reports as its actions end: a row per report, not per job, so the loop deletes
    // fewer; a row of several is found by recovery under the token. Collected as they come (the
    // loop deletes each once it has read it).
    const rows: any[] = [];
    await runUntil(
      t,
      async () => {
        for (const row of await filed()) if (!rows.some((r) => r._id === row._id)) rows.push(row);
        return outcomesIn(rows).length === 6;
      },
      5_000,
      1,
    );
    expect(rows.length).toBeLessThan(6);
    expect(rows.some((row) => row.more !== undefined)).toBe(true);
    for (const row of rows) if (row.more !== undefined) expect(row.runner).toBe(token);
    const outcomes = outcomesIn(rows);
    expect(outcomes.sort()).toEqual([...ids].sort());
    await runUntil(t, async () => (await completions(t)).length === 6, 10_000, 50);
    expect((await completions(t)).length).toBe(6);
  });

  it("give a lone action a worker of its own", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "alone" }]);
    await runUntil(t, async () => (await completions(t)).length === 1, 10_000, 50);
    expect(await scheduledActions(t)).toEqual({ runners: 0, workers: 1 });
  });

  it("start a backlog's freed slots in runners too: 30 jobs at 5 at once, each run once", async () => {
    const t = setup();
    const argsList = keys(30).map((key) => ({ key, ms: 300 }));
    await enqueue(t, "action", argsList, { poolOptions: { maxParallelism: 5 } });
    await runUntil(t, async () => (await completions(t)).length === 30, 60_000, 50);
    const { runners, workers } = await scheduledActions(t);
    // Jobs that end together free their slots together: a pass starts their refill in one runner.
    expect(runners + workers).toBeLessThan(30);
    for (const key of keys(30)) expect(probe.attempts.get(key)).toBe(1);
  });

  /** Kills the runners of first attempts: every report of theirs fails, direct or scheduled. */
  const killFirstRunners = () =>
    failReports({
      inserts: (row) => row.attempt === 1,
      // A runner's scheduled report carries its outcomes (a worker's, one outcome flat).
      schedules: (report: any) => (report.outcomes?.[0] ?? report).attempt === 1,
    });

  /**
   * Kills the next lone worker `afterMs` into its run, as a deploy or out-of-memory kill would: the
   * worker fails (as convex-test marks a thrown action), the action it started runs on (its own
   * execution, as on Convex), and the dead worker's later calls never return. Restored after the test.
   */
  const killNextWorkerAfter = (afterMs: number) => {
    const worker = runAction as unknown as { _handler: Handler };
    const original = worker._handler;
    const killed = { count: 0 };
    onTestFinished(() => {
      worker._handler = original;
    });
    worker._handler = (ctx, args) => {
      if (killed.count > 0) return original(ctx, args);
      killed.count++;
      let dead = false;
      const never = () => new Promise<never>(() => {});
      const dying = {
        ...ctx,
        runQuery: (...a: unknown[]) => (dead ? never() : ctx.runQuery(...a)),
        runMutation: (...a: unknown[]) => (dead ? never() : ctx.runMutation(...a)),
        scheduler: {
          ...ctx.scheduler,
          runAfter: (...a: unknown[]) => (dead ? never() : ctx.scheduler.runAfter(...a)),
        },
      };
      void original(dying, args).catch(() => {});
      return new Promise((_, reject) =>
        setTimeout(() => {
          dead = true;
          reject(new Error("test: the worker was killed"));
        }, afterMs),
      );
    };
    return killed;
  };

  it("recovery leaves a job whose outcome waits in its runner's report row, first or not", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    // The runner's own reports all fail; the row planted below does not.
    failReports({
      inserts: (o: any) => o.attempt === 1 && o.result.returnValue !== "planted",
      schedules: (report: any) => (report.outcomes?.[0] ?? report).attempt === 1,
    });
    const [a, b] = await enqueue(
      t,
      "action",
      keys(2).map((key) => ({ key, ms: 1_000 })),
    );
    const bothRunning = async () =>
      await inComponent(t, async (ctx) => {
        const rows = [await ctx.db.get(a), await ctx.db.get(b)];
        return rows.every((row: any) => row.state.kind === "running");
      });
    await runUntil(t, bothRunning, 5_000);
    // A report of both outcomes waits in a later segment (as while the loop is behind), in one
    // row under the runner's token: a's outcome first, b's among `more`.
    const rowId = await inComponent(t, async (ctx) => {
      const work = await ctx.db.get(a);
      if (work?.state.kind !== "running") throw new Error("a is not running");
      const outcome = (workId: string) => ({
        workId,
        attempt: 1,
        result: { kind: "success", returnValue: "planted" },
      });
      return await ctx.db.insert("pendingCompletion", {
        ...outcome(a),
        more: [outcome(b)],
        runner: work.state.runner,
        segment: Number.MAX_SAFE_INTEGER,
      });
    });
    // Past the runner's actions' 10 minutes and several recovery cycles: neither is taken for
    // dead, nor its report for lost.
    await runFor(t, 13 * 60_000, 1_000);
    expect(await completions(t)).toEqual([]);
    // Without the row, recovery ends both.
    await inComponent(t, async (ctx) => await ctx.db.delete("pendingCompletion", rowId));
    await runUntil(t, async () => (await completions(t)).length === 2, 5 * 60_000, 1_000);
    for (const done of await completions(t)) expect(done.result.error).toMatch(/^workpool: /);
  });

  it("a runner killed mid-batch: its jobs fail 'runner died' and follow their retry policy", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const retry = { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } };
    const killed = killFirstRunners();
    const ids = await enqueue(t, "action", sixActions({ ms: 1_000 }), { options: retry });
    await runUntil(t, async () => (await completions(t)).length === 6, 15 * 60_000, 1_000);
    expect(killed.count).toBeGreaterThan(0);
    for (const id of ids) {
      expect(await info(t, id)).toMatchObject({
        previousAttempts: 2,
        result: { kind: "success" },
      });
    }
  });

  it("a runner killed while its jobs' actions run: none is rerun before its action could have ended", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const retry = { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } };
    killFirstRunners();
    // One job ends at once and its report kills the runner; the others' actions run on, 5 minutes.
    const argsList = [
      { key: "a0" },
      ...keys(6)
        .slice(1)
        .map((key) => ({ key, ms: 5 * 60_000 })),
    ];
    await enqueue(t, "action", argsList, { options: retry });
    await runUntil(t, async () => (await completions(t)).length === 6, 20 * 60_000, 1_000);
    for (const key of keys(6).slice(1)) {
      const [first, second] = probe.starts.get(key)!;
      // Convex gives an action 10 minutes: the retry waits that long, not a recovery cycle.
      expect(second - first).toBeGreaterThanOrEqual(10 * 60_000);
    }
    // Each job's first run had ended before its second began: never two runs at once.
    expect(probe.maxRunning).toBeLessThanOrEqual(6);
  });

  it("a lone action's worker killed while its action runs: the retry waits until that action could have ended", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    const killed = killNextWorkerAfter(1_000);
    const [id] = await enqueue(t, "action", [{ key: "lone", ms: 3 * 60_000 }], {
      poolOptions: { maxParallelism: 1 },
      options: { retry: { maxAttempts: 2, initialBackoffMs: 100, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 20 * 60_000, 1_000);
    expect(killed.count).toBe(1);
    const [first, second] = probe.starts.get("lone")!;
    // The worker died 1 s in, its action ran on: the retry waits for Convex's 10 minutes.
    expect(second - first).toBeGreaterThanOrEqual(10 * 60_000);
    expect(probe.maxRunning).toBe(1);
    expect(await info(t, id)).toMatchObject({ previousAttempts: 2, result: { kind: "success" } });
  });

  it("a runner killed mid-batch: a job with no retries left fails with 'runner died'", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    vi.spyOn(console, "error").mockImplementation(() => {});
    killFirstRunners();
    await enqueue(t, "action", sixActions({ ms: 1_000 }));
    await runUntil(t, async () => (await completions(t)).length === 6, 15 * 60_000, 1_000);
    for (const done of await completions(t)) {
      expect(done.result.error).toMatch(/^workpool: runner died \(/);
    }
  });

  it("a report whose direct call fails goes through the scheduler: every job reported once, none run again", async () => {
    const t = setup();
    vi.spyOn(console, "info").mockImplementation(() => {});
    const ids = await enqueue(t, "action", sixActions({ ms: 100, value: "real" }), {
      options: { retry: true },
    });
    // The first outcome written fails (the direct report rolls back whole).
    let left = 1;
    const injected = failReports({ inserts: (row) => row.workId === ids[0] && left-- > 0 });
    await runUntil(t, async () => (await completions(t)).length === 6, 10_000, 20);
    await runFor(t, 2_000, 100);
    expect(injected.count).toBe(1);
    const done = await completions(t);
    expect(done).toHaveLength(6);
    expect(done.every((c) => c.result.returnValue === "real")).toBe(true);
    for (const key of keys(6)) expect(probe.attempts.get(key)).toBe(1);
  });

  it("give a job in a runner Convex's full 10 minutes: two 9-minute actions started together succeed", async () => {
    const t = setup();
    const nineMinutes = 9 * 60_000;
    await enqueue(
      t,
      "action",
      [
        { key: "a", ms: nineMinutes },
        { key: "b", ms: nineMinutes },
      ],
      {
        batch: true,
      },
    );
    await runUntil(t, async () => (await completions(t)).length === 2, 11 * 60_000, 1_000);
    expect(await scheduledActions(t)).toEqual({ runners: 1, workers: 0 });
    for (const { result } of await completions(t)) expect(result.kind).toBe("success");
  });

  it("never start a job's retry while its first run may still run: two jobs, at most two runs at once", async () => {
    const t = setup();
    const nineMinutes = 9 * 60_000;
    await enqueue(
      t,
      "action",
      [
        { key: "g:a", ms: nineMinutes },
        { key: "g:b", ms: nineMinutes },
      ],
      {
        batch: true,
        options: { retry: { maxAttempts: 2, initialBackoffMs: 1_000, base: 2 } },
      },
    );
    await runFor(t, 10 * 60_000, 1_000);
    expect(probe.groupMax.get("g")).toBe(2);
    expect(probe.attempts.get("g:a")).toBe(1);
  });

  it("a canceled running action runs to its end and reports once", async () => {
    const t = setup();
    const ids = await enqueue(t, "action", sixActions({ ms: 1_000 }));
    await runUntil(t, () => probe.running === 6, 5_000, 50);
    await t.mutation(anyApi.pool.cancel, { id: ids[0] });
    await runUntil(t, async () => (await completions(t)).length === 6, 10_000, 50);
    const done = await completions(t);
    expect(done.filter((c) => c.workId === ids[0])).toHaveLength(1);
    expect(probe.attempts.get(keys(6)[0])).toBe(1);
  });
});
