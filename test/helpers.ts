/**
 * Shared test setup. Tests drive a virtual clock (virtualClock.ts), and `runFor` advances it in
 * small steps so that scheduled functions (the loop, workers, sleeping actions) run as time passes.
 */
import { rateChecks } from "../bench/checks.js";
import { convexTest } from "convex-test";
import { anyApi } from "convex/server";
import { vi } from "vitest";
import { register, type RegisterOptions } from "../src/test.js";
import schema from "./app/schema.js";
import { probe } from "./app/probe.js";
import * as tasksApp from "./app/tasks.js";
import * as brokenExecutorsApp from "./app/brokenExecutors.js";
import { advance, startVirtualClock } from "./virtualClock.js";

export const appModules = import.meta.glob("./app/**/*.ts");

export type T = ReturnType<typeof convexTest<typeof schema.tables>>;

/** Convex's per-transaction limits, tightened for a test (convex-test's `transactionLimits`: the
 * ones not given keep Convex's values). */
export type TransactionLimits = Partial<
  Record<
    | "functionsScheduled"
    | "documentsRead"
    | "documentsWritten"
    | "bytesRead"
    | "bytesWritten"
    | "databaseQueries",
    number
  >
>;

/** A fresh app with the pool installed as "workpool", at a fixed start time; `options` as for
 * `register` (pools without a configured logLevel log at WARN unless it says otherwise).
 * `limits`: Convex's per-transaction limits made tighter, for every transaction of the test (a
 * spec that drives a stage of the loop over a count limit with a small load). */
export function setup(options?: RegisterOptions, limits?: TransactionLimits) {
  startVirtualClock();
  armedKill = undefined;
  doomedExecutors.clear();
  probe.reset();
  const t = convexTest({ schema, modules: appModules, transactionLimits: limits ?? true });
  register(t as any, "workpool", options);
  return t;
}

/** Advances virtual time by `ms` in steps of `stepMs`, letting due functions run at each step. */
export async function runFor(_t: any, ms: number, stepMs = 10) {
  await advance(ms, stepMs);
}

/** Runs the component's tables through a callback (reads in the component's context). */
export async function inComponent<R>(t: any, fn: (ctx: any) => Promise<R>): Promise<R> {
  return await t.runInComponent("workpool", fn);
}

type Kind = "action" | "mutation" | "query";

/** Enqueues jobs through the test app's client calls; returns their ids. */
export async function enqueue(
  t: any,
  kind: Kind,
  argsList: Array<Record<string, unknown>>,
  extra: { poolOptions?: object; options?: object; onComplete?: string; batch?: boolean } = {},
): Promise<string[]> {
  return await t.mutation(anyApi.pool.enqueue, {
    kind,
    argsList,
    onComplete: "onComplete",
    ...extra,
  });
}

/** `info` of a job, through the component's public query. */
export async function info(t: any, id: string): Promise<any> {
  return await t.query(anyApi.pool.callComponentQuery, { fn: "lib.info", args: { id } });
}

/** What onComplete received, per workId, in call order, and when (`_creationTime`, virtual ms). */
export async function completions(
  t: any,
): Promise<Array<{ workId: string; context: any; result: any; _creationTime: number }>> {
  return await t.run(async (ctx: any) => await ctx.db.query("completions").collect());
}

/** How many jobs are in each state, read from the component's `work` table. */
export async function jobStates(t: any): Promise<Record<string, number>> {
  const work = await inComponent(t, async (ctx) => await ctx.db.query("work").collect());
  const counts: Record<string, number> = { pending: 0, running: 0, finished: 0 };
  for (const w of work) counts[w.state.kind]++;
  return counts;
}

/** The component's tables that hold per-job rows: empty once all work is done and swept. */
export const PER_JOB_TABLES = [
  "work",
  "payloads",
  "pendingStart",
  "pendingCompletion",
  "pendingCancelation",
  "dedupe",
] as const;

