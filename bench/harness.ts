/**
 * Runs one scenario on one pool ("ours" or "peer") on a fresh convex-test backend with a virtual
 * clock, and measures it: function calls, documents and bytes (from convex-test, see instrument.ts),
 * start lag, makespan, utilization and concurrency (from what the jobs recorded), onComplete
 * calls per result kind (from the rows onComplete wrote), for keyed jobs whether each key kept
 * its limit and its order (from what the jobs recorded), under a rate limit whether the pool kept it
 * (from when the pool logged each start), and in a priority mix how soon high-priority jobs started
 * (from what the jobs recorded; see checks.ts), in the fair-share scenarios each tenant's waits and
 * whether weighted keys got their shares of the starts (see fairChecks.ts), and, in the scenarios
 * that ask for it, the potential
 * OCC conflicts between its transactions (from what each read and wrote; see conflicts.ts); and the
 * time its actions held, under a simulated limit of actions at once when the scenario sets one (see
 * actionSlots.ts).
 */
/// <reference types="vite/client" />
import { convexTest } from "convex-test";
import { vi } from "vitest";
import peerTest from "@convex-dev/workpool/test";
import batchWorkerTest from "@convex-dev/batch-worker/test";
import oursTest from "../src/test.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import type { RateLimit } from "../src/client/index.js";
import type { Fairness } from "../src/component/model/validators.js";
import { api } from "./app/_generated/api.js";
import { probe, type Probe } from "./app/probe.js";
import schema from "./app/schema.js";
import { installInstrumentation, resetCounters, type Counters } from "./instrument.js";
import { installFastTables } from "./fastTables.js";
import { installIndexedRanges } from "./indexedRanges.js";
import { installWritesByTable, resetWritesByTable, saveWritesByTable } from "./writesByTable.js";
import {
  installActionSlots,
  startActionSlots,
  stopActionSlots,
  type ActionStats,
} from "./actionSlots.js";
import { priorityChecks, rateChecks, type PriorityChecks, type RateChecks } from "./checks.js";
import { shareChecks, tenantWaits, type ShareChecks, type TenantWaits } from "./fairChecks.js";
import { startVirtualClock, step } from "../test/virtualClock.js";
import {
  potentialConflictsByWindow,
  startRecording,
  stopRecording,
  type PairCount,
  type Transaction,
} from "./conflicts.js";

export type SideName = "ours" | "peer";

export const appModules = import.meta.glob("./app/**/*.ts");

