/**
 * A test backend that behaves more like a Convex deployment than convex-test does alone: the
 * backend of the model test's chaos programs (test/model.test.ts with FUZZ_CHAOS=1) and of any spec
 * that opts in:
 *
 *   const { t, deployment } = await setupDeployment({ seed: 7 });
 *   // or, on a backend from `setup()`: const deployment = await deploymentLike(t, { seed: 7 });
 *   await deployment.run(60_000); // the clock, stepped, with the backend's own events in between
 *
 * What it adds to convex-test with `transactionLimits: true` (Convex's per-transaction limits,
 * which `setup()` already turns on):
 *
 * - **Limits per write and per schedule.** Every insert, patch and replace, in any component, is
 *   checked against Convex's document limits (1 MiB, 1,024 fields per object, 16 levels of
 *   nesting, 8,192 array elements) before it is made, and every function a mutation schedules
 *   against the 1,000 per transaction; the error thrown is the one Convex throws.
 * - **Scheduled functions start late**, by a delay drawn for each (most start on time, some up to
 *   `maxStartDelayMs` late), so functions due together run in a random order.
 * - **Faults of the pool's own**, one at a time, armed with `arm(fault)`: a pool mutation run by
 *   the scheduler or by an action fails at commit as if Convex gave up retrying it after OCC
 *   conflicts (`commitFails`, rolled back whole however the code handled errors); a loop pass
 *   throws at its n-th database call (`passThrows`, the rest of the pass rolled back too); a worker
 *   action, or an app action the test names (an executor), dies at one of its awaits
 *   (`actionDies`: the call never returns, and Convex marks the scheduled function failed some
 *   time later; or the call throws).
 * - **Refusals counted by limit.** Every top-level transaction that met one of Convex's limits
 *   (its count limits as convex-test's `transactionLimits` enforces them, the schedule limit, a
 *   document's limits, or a field name Convex refuses) is counted once, under the first limit it
 *   met (`stats.refusals`), so that a campaign can tell which of its draws reach which limit.
 * - **`_scheduled_functions` rows garbage-collected** at random times once finished longer than
 *   `gcAfterMs` (by default the pool's report-lost window), as Convex deletes them after a while;
 *   and finished rows carry `completedTime`, as Convex's do (convex-test sets it on failures only).
 *
 * Every draw comes from `seed`, so a run replays. What it cannot model, and why, is in
 * docs/RELIABILITY.md ("The deployment-like backend").
 *
 * How: convex-test's syscalls are wrapped (helpers.ts `interceptAsyncSyscalls`), and its
 * transaction manager is reached through the AsyncLocalStorage store convex-test runs each call
 * in (as bench/instrument.ts does), so that a chosen transaction can fail at commit and roll back
 * whole. Owns nothing of the pool; one deployment is active at a time (the latest made).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { getConvexSize, jsonToConvex } from "convex/values";
import { isConvexGlobal, isExecutionContext } from "../bench/instrument.js";
import { committedIdsOf, tableOfId } from "../bench/fastTables.js";
import { REPORT_LOST_AFTER_MS } from "../src/component/mainLoop/recovery.js";
import { run as runnerAction } from "../src/component/runners/actionRunner.js";
import { runAction } from "../src/component/runners/worker.js";
import type { RegisterOptions } from "../src/test.js";
import { interceptAsyncSyscalls, setup, type T, type TransactionLimits } from "./helpers.js";
import { realTick } from "./virtualClock.js";
import { vi } from "vitest";

// Convex's limits (docs.convex.dev/production/state/limits).
/** Bytes in a mebibyte. */
export const MiB = 1 << 20;
/** The largest document. */
export const DOCUMENT_SIZE_LIMIT = MiB;
/** Fields of one object, the document or any object inside it. */
export const OBJECT_FIELDS_LIMIT = 1024;
/** How deep objects and arrays may nest in a document. */
export const NESTING_LIMIT = 16;
/** Elements of one array. */
export const ARRAY_ELEMENTS_LIMIT = 8192;
/** Functions one transaction may schedule. */
export const SCHEDULED_FUNCTIONS_LIMIT = 1000;

/** The pool's functions a fault may name, by the paths the scheduler stores (old paths too). */
export const POOL_FUNCTIONS = {
  main: /^(mainLoop\/main|loop):main$/,
  complete: /^(mainLoop\/complete|complete|runners\/actionRunner):complete$/,
  deliver: /^(runners\/deliver|deliver):deliver$/,
  worker: /^(runners\/worker|worker):runMutationOrQuery$/,
  check: /^(mainLoop\/watchdog|watchdog):check$/,
  checkWakes: /^(mainLoop\/watchdog|watchdog):checkWakes$/,
  sweep: /^(mainLoop\/sweep|sweep):sweep$/,
  /** An executor's report (review 2026-11-26: commit faults never reached it). */
  report: /^runners\/executor:report$/,
  /** A schedule's timer (schedules.ts `fire`), its guard included. */
  fire: /^schedules:fire$/,
} as const;
export type PoolFunction = keyof typeof POOL_FUNCTIONS;