/** Every table of the component: the per-job tables and the singletons. */
export const COMPONENT_TABLES = [
  ...PER_JOB_TABLES,
  "config",
  "runStatus",
  "loopState",
  "keyQueue",
  "keyReady",
  "keyState",
  "keyLedger",
  "keySettings",
  "enqueueCounts",
  "eventCounts",
  "wakeWatch",
  "schedules",
] as const;

/** Every row of every component table, and the component's scheduled functions, for before/after
 * comparisons. */
export async function componentRows(t: any) {
  return await inComponent(t, async (ctx) => {
    const rows: Record<string, unknown[]> = {};
    for (const table of COMPONENT_TABLES) {
      rows[table] = await ctx.db.query(table).collect();
    }
    rows._scheduled_functions = await ctx.db.system.query("_scheduled_functions").collect();
    return rows;
  });
}

/** Advances time in steps, calling `check` after each step (e.g. to assert an invariant). */
export async function runChecking(t: any, ms: number, check: () => Promise<void>, stepMs = 10) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    await runFor(t, Math.min(stepMs, end - Date.now()), stepMs);
    await check();
  }
}

/** Advances time until `condition()` holds (checked each step of `stepMs`); fails after `maxMs` of
 * virtual time. */
export async function runUntil(
  t: any,
  condition: () => boolean | Promise<boolean>,
  maxMs = 10_000,
  stepMs = 10,
) {
  const end = Date.now() + maxMs;
  while (!(await condition())) {
    if (Date.now() >= end) throw new Error(`condition not met within ${maxMs} ms of virtual time`);
    await runFor(t, stepMs, stepMs);
  }
}

/** Which report writes of an action's attempt an injected fault hits. */
type ReportFault = (row: { workId: string; attempt: number }) => boolean;

/**
 * Fault injection: makes the writes that report an attempt fail, as a lost write would (its
 * transaction rolls back). convex-test runs every database call through
 * `globalThis.Convex.asyncSyscall`: "1.0/insert" into `pendingCompletion` is the report itself (in
 * the worker's direct call, or in the scheduled report mutation), and "1.0/actions/schedule" of
 * `complete:complete` is the action worker handing its report to the scheduler. `inserts` and
 * `schedules` say which to fail (by default a failed insert's row also fails to be scheduled, so
 * the runner dies unreported, as a killed one would). The spy wraps the current test's
 * implementation (restored by `vi.restoreAllMocks()`). Returns the counts of failures injected.
 */
export function failReports(faults: { inserts?: ReportFault; schedules?: ReportFault }): {
  count: number;
  schedules: number;
} {
  const injected = { count: 0, schedules: 0 };
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (op === "1.0/insert" && faults.inserts) {
      const { table, value } = JSON.parse(jsonArgs);
      // A report of many files several outcomes in one row: it fails if any of them is hit.
      const outcomes = table === "pendingCompletion" ? [value, ...(value.more ?? [])] : [];
      if (outcomes.some((outcome) => faults.inserts!(outcome))) {
        injected.count++;
        throw new Error("injected: failure of the completion write");
      }
    }
    if (op === "1.0/actions/schedule" && faults.schedules) {
      const { name, args } = JSON.parse(jsonArgs);
      const report = Array.isArray(args) ? args[0] : args;
      if (String(name).includes("complete") && report && faults.schedules(report)) {
        injected.schedules++;
        throw new Error("injected: failure to schedule the report");
      }
    }
    return await asyncSyscall(op, jsonArgs);
  });
  return injected;
}

/** Kills the runner of every attempt `shouldFail` picks: each of its report writes fails, direct
 * or scheduled, so it dies unreported and only recovery can notice. */
export function failCompletionInserts(shouldFail: ReportFault): { count: number } {
  return failReports({ inserts: shouldFail, schedules: shouldFail });
}

type AsyncSyscall = (op: string, jsonArgs: string) => Promise<string>;

/** Routes convex-test's `Convex.asyncSyscall` through `wrap` (with the one in place before) for
 * the rest of the test: how the fault and schedule helpers here reach a transaction's writes and
 * schedules. Helpers stack: a second one wraps the first. */