export type Scenario = {
  id: string;
  title: string;
  /** A few words for the summary table of docs/BENCHMARKS.md (default: the title). */
  short?: string;
  /** What the workload is and why it matters to a user, for docs/BENCHMARKS.md. */
  about?: string;
  kind: "action" | "mutation";
  jobs: number;
  maxParallelism: number;
  /** How long each action attempt works (virtual ms). */
  ms: number;
  /** The first `failTimes` attempts of each job throw. */
  failTimes: number;
  retry?: { maxAttempts: number; initialBackoffMs: number; base: number };
  runAfter?: number;
  /** Call cancelAll this long (virtual ms) after enqueueing. */
  cancelAllAfter?: number;
  /** Enqueue one job every this many ms instead of all at once. */
  trickleEveryMs?: number;
  /** The result kind every onComplete must get. */
  expectKind: "success" | "failed" | "canceled";
  /** Virtual time allowed for the whole scenario. */
  deadlineMs: number;
  /** The sides it runs on (default both): only ours has keys. */
  sides?: SideName[];
  /** Our pool's keyParallelism option (only ours has it). */
  keyParallelism?: number;
  /** Jobs get the pool's `key` option: `count` keys, each job's chosen by `layout`. */
  keys?: { count: number; layout: KeyLayout };
  /** Our pool's rateLimit option (only ours has it). The run logs at "DEBUG" to record when the
   * pool started each attempt (`RateChecks`). */
  rateLimit?: RateLimit;
  /** A priority mix (only ours has priorities): the first `low` jobs are enqueued at once with
   * priority "low", then the others one every `highEveryMs`, from `highEveryMs` on, with priority
   * "high". */
  priorityMix?: { low: number; highEveryMs: number };
  /** The id of the scenario this one is compared with, ours against ours, instead of the peer. */
  baseline?: string;
  /** Record every transaction and count potential OCC conflicts between them (conflicts.ts). */
  conflicts?: boolean;
  /** The deployment's concurrent-action limit, simulated (actionSlots.ts): at most this many
   * actions the scheduler started run at once, apps' and pools' alike; the rest wait their turn. */
  actionLimit?: number;
  /** How the app enqueues (default: 100 jobs per app mutation, one client call each):
   * `perMutation` jobs per app mutation, and with `batch` all of them in one batch call
   * (enqueueActionBatch; enqueueTaskBatch for tasks). */
  enqueue?: { perMutation: number; batch: boolean };
  /** The jobs are `io` tasks of the bench app's executor (bench/app/tasks.ts), not actions, and
   * `concurrency` is that executor's (its EXECUTOR_CONCURRENCY, recorded for the report): ours only. */
  tasks?: { concurrency: number };
  /** Our pool's `fairness` option (API-EXTENSIONS §13; only ours has it): how due jobs of
   * different keys share the slots. */
  fairness?: Fairness;
  /** Tenants of skewed sizes (`Tenants`): each job is labelled with its tenant, on both pools,
   * and on ours the tenant is also the job's pool key. */
  tenants?: Tenants;
  /** Key shares set before the run (ours only; not counted): key `k<i>` of the scenario's `keys`
   * gets weight `weights[i mod weights.length]` (`pool.setKeyShare`), and `idleKeys` other keys,
   * which never get a job, get a share each too. With `checkSplit`, the run records the order in
   * which the pool started attempts (it logs at "DEBUG") and checks the keys' starts against
   * their weights (`ShareChecks`). */
  shares?: { weights: number[]; idleKeys?: number; checkSplit?: boolean };
};

/** One big tenant, `t0`, enqueues `bigJobs` at once; `smallAfterMs` later, each of `small` small
 * tenants (`t1`, `t2`, …) enqueues `smallJobs` at once, one app mutation per tenant. */
export type Tenants = { bigJobs: number; small: number; smallJobs: number; smallAfterMs: number };

/** The jobs of a tenant layout, big and small together. */
export const tenantJobs = (t: Tenants) => t.bigJobs + t.small * t.smallJobs;

/** The tenant of job `i` of a tenant layout (jobs are numbered in enqueue order). */
export function tenantOf(t: Tenants, i: number): string {
  return i < t.bigJobs ? "t0" : `t${1 + Math.floor((i - t.bigJobs) / t.smallJobs)}`;
}

/** The key every idle share of a scenario's `shares.idleKeys` is set on (never a job's key). */
export const idleKeyOf = (i: number) => `idle${i}`;

/** Which key job `i` gets: "interleaved" deals keys out in turn (job i gets key i mod count, so
 * a key's jobs are `count` apart in enqueue order); "grouped" gives each key a run of consecutive
 * jobs (jobs / count of them). */
export type KeyLayout = "interleaved" | "grouped";

/** The pool key of job `i` of `jobs`. */
export function poolKeyOf(keys: NonNullable<Scenario["keys"]>, jobs: number, i: number): string {
  const { count, layout } = keys;
  const perKey = Math.ceil(jobs / count);
  return `k${layout === "interleaved" ? i % count : Math.floor(i / perKey)}`;
}

/** How a keyed run kept its keys, as the jobs saw it. */
export type KeyChecks = {
  /** Distinct keys the jobs were enqueued with. */
  keys: number;
  /** The most attempts of one key running at once, and that key. */
  maxConcurrency: number;
  maxConcurrencyKey: string;
  /** Jobs whose first attempt started after that of a job of their key enqueued later (all are due
   * at once, so a key's jobs must start in enqueue order), and the first such, described. */
  outOfOrder: number;
  firstOutOfOrder?: string;
};

