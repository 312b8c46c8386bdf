/**
 * Scenario 10, schedules' cost (API-EXTENSIONS §10, ours only): what a firing costs and what
 * schedules cost between their times. Two backends, on the virtual clock:
 *
 * - **Firing**: `firing` schedules of a do-nothing mutation, every `everyMs`, for `durationMs`:
 *   every top-level transaction is counted (bench/instrument.ts); per firing (one time of one
 *   schedule) the fire's transactions, reads and writes, and all the pool's transactions (the run's
 *   start, worker and outcome included).
 * - **Idle**: `idle` schedules whose first time is an hour away, then `idleWindowMs` of virtual
 *   time between times with every transaction counted (the goal: none), then one probe schedule
 *   every minute among them, whose fires' reads are compared with the firing backend's (the goal:
 *   no read that grows with the number of schedules).
 *
 * Owns only this measurement and its result's shape; never sets a threshold (the bench's `it`
 * checks the run) and never renders (bench/report/schedules.ts does).
 */
import { vi } from "vitest";
import { api } from "./app/_generated/api.js";
import { newBackend, warmUp } from "./harness.js";
import { installFastTables } from "./fastTables.js";
import { installIndexedRanges } from "./indexedRanges.js";
import {
  installInstrumentation,
  onTopLevelTransaction,
  type TransactionTotal,
} from "./instrument.js";
import { advance, startVirtualClock } from "../test/virtualClock.js";

/** The clock's step: schedules' times are a minute apart and a run takes a few passes, all within
 * one second; finer steps only cost wall time over an hour of virtual time. */
const STEP_MS = 1000;
/** Schedules created per app mutation. */
const CREATE_CHUNK = 100;

export type ScheduleBenchConfig = {
  firing: number;
  everyMs: number;
  durationMs: number;
  idle: number;
  idleWindowMs: number;
};

/** Sums of some transactions' totals, and the largest of each. */
export type TxSums = {
  transactions: number;
  documentsRead: number;
  documentsWritten: number;
  databaseQueries: number;
  maxDocumentsRead: number;
  maxDatabaseQueries: number;
};

export type ScheduleBenchResult = {
  config: ScheduleBenchConfig;
  firing: {
    /** Times that came due (schedules × times in the duration). */
    times: number;
    /** Runs enqueued by those times (counts.enqueued summed). */
    enqueued: number;
    /** The fires' transactions (`schedules:fire`). */
    fires: TxSums;
    /** Every pool transaction while the schedules fired (fires, passes, workers, …). */
    pool: TxSums;
  };
  idle: {
    /** Wall-clock seconds to create the idle schedules. */
    createSeconds: number;
    /** Every pool transaction in the window between times. */
    window: TxSums;
    /** The probe schedule's fires, among the idle schedules. */
    probeFires: TxSums;
  };
  wallSeconds: number;
};

const zero = (): TxSums => ({
  transactions: 0,
  documentsRead: 0,
  documentsWritten: 0,
  databaseQueries: 0,
  maxDocumentsRead: 0,
  maxDatabaseQueries: 0,
});

function add(sums: TxSums, total: TransactionTotal): void {
  sums.transactions++;
  sums.documentsRead += total.documentsRead;
  sums.documentsWritten += total.documentsWritten;
  sums.databaseQueries += total.databaseQueries;
  sums.maxDocumentsRead = Math.max(sums.maxDocumentsRead, total.documentsRead);
  sums.maxDatabaseQueries = Math.max(sums.maxDatabaseQueries, total.databaseQueries);
}

/** Counts the pool's top-level transactions (and, apart, its fires) while `body` runs. */
async function counting(body: () => Promise<void>): Promise<{ pool: TxSums; fires: TxSums }> {
  const pool = zero();
  const fires = zero();
  const stop = onTopLevelTransaction((fn, total, committed) => {
    if (!committed || !fn.startsWith("ours:")) return;
    add(pool, total);
    if (fn.includes("schedules:fire")) add(fires, total);
  });
  try {
    await body();
  } finally {
    stop();
  }
  return { pool, fires };
}

type Backend = ReturnType<typeof newBackend>;

async function createSchedules(
  t: Backend,
  prefix: string,
  n: number,
  everyMs: number,
  startAt?: number,
) {
  for (let i = 0; i < n; i += CREATE_CHUNK) {
    const names = Array.from(
      { length: Math.min(CREATE_CHUNK, n - i) },
      (_, j) => `${prefix}-${i + j}`,
    );
    await t.mutation(api.schedules.schedule, { names, everyMs, startAt });
  }
}

export async function runScheduleBench(config: ScheduleBenchConfig): Promise<ScheduleBenchResult> {
  installInstrumentation();
  installFastTables();
  installIndexedRanges();
  await warmUp();
  const wallStart = performance.now();

  try {
    return await measureSchedules(config, wallStart);
  } finally {
    // Real time again: what runs after (the report's date, later scenarios) must not read the
    // virtual clock.
    vi.useRealTimers();
  }
}

async function measureSchedules(
  config: ScheduleBenchConfig,
  wallStart: number,
): Promise<ScheduleBenchResult> {
  // Firing.
  startVirtualClock();
  const firingBackend = newBackend("ours");
  const t0 = Date.now();
  // First time one period after the start: the hour holds durationMs / everyMs times each.
  await createSchedules(firingBackend, "f", config.firing, config.everyMs, t0 + config.everyMs);
  const firing = await counting(() => advance(config.durationMs + STEP_MS, STEP_MS));
  const times = config.firing * Math.floor(config.durationMs / config.everyMs);
  const enqueued = await countEnqueued(firingBackend);

  // Idle.
  startVirtualClock();
  const idleBackend = newBackend("ours");
  const createStart = performance.now();
  await createSchedules(idleBackend, "i", config.idle, 60 * 60_000, Date.now() + 60 * 60_000);
  const createSeconds = (performance.now() - createStart) / 1000;
  const window = await counting(() => advance(config.idleWindowMs, STEP_MS));
  await createSchedules(idleBackend, "probe", 1, config.everyMs);
  const probe = await counting(() => advance(3 * config.everyMs + STEP_MS, STEP_MS));

  return {
    config,
    firing: { times, enqueued, fires: firing.fires, pool: firing.pool },
    idle: { createSeconds, window: window.pool, probeFires: probe.fires },
    wallSeconds: (performance.now() - wallStart) / 1000,
  };
}

/** Runs enqueued by every schedule of the backend (their `counts.enqueued`, summed). */
async function countEnqueued(t: Backend): Promise<number> {
  let sum = 0;
  let cursor: string | null = null;
  for (;;) {
    const page: any = await t.query(api.schedules.list, { cursor });
    for (const s of page.page) sum += s.counts.enqueued;
    if (page.isDone) return sum;
    cursor = page.continueCursor;
  }
}