export function interceptSyscalls(
  wrap: (op: string, jsonArgs: string, asyncSyscall: AsyncSyscall) => Promise<string>,
): void {
  const convex = (globalThis as any).Convex;
  const getter = Object.getOwnPropertyDescriptor(convex, "asyncSyscall")!.get!;
  const previous: () => AsyncSyscall = vi.isMockFunction(getter)
    ? getter.getMockImplementation()!
    : () => getter.call(convex);
  vi.spyOn(convex, "asyncSyscall", "get").mockImplementation(() => {
    const asyncSyscall = previous();
    return (op: string, jsonArgs: string) => wrap(op, jsonArgs, asyncSyscall);
  });
}

/** The function a "1.0/schedule" call's arguments name. */
const scheduledName = (args: { name?: string; reference?: string }) =>
  String(args.name ?? args.reference ?? "");

/**
 * Forces a schedule: every function that a mutation schedules and whose name contains `name` runs
 * `delayMs` later than asked, so the test can make other transactions (e.g. a loop pass) run in
 * between. Wraps "1.0/schedule" (its `ts` is in seconds) like `failReports`.
 */
export function delaySchedules(name: string, delayMs: number): { count: number } {
  const delayed = { count: 0 };
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (op === "1.0/schedule") {
      const args = JSON.parse(jsonArgs);
      if (scheduledName(args).includes(name)) {
        delayed.count++;
        return await asyncSyscall(op, JSON.stringify({ ...args, ts: args.ts + delayMs / 1000 }));
      }
    }
    return await asyncSyscall(op, jsonArgs);
  });
  return delayed;
}

/**
 * Sends every function a transaction schedules through `rename`: e.g. back to the path a previous
 * layout of the component had, as a deployment upgraded with those calls still scheduled would run
 * them. Returns the names it changed, in order.
 */
export function renameSchedules(rename: (name: string) => string): string[] {
  const renamed: string[] = [];
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (op === "1.0/schedule" || op === "1.0/actions/schedule") {
      const args = JSON.parse(jsonArgs);
      const from = scheduledName(args);
      const to = rename(from);
      if (to !== from) {
        renamed.push(from);
        const field = args.name !== undefined ? "name" : "reference";
        return await asyncSyscall(op, JSON.stringify({ ...args, [field]: to }));
      }
    }
    return await asyncSyscall(op, jsonArgs);
  });
  return renamed;
}

/** Makes the next `times` schedules of a function whose name (or handle) contains `name` throw (after letting
 * the first `after` through), so the transaction that asked for them rolls back (e.g. a loop pass
 * that starts a worker). */
export function failSchedules(name: string, times: number, after = 0): { count: number } {
  const failed = { count: 0 };
  let seen = 0;
  interceptSyscalls(async (op, jsonArgs, asyncSyscall) => {
    if (op === "1.0/schedule" && failed.count < times) {
      const args = JSON.parse(jsonArgs);
      // A function handle (an executor's) is matched by its text, which holds its path.
      const target = scheduledName(args) || String(args.functionHandle ?? "");
      if (target.includes(name) && ++seen > after) {
        failed.count++;
        throw new Error(`injected: failure to schedule ${name}`);
      }
    }
    return await asyncSyscall(op, jsonArgs);
  });
  return failed;
}

/** `pool.<method>(ctx, ...args)` of a pool with `poolOptions`, from a mutation. */
export async function callPool(
  t: any,
  method: string,
  args: unknown[],
  poolOptions?: object,
): Promise<any> {
  return await t.mutation(anyApi.pool.callClient, { method, args, poolOptions });
}

/** `pool.keyStatus(ctx, key)`, from a query. */
export async function keyStatus(t: any, key: string): Promise<any> {
  return await t.query(anyApi.pool.callClientQuery, { method: "keyStatus", args: [key] });
}

/** `pool.list(ctx, args)`, from a query. */
export async function listJobs(t: any, args: Record<string, unknown>): Promise<any> {
  return await t.query(anyApi.pool.callClientQuery, { method: "list", args: [args] });
}