export type Result = {
  side: SideName;
  scenario: Scenario;
  counters: Counters;
  lags: number[];
  makespanMs: number;
  busyMs: number;
  maxConcurrency: number;
  completions: Record<string, number>;
  lost: number;
  duplicates: number;
  wrongKind: number;
  wallSeconds: number;
  finished: boolean;
  /** Keyed scenarios only. */
  keyChecks?: KeyChecks;
  /** Rate-limited scenarios only. */
  rateChecks?: RateChecks;
  /** Priority mixes only. */
  priorityChecks?: PriorityChecks;
  /** Tenant scenarios only: each tenant's waits. */
  tenantWaits?: TenantWaits[];
  /** Scenarios whose `shares` ask for it only. */
  shareChecks?: ShareChecks;
  /** Scenarios with `conflicts` only. */
  conflicts?: ConflictCounts;
  /** What its actions held (absent in runs older than the measurement). */
  actions?: ActionStats;
  /** The backend, for inspection after the run. */
  backend: ReturnType<typeof newBackend>;
};

/** The windows of the conflict model (conflicts.ts), virtual ms: transactions that start less than
 * this apart could run at once. One segment of our loop (`SEGMENT_MS`), which is also the peer's
 * segment, the same for both pools; and one step of the virtual clock, for transactions that start
 * together. */
export const CONFLICT_WINDOWS_MS = [SEGMENT_MS, 10] as const;

/** Potential OCC conflicts of one run, per window (`CONFLICT_WINDOWS_MS`). */
export type ConflictCounts = {
  /** Top-level mutations that committed: the ones the model pairs. */
  transactions: number;
  windows: Array<{ windowMs: number; pairs: PairCount[] }>;
};

function countConflicts(transactions: Transaction[]): ConflictCounts {
  const byWindow = potentialConflictsByWindow(transactions, [...CONFLICT_WINDOWS_MS]);
  return {
    transactions: transactions.filter((t) => t.type === "mutation" && t.committed).length,
    windows: CONFLICT_WINDOWS_MS.map((windowMs) => ({ windowMs, pairs: byWindow.get(windowMs)! })),
  };
}

/** Virtual time the harness keeps running after the last onComplete (counted: the loop winding
 * down is part of the cost), and to catch late duplicate onComplete calls. */
export const SETTLE_MS = 5_000;
/** Virtual step between real ticks. */
export const STEP_MS = Number(process.env.BENCH_STEP_MS || 10);
/** Jobs per app mutation, unless the scenario's `enqueue` says otherwise. */
const CHUNK = 100;

let warmedUp = false;

/** Loads every module once: convex-test imports lazily, which is real I/O the fake clock does not wait for. */
export async function warmUp() {
  if (warmedUp) return;
  const all = {
    ...appModules,
    ...oursTest.modules,
    ...peerTest.modules,
    ...batchWorkerTest.modules,
  };
  await Promise.all(
    Object.entries(all)
      .filter(([path]) => !/\.(test|config)\.ts$/.test(path))
      .map(([, load]) => load()),
  );
  warmedUp = true;
}

export function newBackend(side: SideName) {
  const t = convexTest({ schema, modules: appModules, transactionLimits: true } as any);
  if (side === "ours") oursTest.register(t as any, "ours");
  else peerTest.register(t as any, "peer");
  return t;
}

/** Advances the virtual clock to `at`, in steps of at most STEP_MS. */
async function stepUntil(at: number) {
  while (Date.now() < at) await step(Math.min(STEP_MS, at - Date.now()));
}

/** What our pool's DEBUG line for an attempt it started holds (src/component/mainLoop/start.ts). */
const STARTED_LINE = '"event":"started"';

/**
 * Replaces console.debug until the returned function is called (which puts back whatever was
 * there, a test's own spy included): records the virtual time of each of our pool's "started" lines
 * in `startedAt`, and the job each started in `startedWork` (its work id, in the order the pool
 * logged them), and prints no debug line. The pool logs that line in the loop pass that starts the
 * attempt, so these are the pool's start times and order, not those of the functions the scheduler
 * runs a little later.
 */