/** One fault of the pool's own; `arm` holds it until a transaction or action it fits comes. */
export type Fault =
  /** The next transaction of `fn` that the scheduler or an action runs and that wrote something
   * fails at commit (Convex gave up on its OCC retries). */
  | { kind: "commitFails"; fn: PoolFunction }
  /** The next loop pass throws at its `stage`-th database call (or at commit if it makes fewer). */
  | { kind: "passThrows"; stage: number }
  /** The next worker action to reach its `at`-th call (1: loading args or the job's function, 2:
   * the job's function or the report, …) dies there: before or `after` the call took effect. Or
   * the next run of the app action `action` names (DeploymentOptions `actions`; "worker": the
   * worker only; undefined: whichever comes first), e.g. an executor at its `at`-th report.
   * "hang": the call never returns (nor does any later call of the action: it is dead) and Convex
   * marks the action failed `noticedAfterMs` later; "throw": the call throws as a transient error
   * would, and the action's code decides what follows. */
  /** Every transaction of `fn` that the scheduler or an action runs and that writes something
   * fails at commit from the first one on for `ms` (a deliverer that keeps failing for a while:
   * review 2026-11-27 H1). */
  | { kind: "commitFailsFor"; fn: PoolFunction; ms: number }
  | {
      kind: "actionDies";
      at: number;
      after: boolean;
      mode: "hang" | "throw";
      noticedAfterMs: number;
      action?: string;
    };

/** A fault that fired: when, in which function, on which jobs (when the function names any), in
 * which executor (an executor action's `executorId` argument). */
export type FiredFault = {
  fault: Fault;
  at: number;
  fn: string;
  /** The jobs it hit: a worker's one, or an action runner's batch. */
  workIds: string[];
  executorId?: string;
  error: string;
};

export type DeploymentOptions = {
  /** Every random draw of the backend comes from this. */
  seed: number;
  /** The name the pool is installed under (default "workpool"). */
  component?: string;
  /** The latest a scheduled function starts (default 3,000 ms; 0: all on time). */
  maxStartDelayMs?: number;
  /** Finished `_scheduled_functions` rows may be deleted this long after they finished (default:
   * the pool's report-lost window, REPORT_LOST_AFTER_MS); false: never. */
  gcAfterMs?: number | false;
  /** App actions (registered functions, by a name of the test's choosing) that an `actionDies`
   * fault may hit besides the pool's worker: an executor, whose calls are its reports. */
  actions?: Record<string, unknown>;
};

/** Convex's limits a transaction may meet, each known by the start of the error Convex (or
 * convex-test's `transactionLimits`, or this backend) throws. */
export const REFUSAL_PATTERNS = {
  scheduled: /^Scheduled too many functions/,
  scheduledArgs: /^Scheduled function arguments too large/,
  documentsWritten: /^Wrote too many documents/,
  bytesWritten: /^Wrote too much data/,
  documentsRead: /^Scanned too many documents/,
  bytesRead: /^Read too much data/,
  indexRanges: /^Too many index ranges/,
  documentSize: /^Value is too large/,
  fields: /^Object has too many fields/,
  nesting: /^Value is too nested/,
  arrayLength: /^Array length is too long/,
  fieldName: /Field name .* (has invalid character|starts with a '\$')/,
} as const;
export type Refusal = keyof typeof REFUSAL_PATTERNS;

/** The limit an error's message says was met, if any. */
export function refusalOf(message: string | undefined): Refusal | undefined {
  if (message === undefined) return undefined;
  const text = message.replace(/^(Uncaught )?(Error: )?/, "");
  for (const [limit, pattern] of Object.entries(REFUSAL_PATTERNS)) {
    if (pattern.test(text)) return limit as Refusal;
  }
  return undefined;
}

/** A zero count for every limit. */
export const noRefusals = (): Record<Refusal, number> =>
  Object.fromEntries(Object.keys(REFUSAL_PATTERNS).map((limit) => [limit, 0])) as Record<
    Refusal,
    number
  >;

/** What the backend did, for the figures. */
export type DeploymentStats = {
  schedules: number;
  delayedSchedules: number;
  maxStartDelayMs: number;
  gcSweeps: number;
  gcDeleted: number;
  /** Writes or schedules refused by a limit, by limit. */
  limitErrors: Record<"documentSize" | "fields" | "nesting" | "arrayLength" | "scheduled", number>;
  /** Top-level transactions (of any component) and failed scheduled functions that met a limit,
   * by the first limit each met. */
  refusals: Record<Refusal, number>;
  /** Top-level transactions of the pool, and those that rolled back (any reason). */
  poolTransactions: number;
  poolFailures: number;
};

/** A pool transaction that rolled back. */
export type FailedTransaction = { fn: string; at: number; error?: string; injected: boolean };