/** Every job `pool.list` gives for `filter`, page after page of `pageSize`. */
export async function listAll(
  t: any,
  filter: Record<string, unknown> = {},
  pageSize = 100,
): Promise<any[]> {
  const jobs: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await listJobs(t, { ...filter, paginationOpts: { numItems: pageSize, cursor } });
    jobs.push(...page.page);
    if (page.isDone) return jobs;
    cursor = page.continueCursor;
  }
}

/** `pool.stats(ctx)`, from a query. */
export async function poolStats(t: any): Promise<any> {
  return await t.query(anyApi.pool.callClientQuery, { method: "stats", args: [] });
}

/** `pool.stats(ctx)` and the time its query ran at (`at`), by the query's own clock. */
export async function poolStatsAt(t: any): Promise<{ stats: any; at: number }> {
  return await t.query(anyApi.pool.statsAt, {});
}

/** The most starts in any half-open window [s, s + periodMs) that begins at a start. */
export function busiestWindow(starts: number[], periodMs: number): number {
  return rateChecks(starts, { starts: 1, periodMs }).busiest;
}

/** `interceptSyscalls` for other test modules (test/deployment.ts builds its backend on it). */
export const interceptAsyncSyscalls = interceptSyscalls;

/** The kill `killRunnerAtNextReport` armed, if it has not fired yet (reset by `setup`). */
let armedKill: { count: number; at?: number } | undefined;
/** Executors (by id) `killExecutorAtNextReport` doomed: each dies at its next report. */
const doomedExecutors = new Set<string>();
/** The test app's executor actions, hooked once so that a kill can reach them. */
const hookedExecutors = new Set<unknown>();
type ExecutorAction = { _handler: (ctx: any, args: any) => Promise<unknown> };

/** Wraps an executor action's handler: while a kill is armed, the next report it sends kills it
 * (the call never returns and the action fails at once, as a killed action's run ends, with every
 * task it holds; its tasks' promises go on, as dangling code would). */
function hookExecutor(action: ExecutorAction): void {
  if (hookedExecutors.has(action)) return;
  hookedExecutors.add(action);
  const handler = action._handler;
  action._handler = (ctx, args) => {
    let kill: (error: Error) => void = () => {};
    const killed = new Promise<never>((_, reject) => (kill = reject));
    const runMutation = ctx.runMutation;
    const wrapped = {
      ...ctx,
      runMutation: async (reference: unknown, callArgs: unknown) => {
        const executorId = (args as { executorId?: string } | undefined)?.executorId;
        if (executorId !== undefined && doomedExecutors.delete(executorId)) {
          kill(new Error("injected: the executor was killed"));
          return await new Promise<never>(() => {});
        }
        const armed = armedKill;
        if (armed !== undefined && armed.count === 0) {
          armed.count++;
          armed.at = Date.now();
          armedKill = undefined;
          kill(new Error("injected: the runner was killed"));
          return await new Promise<never>(() => {});
        }
        return await runMutation(reference, callArgs);
      },
    };
    return Promise.race([handler(wrapped, args), killed]);
  };
}

/** Kills the next executor (of the test app's) at its next report: the report is never sent and
 * the executor's action fails with every task it holds, as a killed executor's would. Returns how
 * many were killed (one at most) and when (virtual ms). */
/** Kills the executor `executorId` (of the test app's) at its next report, as
 * `killRunnerAtNextReport` does. */
export function killExecutorAtNextReport(executorId: string): void {
  doomedExecutors.add(executorId);
}

export function killRunnerAtNextReport(): { count: number; at?: number } {
  armedKill = { count: 0 };
  return armedKill;
}

// Hooked when this module loads, so that an executor already running when a test arms a kill
// is reached too.
for (const action of [tasksApp.run, tasksApp.wide, tasksApp.model, brokenExecutorsApp.zerosExec]) {
  hookExecutor(action as unknown as ExecutorAction);
}