function recordStarts(startedAt: number[], startedWork: string[]): () => void {
  const previous = console.debug;
  console.debug = (...args: unknown[]) => {
    const line = args[0];
    if (typeof line !== "string" || !line.includes(STARTED_LINE)) return;
    startedAt.push(Date.now());
    startedWork.push(JSON.parse(line).workId);
  };
  return () => {
    console.debug = previous;
  };
}

export async function runScenario(side: SideName, sc: Scenario): Promise<Result> {
  installInstrumentation();
  installWritesByTable();
  installFastTables();
  installIndexedRanges();
  installActionSlots();
  await warmUp();
  const wallStart = performance.now();
  const startedAt: number[] = [];
  const startedWork: string[] = [];
  const logStarts = sc.rateLimit !== undefined || sc.shares?.checkSplit === true;
  const stopRecordingStarts = logStarts ? recordStarts(startedAt, startedWork) : () => {};
  let transactions: Transaction[] | undefined;
  startVirtualClock();
  probe.reset();
  if (sc.conflicts) startRecording();
  startActionSlots(sc.actionLimit);
  let actions: ActionStats | undefined;
  const t = newBackend(side);
  if (sc.shares) await setShares(t, side, sc);
  const counters = resetCounters();
  resetWritesByTable();
  const t0 = Date.now();
  const ids: string[] = [];
  const enqueueArgs = {
    side,
    maxParallelism: sc.maxParallelism,
    // Ours only: a scenario the peer runs too (11a) leaves them out of the peer's pool.
    keyParallelism: side === "ours" ? sc.keyParallelism : undefined,
    rateLimit: sc.rateLimit,
    fairness: side === "ours" ? sc.fairness : undefined,
    logLevel: logStarts ? ("DEBUG" as const) : undefined,
    kind: sc.kind,
    ms: sc.ms,
    failTimes: sc.failTimes,
    retry: sc.retry,
    runAfter: sc.runAfter,
    batch: sc.enqueue?.batch,
    tasks: sc.tasks !== undefined,
  };
  /** Enqueues jobs `from` to `from + n - 1` in one app mutation. */
  const enqueue = async (from: number, n: number, priority?: "high" | "low") => {
    const range = Array.from({ length: n }, (_, j) => from + j);
    const keys = range.map((i) => `j${i}`);
    const layout = sc.keys;
    const tenants = sc.tenants && range.map((i) => tenantOf(sc.tenants!, i));
    const poolKeys = layout
      ? range.map((i) => poolKeyOf(layout, sc.jobs, i))
      : side === "ours"
        ? tenants
        : undefined;
    ids.push(
      ...(await t.mutation(api.pools.enqueue, {
        ...enqueueArgs,
        keys,
        poolKeys,
        priority,
        tenants,
      })),
    );
  };
  /** Enqueues jobs `from` to `to - 1`, CHUNK (or the scenario's `perMutation`) per app mutation. */
  const enqueueAtOnce = async (from: number, to: number, priority?: "high" | "low") => {
    const chunk = sc.enqueue?.perMutation ?? CHUNK;
    for (let i = from; i < to; i += chunk) await enqueue(i, Math.min(chunk, to - i), priority);
  };
  const deadline = t0 + sc.deadlineMs;
  try {
    if (sc.priorityMix) {
      const { low, highEveryMs } = sc.priorityMix;
      await enqueueAtOnce(0, low, "low");
      for (let i = low; i < sc.jobs; i++) {
        await stepUntil(t0 + (i - low + 1) * highEveryMs);
        await enqueue(i, 1, "high");
      }
    } else if (sc.tenants) {
      const { bigJobs, small, smallJobs, smallAfterMs } = sc.tenants;
      await enqueueAtOnce(0, bigJobs);
      await stepUntil(t0 + smallAfterMs);
      for (let s = 0; s < small; s++) await enqueue(bigJobs + s * smallJobs, smallJobs);
    } else if (sc.trickleEveryMs) {
      for (let i = 0; i < sc.jobs; i++) {
        await stepUntil(t0 + i * sc.trickleEveryMs);
        await enqueue(i, 1);
      }
    } else {
      await enqueueAtOnce(0, sc.jobs);
    }
    if (sc.cancelAllAfter !== undefined) {
      await stepUntil(t0 + sc.cancelAllAfter);
      await t.mutation(api.pools.cancelAll, { side, maxParallelism: sc.maxParallelism });
    }
    while (probe.onCompleteCalls < sc.jobs && Date.now() < deadline) await step(STEP_MS);
    await stepUntil(Date.now() + SETTLE_MS);
  } finally {
    actions = stopActionSlots();
    vi.useRealTimers();
    stopRecordingStarts();
    if (sc.conflicts) transactions = stopRecording();
  }
  const finished = probe.onCompleteCalls >= sc.jobs;
  // Read results (convex-test's own helper: not counted; counters are detached first).
  resetCounters();
  saveWritesByTable(`${sc.id} ${side}`, sc.jobs);
  const rows = await readCompletions(t);
  const completions: Record<string, number> = { success: 0, failed: 0, canceled: 0 };
  const perId = new Map<string, number>();
  for (const r of rows) {
    completions[r.kind] = (completions[r.kind] ?? 0) + 1;
    perId.set(r.workId, (perId.get(r.workId) ?? 0) + 1);
  }
  const idSet = new Set(ids);
  let lost = 0;
  let duplicates = 0;
  for (const id of ids) {
    const n = perId.get(id) ?? 0;
    if (n === 0) lost++;
    if (n > 1) duplicates += n - 1;
  }
  for (const [id, n] of perId) if (!idSet.has(id)) duplicates += n; // onComplete for an unknown job
  const wrongKind = rows.filter((r) => r.kind !== sc.expectKind).length;
  const lastAt = rows.length ? Math.max(...rows.map((r) => r.at)) : Date.now();
  const firstStart = new Map<string, number>();
  for (const a of probe.attempts) if (!firstStart.has(a.key)) firstStart.set(a.key, a.start);
  const lags = [...firstStart].map(([key, start]) => start - probe.enqueuedAt.get(key)!);
  const busyMs = probe.attempts.reduce((sum, a) => sum + ((a.end ?? lastAt) - a.start), 0);
  return {
    side,
    scenario: sc,
    counters,
    lags,
    makespanMs: lastAt - t0,
    busyMs,
    maxConcurrency: probe.maxRunning,
    completions,
    lost,
    duplicates,
    wrongKind,
    wallSeconds: (performance.now() - wallStart) / 1000,
    finished,
    keyChecks: sc.keys || (sc.tenants && side === "ours") ? keyChecks(probe) : undefined,
    rateChecks: sc.rateLimit && rateChecks(startedAt, sc.rateLimit),
    priorityChecks: sc.priorityMix && priorityChecks(probe),
    tenantWaits: sc.tenants && tenantWaits(probe),
    shareChecks: sc.shares?.checkSplit ? splitChecks(sc, ids, startedWork) : undefined,
    conflicts: transactions && countConflicts(transactions),
    actions,
    backend: t,
  };
}