/** A small seeded generator (mulberry32): `stream` separates independent sequences of one seed. */
export function prng(seed: number, stream = 0): () => number {
  let a = (seed ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh app with the pool (as `setup`), on a deployment-like backend. */
export async function setupDeployment(
  options: DeploymentOptions & { register?: RegisterOptions; limits?: TransactionLimits },
): Promise<{ t: T; deployment: Deployment }> {
  const t = setup(options.register, options.limits);
  const deployment = await deploymentLike(t, options);
  return { t, deployment };
}

/**
 * Makes `t`'s backend deployment-like for the rest of the test: call right after `setup()` (its
 * syscall wrapper is a spy, restored with the test's others). The previous deployment stops.
 */
export async function deploymentLike(t: T, options: DeploymentOptions): Promise<Deployment> {
  installHooks();
  for (const action of Object.values(options.actions ?? {})) hookAction(action as HookedAction);
  active?.stop();
  const deployment = new Deployment(t, options);
  active = deployment;
  interceptAsyncSyscalls((op, jsonArgs, next) => deployment.syscall(op, jsonArgs, next));
  // One call into the backend lets the hooks meet its store (and its transaction manager).
  await t.run(async () => {});
  if (!deployment.adopted) throw new Error("deployment.ts: convex-test's store was not seen");
  return deployment;
}

type AsyncSyscall = (op: string, jsonArgs: string) => Promise<string>;
type Handler = (ctx: any, args: unknown) => Promise<unknown>;
/** A registered action as convex-test calls it (its `_handler`, looked up at each call). */
type HookedAction = { _handler: Handler };

/** What the backend knows of one top-level transaction (queries included). */
type Tx = {
  /** Numbers the backend's top-level transactions, in order of starting. */
  id: number;
  fn: string;
  component: string;
  type: string;
  /** The scheduled function it runs in, if the scheduler started its request. */
  scheduledId: string | null;
  /** Run by the scheduler or by an action (not by a test's own call). */
  byRuntime: boolean;
  dbCalls: number;
  /** A fault fired in it: every later call throws, and so does its commit. */
  doomed?: Error;
  /** A `passThrows` fault waits for this many database calls. */
  stageAt?: number;
  stageFault?: Fault;
  lastError?: string;
  /** The error the function threw, if it threw (its message). */
  thrown?: string;
  /** The first limit it met (counted once, when it ends). */
  refusedBy?: Refusal;
};

/** Database calls of a transaction (reads, writes, schedules): a stage fault counts them. */
const DB_OPS = new Set([
  "1.0/get",
  "1.0/queryStreamNext",
  "1.0/queryPage",
  "1.0/insert",
  "1.0/shallowMerge",
  "1.0/replace",
  "1.0/remove",
  "1.0/schedule",
  "1.0/cancel_job",
]);
const FINISHED = new Set(["success", "failed", "canceled"]);

// convex-test's objects, found as it enters them (see installHooks).
let active: Deployment | undefined;
/** convex-test's execution-context storage and request-metadata storage. */
let execStorage: AsyncLocalStorage<any> | undefined;
let requestStorage: AsyncLocalStorage<any> | undefined;
const txs = new WeakMap<object, Tx>();
let nextTxId = 1;
let installed = false;
/** Actions whose `_handler` runs through the active deployment (`hookAction`). */
const hooked = new WeakSet<object>();

/** Routes an action's runs through the active deployment (`Deployment.actionRun`), once per
 * worker: the deployment decides, per run, whether it is one of its actions. */
function hookAction(action: HookedAction) {
  if (hooked.has(action)) return;
  hooked.add(action);
  const handler = action._handler;
  action._handler = (ctx, args) => {
    const name = active?.actionName(action);
    return name === undefined ? handler(ctx, args) : active!.actionRun(name, handler, ctx, args);
  };
}

/**
 * Hooks AsyncLocalStorage.run (once per worker): convex-test enters its per-backend global, each
 * function's execution context and each request's metadata through it, which is how the active
 * deployment finds the transaction manager and learns, for each transaction, which function runs
 * it and whether the scheduler or an action does.
 */
function installHooks() {
  if (installed) return;
  installed = true;
  // The worker action, wherever the scheduler finds it (the old path re-exports the same object),
  // and the action runner: both run jobs' actions, and either may die at any await.
  hookAction(runAction as unknown as HookedAction);
  hookAction(runnerAction as unknown as HookedAction);
  const proto = AsyncLocalStorage.prototype as any;
  const run = proto.run;
  proto.run = function (this: AsyncLocalStorage<any>, store: any, ...rest: unknown[]) {
    if (active !== undefined && typeof store === "object" && store !== null) {
      if (isExecutionContext(store)) {
        // eslint-disable-next-line @typescript-eslint/no-this-alias
        execStorage = this;
        const tx = active.enterFunction(store, this.getStore());
        const result = run.call(this, store, ...rest);
        // The error the function threw (as Convex records it for a scheduled function), seen
        // before the backend rolls the transaction back; the promise itself is returned as is.
        if (tx !== undefined && result instanceof Promise) {
          result.then(undefined, (error: unknown) => {
            tx.thrown ??= messageOf(error);
          });
        }
        return result;
      } else if ("scheduledFunctionId" in store && "requestId" in store) {
        // eslint-disable-next-line @typescript-eslint/no-this-alias
        requestStorage = this;
      } else if (isConvexGlobal(store)) {
        active.adopt(store);
      }
    }
    return run.call(this, store, ...rest);
  };
}

/** A scheduled function's start delay from two uniform draws `r` (which band) and `u` (where in
 * it): half on time; of the rest most within 100 ms, some within a second, a few later; never
 * past `maxMs`. */
export function startDelayOf(r: number, u: number, maxMs: number): number {
  if (maxMs <= 0) return 0;
  const ms = r < 0.5 ? 0 : r < 0.85 ? u * 100 : r < 0.98 ? 100 + u * 900 : 1_000 + u * 4_000;
  return Math.min(maxMs, Math.floor(ms));
}

/** The mean of startDelayOf over its draws (a midpoint sum over a fine grid: the bands are
 * piecewise linear, so this is exact to well under a millisecond). */
export function meanStartDelayMs(maxMs: number): number {
  const steps = 1_000;
  // Each band's weight, and a draw of `r` inside it.
  const bands: Array<[weight: number, r: number]> = [
    [0.5, 0.25],
    [0.35, 0.675],
    [0.13, 0.915],
    [0.02, 0.99],
  ];
  let mean = 0;
  for (const [weight, r] of bands) {
    let sum = 0;
    for (let i = 0; i < steps; i++) sum += startDelayOf(r, (i + 0.5) / steps, maxMs);
    mean += (weight * sum) / steps;
  }
  return mean;
}

export class Deployment {
  readonly seed: number;
  readonly component: string;
  readonly maxStartDelayMs: number;
  readonly gcAfterMs: number | false;
  readonly stats: DeploymentStats = {
    schedules: 0,
    delayedSchedules: 0,
    maxStartDelayMs: 0,
    gcSweeps: 0,
    gcDeleted: 0,
    limitErrors: { documentSize: 0, fields: 0, nesting: 0, arrayLength: 0, scheduled: 0 },
    refusals: noRefusals(),
    poolTransactions: 0,
    poolFailures: 0,
  };
  /** Faults that fired, in order. */
  readonly fired: FiredFault[] = [];
  /** The pool's transactions that rolled back, in order (the last 200). */
  readonly failures: FailedTransaction[] = [];
  /** The errors of failed scheduled functions, by id, until their `_scheduled_functions` row
   * records them (convex-test keeps none; Convex keeps the message). */
  private readonly scheduledErrors = new Map<string, string>();
  private readonly t: T;
  private readonly delays: () => number;
  private readonly gcDraws: () => number;
  /** The app actions a fault may hit (DeploymentOptions `actions`), with their names. */
  private readonly appActions = new Map<unknown, string>();
  private global: any;
  private armed: Fault | undefined;
  private stopped = false;
  /** Calls made so far by each worker action, by its scheduled function. */
  private readonly actionCalls = new Map<string, number>();
  /** Dead actions Convex has yet to mark failed. */
  private notices: Array<{ id: string; at: number }> = [];
  private nextGcAt: number;
  /** `documents(table)`'s rows, by table, in creation order, with each row's place: kept up to
   * date at each commit (`followCommit`). */
  private readonly documentsRead = new Map<string, { rows: any[]; at: Map<string, number> }>();
  /** While a `commitFailsFor` fault's window is open: when it closes. */
  private failingUntil: number | undefined;
  /** Since the last one that committed work: the first loop pass that failed, or the last one a
   * fault failed if later. */
  private stalled: { since: number; error?: string } | undefined;
  /** When a loop pass last committed work. */
  lastPassAt: number | undefined;
  /** Hears every top-level transaction end, committed or rolled back (e.g. to keep the log lines
   * of a transaction only if it committed: see `currentTransaction`). */
  onTransactionEnd: ((id: number, committed: boolean) => void) | undefined;

  constructor(t: T, options: DeploymentOptions) {
    this.t = t;
    this.seed = options.seed;
    this.component = options.component ?? "workpool";
    this.maxStartDelayMs = options.maxStartDelayMs ?? 3_000;
    this.gcAfterMs = options.gcAfterMs ?? REPORT_LOST_AFTER_MS;
    this.delays = prng(this.seed, 1);
    this.gcDraws = prng(this.seed, 2);
    this.nextGcAt = Date.now() + (this.gcAfterMs === false ? 0 : this.gcAfterMs);
    for (const [name, action] of Object.entries(options.actions ?? {})) {
      this.appActions.set(action, name);
    }
  }

  get adopted(): boolean {
    return this.global !== undefined;
  }

  /** Holds `fault` until a transaction or action it fits comes (replacing one still held). */
  arm(fault: Fault): void {
    this.armed = fault;
  }

  /** Drops the fault armed, if any (a `commitFailsFor` window closes now). */
  disarm(): void {
    this.armed = undefined;
    this.failingUntil = undefined;
  }

  /** The fault armed and not yet fired, if any. */
  get pending(): Fault | undefined {
    return this.armed;
  }

  /** Since when the loop has had no pass commit after one failed (undefined: it has). Each pass
   * a fault fails is a death of its own, and the watchdog's promise (a dead loop runs again within
   * its interval) runs from each: a fault that fails the pass the watchdog restarted starts the
   * window again. A pass that fails on its own (no fault) never does, so a loop failing by itself
   * is still seen. */
  get stall(): { since: number; error?: string } | undefined {
    return this.stalled;
  }

  /** The number of the top-level transaction running now, if any (a log line written now is
   * that transaction's, and is undone with it). */
  get currentTransaction(): number | undefined {
    return this.stopped ? undefined : this.currentTx()?.id;
  }

  /**
   * The committed documents of one of the pool's tables, in creation order, read directly from
   * convex-test's store: a test's view of the data that no transaction limit bounds (a model
   * reading every job of a 1,500-job program, each with a large error, would exceed 16 MiB).
   */
  documents(table: string): any[] {
    // Kept from read to read and updated with each commit's writes: the model reads them at every
    // step of the clock, and a walk of every document of the store (a regex per id) cost half of
    // a long program's time (seed 2026120201 program 1546: 231 s, 92 s with ids by table).
    let read = this.documentsRead.get(table);
    if (read === undefined) {
      const rows = this.committedOf(table).sort((a, b) => a._creationTime - b._creationTime);
      read = { rows, at: new Map(rows.map((row, i) => [row._id, i])) };
      this.documentsRead.set(table, read);
    }
    return read.rows.slice();
  }

  /** The ids a top-level commit of the pool's component is about to write (undefined when its
   * writes cannot be told: every table's rows are read afresh after it). */
  private writesOfCommit(): string[] | undefined {
    const writes = this.db()._writes;
    return Array.isArray(writes) && writes.length === 1 ? Object.keys(writes[0]) : undefined;
  }

  /** After a commit that wrote `ids`: each row read is replaced by what is stored now, and a new
   * one added in creation order (a table with a row deleted, or added out of order, is read
   * afresh at its next read). */
  private followCommit(ids: string[] | undefined): void {
    if (ids === undefined) return this.documentsRead.clear();
    const documents = this.db()._documents;
    for (const id of ids) {
      const table = tableOfId(id);
      const read = table === null ? undefined : this.documentsRead.get(table);
      if (read === undefined) continue;
      const now = documents[id];
      const at = read.at.get(id);
      const last = read.rows[read.rows.length - 1];
      if (now !== undefined && at !== undefined) read.rows[at] = now;
      else if (
        now !== undefined &&
        (last === undefined || last._creationTime <= now._creationTime)
      ) {
        read.at.set(id, read.rows.length);
        read.rows.push(now);
      } else if (now !== undefined || at !== undefined) this.documentsRead.delete(table!);
    }
  }

  /** The committed documents of `table`, in no set order: from fastTables' ids by table where
   * it follows this store's commits (chaos programs and the bench install it), else by a walk of
   * the store. */
  private committedOf(table: string): any[] {
    const db = this.db();
    const ids = committedIdsOf(db, table);
    if (ids !== undefined) return [...ids].map((id) => db._documents[id]);
    const pattern = new RegExp(`^\\d+${table}$`);
    return Object.entries<any>(db._documents)
      .filter(([id]) => pattern.test(id))
      .map(([, doc]) => doc);
  }

  /** Stops the backend's own behavior (the hooks pass everything through from now on). */
  stop(): void {
    this.stopped = true;
    if (active === this) active = undefined;
  }

  /**
   * The backend's own events that do not ride on a call: dead actions marked failed, and the
   * garbage collection of `_scheduled_functions`. Call between steps of the clock (`run` does).
   */
  async tick(): Promise<void> {
    if (this.stopped) return;
    const now = Date.now();
    const due = this.notices.filter((n) => n.at <= now);
    if (due.length > 0) {
      this.notices = this.notices.filter((n) => n.at > now);
      await this.inComponent(async (asyncSyscall) => {
        for (const { id } of due) {
          const row = this.db().get("_scheduled_functions", id);
          if (row === null || row.state.kind !== "inProgress") continue;
          const value = { state: { kind: "failed", error: "Transient error: the action died" } };
          await asyncSyscall(
            "1.0/shallowMerge",
            JSON.stringify({ table: "_scheduled_functions", id, value }),
          );
        }
      });
    }
    if (this.gcAfterMs !== false && now >= this.nextGcAt) {
      this.nextGcAt = now + 1_000 + Math.floor(this.gcDraws() * 29_000);
      await this.collectGarbage(now - this.gcAfterMs);
    }
  }

  /** Runs the clock for `ms` in steps of `stepMs`, with `tick()` after each step. */
  async run(ms: number, stepMs = 50): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      await vi.advanceTimersByTimeAsync(Math.min(stepMs, end - Date.now()));
      await realTick();
      await this.tick();
    }
  }

  /** Deletes about half of the finished `_scheduled_functions` rows finished before `before`. */
  private async collectGarbage(before: number): Promise<void> {
    const ids: string[] = [];
    for (const row of this.committedOf("_scheduled_functions")) {
      const id: string = row._id;
      if (!FINISHED.has(row.state?.kind) || row.completedTime === undefined) continue;
      if (row.completedTime > before || this.gcDraws() < 0.5) continue;
      ids.push(id);
      if (ids.length >= 2_000) break;
    }
    this.stats.gcSweeps++;
    if (ids.length === 0) return;
    await this.inComponent(async (asyncSyscall) => {
      for (const id of ids) {
        await asyncSyscall("1.0/remove", JSON.stringify({ table: "_scheduled_functions", id }));
      }
    });
    this.stats.gcDeleted += ids.length;
  }

  /** Runs `fn` in a transaction of the pool's component (the backend's own bookkeeping). */
  private async inComponent(fn: (asyncSyscall: AsyncSyscall) => Promise<void>): Promise<void> {
    await (this.t as any).runInComponent(this.component, async () => {
      const convex = (globalThis as any).Convex;
      await fn((op, jsonArgs) => convex.asyncSyscall(op, jsonArgs));
    });
  }

  /** The pool component's database (convex-test's), or another component's. */
  private db(component = this.component): any {
    return this.global.components[component].db;
  }

  // ---- hooks ----

  /** convex-test's global of this backend: wraps its transaction manager's commit and rollback. */
  adopt(global: any): void {
    if (this.global !== undefined || this.stopped) return;
    this.global = global;
    const tm = global.transactionManager;
    const commit = tm.commit;
    const rollback = tm.rollback;
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    const deployment = this;
    tm.commit = function (isNested: boolean) {
      if (isNested) return commit.call(this, isNested);
      // A stopped backend's tables still follow its commits (documents() may be read after).
      const acting = !deployment.stopped;
      const writes = deployment.writesOfCommit();
      const tracker = this._metricsTracker;
      const tx = tracker ? txs.get(tracker) : undefined;
      const wrote = (tracker?._layers?.[0]?.metrics.documentsWritten ?? 0) > 0;
      if (acting) deployment.beforeCommit(tx, wrote);
      const result = commit.call(this, isNested);
      deployment.followCommit(writes);
      if (acting) deployment.ended(tx, true, wrote);
      return result;
    };
    tm.rollback = function (isNested: boolean) {
      if (!isNested && !deployment.stopped) {
        const tracker = this._metricsTracker;
        deployment.ended(tracker ? txs.get(tracker) : undefined, false, false);
      }
      return rollback.call(this, isNested);
    };
  }

  /** A function enters its execution context: labels a new top-level transaction with it. */
  enterFunction(store: any, parent: any): Tx | undefined {
    if (this.stopped || this.global === undefined) return undefined;
    if (store.udfType !== "mutation" && store.udfType !== "query") return undefined;
    const tracker = this.global.transactionManager.getMetricsTracker();
    if (!tracker || txs.has(tracker)) return undefined;
    const scheduledId = requestStorage?.getStore()?.scheduledFunctionId ?? null;
    const tx: Tx = {
      id: nextTxId++,
      fn: store.udfPath,
      component: store.componentPath,
      type: store.udfType,
      scheduledId,
      byRuntime: scheduledId !== null || parent?.udfType === "action",
      dbCalls: 0,
    };
    txs.set(tracker, tx);
    const fault = this.armed;
    if (fault?.kind === "passThrows" && this.isPool(tx, "main") && tx.byRuntime) {
      this.armed = undefined;
      tx.stageAt = fault.stage;
      tx.stageFault = fault;
    }
    return tx;
  }

  private isPool(tx: Tx, fn: PoolFunction): boolean {
    return tx.component === this.component && POOL_FUNCTIONS[fn].test(tx.fn);
  }

  private currentTx(): Tx | undefined {
    const tracker = this.global?.transactionManager.getMetricsTracker();
    return tracker ? txs.get(tracker) : undefined;
  }

  /** Before a top-level commit: a doomed or chosen transaction fails here; finished scheduled
   * functions get their completion time. */
  private beforeCommit(tx: Tx | undefined, wrote: boolean): void {
    if (tx === undefined) return;
    if (tx.doomed) throw tx.doomed;
    if (tx.stageFault !== undefined) {
      // The pass made fewer calls than the stage: it fails at its end.
      throw this.fire(tx, tx.stageFault, "at commit");
    }
    const fault = this.armed;
    if (fault?.kind === "commitFails" && wrote && tx.byRuntime && this.isPool(tx, fault.fn)) {
      this.armed = undefined;
      throw this.fire(tx, fault, "at commit");
    }
    if (fault?.kind === "commitFailsFor" && wrote && tx.byRuntime && this.isPool(tx, fault.fn)) {
      // The first failure fires the fault (and is recorded); the window's others fail alike.
      this.failingUntil ??= Date.now() + fault.ms;
      if (Date.now() < this.failingUntil) {
        const fired = this.fired[this.fired.length - 1];
        if (fired?.fault === fault) throw this.doom(tx, fault, "at commit");
        throw this.fire(tx, fault, "at commit");
      }
      this.armed = undefined;
      this.failingUntil = undefined;
    }
    const now = Date.now();
    for (const component of Object.values<any>(this.global.components)) {
      const writes = component.db._writes[component.db._writes.length - 1];
      if (writes === undefined) continue;
      for (const [id, row] of Object.entries<any>(writes)) {
        if (row === null || !id.endsWith("_scheduled_functions")) continue;
        if (FINISHED.has(row.state?.kind) && row.completedTime === undefined) {
          writes[id] = { ...row, completedTime: now };
        }
        const error = this.scheduledErrors.get(id);
        if (row.state?.kind === "failed" && row.state.error === undefined && error !== undefined) {
          this.scheduledErrors.delete(id);
          writes[id] = { ...writes[id], state: { ...row.state, error } };
        }
      }
    }
  }

  /** Records the fault on `tx` (doomed from now on) and returns the error to throw. */
  private fire(tx: Tx, fault: Fault, where: string): Error {
    const error = this.doom(tx, fault, where);
    this.fired.push({
      fault,
      at: Date.now(),
      fn: tx.fn,
      // A deliverer that fails changes no job's outcome (its callbacks are delivered again).
      workIds: fault.kind === "commitFailsFor" ? [] : this.workIdsOf(tx.scheduledId),
      error: error.message,
    });
    return error;
  }

  /** Dooms `tx` (every later call, and its commit, throw) with the fault's error. */
  private doom(tx: Tx, fault: Fault, where: string): Error {
    const error = new Error(
      fault.kind === "passThrows"
        ? `injected (deployment.ts): the loop pass failed ${where} (stage ${fault.stage}): ` +
            `Transient error while executing the mutation`
        : `injected (deployment.ts): ${tx.fn} failed ${where}: Documents read from or written ` +
            `to a table changed while this mutation was being run and on every subsequent retry`,
    );
    tx.doomed = error;
    tx.stageFault = undefined;
    tx.stageAt = undefined;
    return error;
  }

  /** A top-level transaction ended: the pool's failures and the loop's progress are recorded. */
  private ended(tx: Tx | undefined, committed: boolean, wrote: boolean): void {
    if (tx !== undefined) this.onTransactionEnd?.(tx.id, committed);
    if (tx?.refusedBy !== undefined) {
      this.stats.refusals[tx.refusedBy]++;
      if (process.env.CHAOS_TRACE) {
        process.stdout.write(`refused: ${tx.fn} by ${tx.refusedBy}: ${tx.lastError}\n`);
      }
    }
    if (tx === undefined || tx.type !== "mutation" || tx.component !== this.component) return;
    if (tx.fn === "custom" || tx.fn === "inline") return;
    this.stats.poolTransactions++;
    const isMain = POOL_FUNCTIONS.main.test(tx.fn);
    if (committed) {
      if (isMain && wrote) {
        this.stalled = undefined;
        this.lastPassAt = Date.now();
      }
      return;
    }
    this.stats.poolFailures++;
    const error = tx.doomed?.message ?? tx.lastError;
    // The scheduler's record of a failed scheduled function carries its error, as Convex's does.
    const recorded = tx.thrown ?? error;
    if (tx.scheduledId !== null && recorded !== undefined) {
      this.scheduledErrors.set(tx.scheduledId, recorded);
    }
    this.failures.push({ fn: tx.fn, at: Date.now(), error, injected: tx.doomed !== undefined });
    if (this.failures.length > 200) this.failures.shift();
    if (isMain) {
      const death = { since: Date.now(), error };
      this.stalled = tx.doomed !== undefined ? death : (this.stalled ?? death);
    }
  }

  /** A scheduled function's jobs, from its arguments (a worker's, a runner's, or a report's). */
  private workIdsOf(scheduledId: string | null): string[] {
    if (scheduledId === null) return [];
    const row = this.db().get("_scheduled_functions", scheduledId);
    const args = row?.args?.[0];
    if (Array.isArray(args?.jobs)) return args.jobs.map((job: { workId: string }) => job.workId);
    if (Array.isArray(args?.outcomes)) {
      return args.outcomes.map((outcome: { workId: string }) => outcome.workId);
    }
    const one = args?.workId ?? args?.report?.workId;
    return one === undefined ? [] : [one];
  }

  /** Notes a scheduled function's failure as convex-test logs it (its message, for the record). */
  noteScheduledError(error: unknown): void {
    // A value Convex refuses at a function's boundary (a field name) fails the function outside
    // any database call: counted here. (A limit met in a database call was counted with its
    // transaction.)
    if (refusalOf(messageOf(error)) === "fieldName") this.stats.refusals.fieldName++;
    const last = this.failures[this.failures.length - 1];
    if (last !== undefined && last.error === undefined) last.error = messageOf(error);
    if (this.stalled !== undefined && this.stalled.error === undefined) {
      this.stalled.error = messageOf(error);
    }
  }

  // ---- syscalls ----

  async syscall(op: string, jsonArgs: string, next: AsyncSyscall): Promise<string> {
    if (this.stopped || this.global === undefined) return await next(op, jsonArgs);
    if (op === "1.0/actions/schedule") return await next(op, this.delayed(jsonArgs));
    if (!DB_OPS.has(op)) return await next(op, jsonArgs);
    const tx = this.currentTx();
    if (tx !== undefined) {
      if (tx.doomed) throw tx.doomed;
      tx.dbCalls++;
      if (tx.stageAt !== undefined && tx.dbCalls >= tx.stageAt) {
        throw this.fire(tx, tx.stageFault!, `at its database call ${tx.dbCalls}`);
      }
    }
    try {
      switch (op) {
        case "1.0/insert":
        case "1.0/replace":
        case "1.0/shallowMerge":
          this.checkWrite(op, JSON.parse(jsonArgs));
          break;
        case "1.0/schedule":
          return await next(op, await this.schedule(jsonArgs, next));
      }
      return await next(op, jsonArgs);
    } catch (error) {
      if (tx !== undefined) {
        tx.lastError ??= messageOf(error);
        tx.refusedBy ??= refusalOf(messageOf(error));
      }
      throw error;
    }
  }

  /** Counts a mutation's schedule against Convex's limit and delays its start. */
  private async schedule(jsonArgs: string, next: AsyncSyscall): Promise<string> {
    const metrics = JSON.parse(await next("1.0/getTransactionMetrics", "{}"));
    if (metrics.functionsScheduled.used >= SCHEDULED_FUNCTIONS_LIMIT) {
      this.stats.limitErrors.scheduled++;
      throw new Error(
        `Scheduled too many functions in a single function execution (limit: ` +
          `${SCHEDULED_FUNCTIONS_LIMIT}). This is a Convex limit: ` +
          `https://docs.convex.dev/production/state/limits`,
      );
    }
    return this.delayed(jsonArgs);
  }

  /** The schedule's arguments with its start (`ts`, in seconds) moved by a drawn delay. */
  private delayed(jsonArgs: string): string {
    this.stats.schedules++;
    const delayMs = this.startDelayMs();
    if (delayMs === 0) return jsonArgs;
    this.stats.delayedSchedules++;
    this.stats.maxStartDelayMs = Math.max(this.stats.maxStartDelayMs, delayMs);
    const args = JSON.parse(jsonArgs);
    return JSON.stringify({ ...args, ts: args.ts + delayMs / 1000 });
  }

  /** Half start on time; of the rest most within 100 ms, some within a second, a few later. */
  private startDelayMs(): number {
    // (No draws when every function starts on time: the backend's other draws stay as they were.)
    if (this.maxStartDelayMs <= 0) return 0;
    const r = this.delays();
    return startDelayOf(r, this.delays(), this.maxStartDelayMs);
  }

  /** How late a scheduled function starts on average here (startDelayOf's mean): a loop held by
   * a rate limit is woken by one scheduled pass per period, so each period lasts this much longer
   * on average than the limit's own. */
  get meanStartDelayMs(): number {
    return meanStartDelayMs(this.maxStartDelayMs);
  }

  /** The name a fault knows an action by ("worker", or its name in `actions`), if it is one of
   * this deployment's. */
  actionName(action: unknown): string | undefined {
    if (action === runAction || action === runnerAction) return "worker";
    return this.appActions.get(action);
  }

  /**
   * Runs one worker action or app action `name` (its `_handler`, patched by `hookAction`):
   * convex-test hands an action `runQuery`, `runMutation` and `runAction` of its own, not
   * syscalls, so the action's calls are wrapped here; the armed `actionDies` fault makes the action
   * die at the call it names. A dead action's later calls never return, nor do calls made once
   * its handler ended (promises it left behind): Convex ends an action with its handler, so
   * neither can reach the pool. (Code that runs without calling out, as an executor's tasks do,
   * goes on until it next calls.)
   */
  async actionRun(name: string, handler: Handler, ctx: any, args: unknown): Promise<unknown> {
    const id: string | undefined = requestStorage?.getStore()?.scheduledFunctionId ?? undefined;
    if (this.stopped || id === undefined) return await handler(ctx, args);
    let calls = 0;
    let over = false;
    const call =
      <A extends unknown[]>(callName: string, fn: (...a: A) => Promise<unknown>) =>
      async (...a: A): Promise<unknown> => {
        if (over && !this.stopped) return await new Promise<never>(() => {});
        calls++;
        const fault = this.armed;
        if (
          this.stopped ||
          fault?.kind !== "actionDies" ||
          calls !== fault.at ||
          (fault.action !== undefined && fault.action !== name)
        )
          return await fn(...a);
        this.armed = undefined;
        const when = fault.after ? "after" : "before";
        const what = name === "worker" ? "the worker action" : `the action ${name}`;
        const error = `injected (deployment.ts): ${what} died at its call ${calls} (${callName}, ${when} it took effect)`;
        const executorId = (args as { executorId?: unknown } | undefined)?.executorId;
        this.fired.push({
          fault,
          at: Date.now(),
          fn: this.scheduledName(id),
          workIds: this.workIdsOf(id),
          ...(typeof executorId === "string" ? { executorId } : {}),
          error,
        });
        if (fault.after) await fn(...a).catch(() => undefined);
        if (fault.mode === "throw") throw new Error(`Transient error in ${callName}: ${error}`);
        over = true;
        this.notices.push({ id, at: Date.now() + fault.noticedAfterMs });
        return await new Promise<never>(() => {});
      };
    const scheduler = ctx.scheduler;
    const wrapped = {
      ...ctx,
      runQuery: call("runQuery", ctx.runQuery),
      runMutation: call("runMutation", ctx.runMutation),
      runAction: call("runAction", ctx.runAction),
      scheduler: {
        ...scheduler,
        runAfter: call("scheduler.runAfter", (...a: any[]) => scheduler.runAfter(...a)),
        runAt: call("scheduler.runAt", (...a: any[]) => scheduler.runAt(...a)),
      },
    };
    try {
      return await handler(wrapped, args);
    } finally {
      over = true;
    }
  }

  /** A scheduled function's name (its path), as the scheduler stored it. */
  private scheduledName(scheduledId: string): string {
    return String(this.db().get("_scheduled_functions", scheduledId)?.name ?? "?");
  }

  /** Refuses a write that breaks Convex's document limits, before it is made. */
  private checkWrite(op: string, args: { table: string; id?: string; value: any }): void {
    let doc: Record<string, unknown>;
    const component = execStorage?.getStore()?.componentPath ?? "";
    if (op === "1.0/insert") {
      doc = { ...fieldsOf(args.value), _id: "x".repeat(32), _creationTime: 0 };
    } else {
      const old = this.db(component).get(args.table, args.id) ?? {};
      doc = op === "1.0/replace" ? { _id: old._id, _creationTime: 0 } : { ...old };
      for (const [field, value] of Object.entries(fieldsOf(args.value, true))) {
        if (value === undefined) delete doc[field];
        else doc[field] = value;
      }
    }
    const table = args.table ?? (args.id ? tableOf(args.id) : "?");
    const size = getConvexSize(doc as any);
    if (size > DOCUMENT_SIZE_LIMIT) {
      this.stats.limitErrors.documentSize++;
      throw new Error(
        `Value is too large (${formatBytes(size)} > maximum size 1 MiB): a document of table ` +
          `"${table}". This is a Convex limit: https://docs.convex.dev/production/state/limits`,
      );
    }
    const shape = shapeError(doc, 0);
    if (shape !== undefined) {
      this.stats.limitErrors[shape.limit]++;
      throw new Error(`${shape.message} (a document of table "${table}")`);
    }
  }
}