/** Rows the app's onComplete wrote, one transaction per page: a 50,000-job run has more than a
 * transaction may read (convex-test enforces Convex's 32,000). */
const COMPLETIONS_PAGE = 10_000;

/** Every onComplete the app recorded. */
async function readCompletions(t: ReturnType<typeof newBackend>) {
  const rows: Array<{ workId: string; kind: string; at: number }> = [];
  let cursor: string | null = null;
  for (;;) {
    const page: { page: typeof rows; isDone: boolean; continueCursor: string } = await t.run(
      async (ctx: any) =>
        await ctx.db.query("completions").paginate({ cursor, numItems: COMPLETIONS_PAGE }),
    );
    rows.push(...page.page);
    if (page.isDone) return rows;
    cursor = page.continueCursor;
  }
}

/** Checks, from what the jobs recorded (`probe`), whether each key kept its limit and its order. */
export function keyChecks(
  recorded: Pick<Probe, "enqueuedAt" | "poolKeyOf" | "attempts" | "maxRunningOneKey">,
): KeyChecks {
  // Each job's place among its key's jobs, in enqueue order.
  const rank = new Map<string, number>();
  const enqueued = new Map<string, string[]>();
  for (const job of recorded.enqueuedAt.keys()) {
    const poolKey = recorded.poolKeyOf.get(job);
    if (poolKey === undefined) continue;
    const jobs = enqueued.get(poolKey) ?? [];
    rank.set(job, jobs.length);
    jobs.push(job);
    enqueued.set(poolKey, jobs);
  }
  // First attempts in the order they started: a job ranked below a job of its key that already
  // started, started out of order.
  const started = new Set<string>();
  const highest = new Map<string, number>();
  let outOfOrder = 0;
  let firstOutOfOrder: string | undefined;
  for (const { key: job } of recorded.attempts) {
    const poolKey = recorded.poolKeyOf.get(job);
    if (started.has(job) || poolKey === undefined) continue;
    started.add(job);
    const r = rank.get(job)!;
    const top = highest.get(poolKey) ?? -1;
    if (r < top) {
      outOfOrder++;
      firstOutOfOrder ??=
        `key ${poolKey}: ${job} (its job #${r + 1}) started after ` +
        `${enqueued.get(poolKey)![top]} (#${top + 1})`;
    }
    highest.set(poolKey, Math.max(top, r));
  }
  return {
    keys: enqueued.size,
    maxConcurrency: recorded.maxRunningOneKey.running,
    maxConcurrencyKey: recorded.maxRunningOneKey.poolKey,
    outOfOrder,
    firstOutOfOrder,
  };
}

/** Jobs' keys whose shares one app mutation sets: 1,000 writes, well within a transaction's limits. */
const SHARES_PER_MUTATION = 1_000;

/** Sets the scenario's key shares (`Scenario.shares`) before the run: its keys' weights, then one
 * share for each idle key (weight 2, so that each is a share of its own, not the default). */
async function setShares(t: ReturnType<typeof newBackend>, side: SideName, sc: Scenario) {
  const { weights, idleKeys = 0 } = sc.shares!;
  if (side !== "ours") throw new Error(`${sc.id}: only our pool has key shares`);
  const count = sc.keys?.count ?? 0;
  const set = async (keys: string[], weight: (j: number) => number) => {
    for (let i = 0; i < keys.length; i += SHARES_PER_MUTATION) {
      const chunk = keys.slice(i, i + SHARES_PER_MUTATION);
      await t.mutation(api.pools.setShares, {
        maxParallelism: sc.maxParallelism,
        shares: chunk.map((key, j) => ({ key, weight: weight(i + j) })),
      });
    }
  };
  await set(
    Array.from({ length: count }, (_, i) => `k${i}`),
    (i) => weights[i % weights.length],
  );
  await set(
    Array.from({ length: idleKeys }, (_, i) => idleKeyOf(i)),
    () => 2,
  );
}

/** The share check of a run: each attempt the pool started (`startedWork`, work ids in the order
 * it logged them), by its job's pool key, against the keys' weights. */
function splitChecks(sc: Scenario, ids: string[], startedWork: string[]): ShareChecks {
  const layout = sc.keys!;
  const { weights } = sc.shares!;
  const keyOfWork = new Map(ids.map((id, i) => [id, poolKeyOf(layout, sc.jobs, i)]));
  const weightOf = Object.fromEntries(
    Array.from({ length: layout.count }, (_, i) => [`k${i}`, weights[i % weights.length]]),
  );
  return shareChecks(
    startedWork.map((id) => keyOfWork.get(id) ?? "unknown"),
    weightOf,
  );
}