/** The first of Convex's limits on a value's shape that `value` breaks, if any (`depth`: how many
 * objects and arrays hold it; the document's own fields are at depth 0). */
function shapeError(
  value: unknown,
  depth: number,
): { limit: "fields" | "nesting" | "arrayLength"; message: string } | undefined {
  if (typeof value !== "object" || value === null) return;
  const isArray = Array.isArray(value);
  if (!isArray && !isPlain(value)) return; // bytes, a commit timestamp: no nesting
  if (depth > NESTING_LIMIT) {
    return {
      limit: "nesting",
      message: `Value is too nested (nested ${depth} levels deep > maximum nesting ${NESTING_LIMIT})`,
    };
  }
  const children = isArray ? (value as unknown[]) : Object.values(value);
  if (isArray && children.length > ARRAY_ELEMENTS_LIMIT) {
    return {
      limit: "arrayLength",
      message: `Array length is too long (${children.length} > maximum length ${ARRAY_ELEMENTS_LIMIT})`,
    };
  }
  if (!isArray && children.length > OBJECT_FIELDS_LIMIT) {
    return {
      limit: "fields",
      message: `Object has too many fields (${children.length} > maximum number ${OBJECT_FIELDS_LIMIT})`,
    };
  }
  for (const child of children) {
    const error = shapeError(child, depth + 1);
    if (error) return error;
  }
  return;
}

/** A written value's fields as Convex values; with `keepUnset`, a field the write removes
 * (`{ $undefined: null }`) is kept as undefined. */
function fieldsOf(json: Record<string, unknown>, keepUnset = false): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(json ?? {})) {
    const unset = typeof value === "object" && value !== null && "$undefined" in value;
    if (unset) {
      if (keepUnset) fields[field] = undefined;
    } else fields[field] = jsonToConvex(value as any);
  }
  return fields;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || proto?.constructor?.name === "Object";
}

function tableOf(id: string): string {
  return id.replace(/^\d+/, "");
}

function formatBytes(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(2)} MiB` : `${(n / 1024).toFixed(1)} KiB`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
