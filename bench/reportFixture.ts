/**
 * Made-up bench runs for bench/report.test.ts: one scenario of every kind the report has a section
 * for (runs against the peer, the backlog at three sizes, keys, rate limit and priority, potential
 * OCC conflicts, fair share), with figures from a fixed formula, not measured. `fixtureRun()` passes every
 * check; `failingRun()` breaks each check and leaves runs out, so the failure lines and the "not
 * run" cells show too. Test data only: never rendered into docs/.
 */
import type { PairCount } from "./conflicts.js";
import type { ActionStats, ActionTime } from "./actionSlots.js";
import type { ConflictCounts, Scenario, SideName, Tenants } from "./harness.js";
import { MIN_BILLED_DOCUMENT_BYTES, zeroUsage, type Counters, type Usage } from "./instrument.js";
import type { BenchRun, Measured, RunMeta, ScenarioRun } from "./results.js";

const action = {
  kind: "action",
  failTimes: 0,
  expectKind: "success",
  deadlineMs: 600_000,
} as const;

const backlog = (id: string, jobs: number): Scenario => ({
  ...action,
  id,
  title: `backlog: ${jobs} actions of 10 ms, maxParallelism 100`,
  short: `backlog of ${jobs.toLocaleString("en-US")}`,
  about: "Many very short actions with 100 slots.",
  jobs,
  maxParallelism: 100,
  ms: 10,
});

const keyed = (id: string, layout?: "interleaved" | "grouped"): Scenario => ({
  ...action,
  id,
  title: `${layout ? `keys, ${layout}` : "no keys"}: 10000 actions of 10 ms (ours only)`,
  short: layout ? `keys, ${layout}` : "no keys",
  about: layout ? `Keys laid out ${layout}.` : "The keyed runs' baseline.",
  jobs: 10_000,
  maxParallelism: 50,
  keyParallelism: 1,
  ms: 10,
  sides: ["ours"],
  ...(layout
    ? { keys: { count: 1000, layout }, baseline: "7a", conflicts: layout === "interleaved" }
    : {}),
});

/** An executor run: the jobs of 9a as tasks, ours only. */
function executorRun(id: string, jobs: number, perMutation: number): Scenario {
  return {
    ...action,
    id,
    title: `executor: ${jobs} tasks of 2 s, 16 actions at once, maxParallelism 1000 (ours only)`,
    short: `${jobs} tasks in executors`,
    about: "The jobs of 9a as tasks of one executor.",
    jobs,
    maxParallelism: 1000,
    ms: 2000,
    actionLimit: 16,
    enqueue: { perMutation, batch: perMutation > 1 },
    tasks: { concurrency: 100 },
    sides: ["ours"],
  };
}

/** The fixture's tenants: a big one of 100 jobs, then 3 small ones of 2 each. */
const TENANTS: Tenants = { bigJobs: 100, small: 3, smallJobs: 2, smallAfterMs: 1000 };

/** A tenant run (11a with the peer, 11b ours only). */
const tenantsRun = (id: string, fairness: "share" | "due"): Scenario => ({
  ...action,
  id,
  title: `tenants, fairness "${fairness}": 1 tenant with 100 actions, then 3 with 2 each`,
  short: `3 small tenants behind one of 100 jobs, fairness "${fairness}"`,
  about: `The small tenants in the order "${fairness}" gives.`,
  jobs: 106,
  maxParallelism: 10,
  keyParallelism: 10,
  ms: 100,
  fairness,
  tenants: TENANTS,
  ...(fairness === "share" ? { sides: ["ours"] as SideName[] } : {}),
});

/** A run of keys holding shares (11c to 11f), ours only. */
const sharesRun = (id: string, parts: Partial<Scenario>): Scenario => ({
  ...action,
  id,
  title: `shares ${id}: 1000 actions of 10 ms (ours only)`,
  short: `shares ${id}`,
  about: `Keys holding shares, ${id}.`,
  jobs: 1000,
  maxParallelism: 50,
  keyParallelism: 50,
  ms: 10,
  fairness: "share",
  sides: ["ours"],
  keys: { count: 1, layout: "grouped" },
  shares: { weights: [2] },
  ...parts,
});

export const FIXTURE_SCENARIOS: Scenario[] = [
  {
    ...action,
    id: "1a",
    title: "burst: 1000 actions of 1 s, maxParallelism 10",
    short: "burst, 10 slots",
    about: "One-second actions, all enqueued at once.",
    jobs: 1000,
    maxParallelism: 10,
    ms: 1000,
    conflicts: true,
  },
  {
    ...action,
    id: "2",
    title: "retries: 200 actions of 1 s failing twice",
    jobs: 200,
    maxParallelism: 10,
    ms: 1000,
    failTimes: 2,
    retry: { maxAttempts: 5, initialBackoffMs: 250, base: 2 },
  },
  {
    ...action,
    id: "3",
    title: "mutations: 1000 mutations, maxParallelism 10",
    short: "mutations",
    kind: "mutation",
    jobs: 1000,
    maxParallelism: 10,
    ms: 0,
    conflicts: true,
  },
  backlog("4a", 1000),
  backlog("4b", 10_000),
  backlog("4c", 50_000),
  {
    ...action,
    id: "5",
    title: "cancel: 1000 actions of 1 s scheduled 10 s ahead, cancelAll 1 s later",
    short: "cancel all",
    about: "Every job canceled before it starts.",
    jobs: 1000,
    maxParallelism: 10,
    ms: 1000,
    runAfter: 10_000,
    cancelAllAfter: 1000,
    expectKind: "canceled",
  },
  keyed("7a"),
  keyed("7b", "interleaved"),
  keyed("7c", "grouped"),
  {
    ...action,
    id: "8",
    title: "no rate limit: 500 actions of 10 ms (ours only)",
    jobs: 500,
    maxParallelism: 50,
    ms: 10,
    sides: ["ours"],
  },
  {
    ...action,
    id: "8a",
    title: "rate limit: 500 actions of 10 ms, 50 starts per 5 s (ours only)",
    short: "at most 50 starts per 5 s",
    about: "The limit sets the pace.",
    jobs: 500,
    maxParallelism: 50,
    ms: 10,
    sides: ["ours"],
    rateLimit: { starts: 50, periodMs: 5000 },
    baseline: "8",
  },
  {
    ...action,
    id: "8b",
    title: "priority: 200 low-priority actions, then 4 high-priority ones (ours only)",
    jobs: 204,
    maxParallelism: 10,
    ms: 100,
    sides: ["ours"],
    priorityMix: { low: 200, highEveryMs: 500 },
  },
  {
    ...action,
    id: "9a",
    title: "I/O-bound actions: 1000 actions of 2 s, 16 actions at once, maxParallelism 16",
    short: "1,000 I/O-bound actions, 16 actions at once",
    about: "Actions that mostly wait on I/O.",
    jobs: 1000,
    maxParallelism: 16,
    ms: 2000,
    actionLimit: 16,
    enqueue: { perMutation: 100, batch: true },
  },
  executorRun("9b", 1000, 100),
  executorRun("9c", 200, 1),
  tenantsRun("11a", "due"),
  tenantsRun("11b", "share"),
  sharesRun("11c", {
    jobs: 2000,
    keys: { count: 2, layout: "interleaved" },
    shares: { weights: [3, 1], checkSplit: true },
  }),
  sharesRun("11d", {}),
  sharesRun("11e", { shares: { weights: [2], idleKeys: 100_000 } }),
  sharesRun("11f", { keys: { count: 1000, layout: "interleaved" } }),
  sharesRun("11g", { keys: { count: 1000, layout: "interleaved" }, shares: undefined }),
];

/** A tenant run's waits: the big tenant's spread over its drain; the small tenants' short in
 * turns ("share"), else behind the backlog, the peer's later still. */
function tenantWaitsOf(sc: Scenario, side: SideName) {
  const t = sc.tenants!;
  const behind = sc.fairness === "share" ? 0 : side === "ours" ? 800 : 1200;
  return [
    { tenant: "t0", jobs: t.bigJobs, waits: Array.from({ length: t.bigJobs }, (_, i) => i * 10) },
    ...Array.from({ length: t.small }, (_, s) => ({
      tenant: `t${s + 1}`,
      jobs: t.smallJobs,
      waits: Array.from({ length: t.smallJobs }, (_, j) => behind + 100 * (s + j)),
    })),
  ];
}

/** Each function's calls and usage per job (bytes in KB), per side; the job itself and its
 * onComplete are the app's, the same on both sides. */
type PerJob = { calls: number; read: number; written: number; kbRead: number; kbWritten: number };

function functionsOf(side: SideName, sc: Scenario): Array<[string, PerJob]> {
  if (sc.tasks) return taskFunctions(sc);
  const job = sc.kind === "action" ? "app:jobs:work (action)" : "app:jobs:mutate (mutation)";
  const app: Array<[string, PerJob]> = [
    ["app:pools:enqueue (mutation)", { calls: 0.01, read: 0, written: 0, kbRead: 0, kbWritten: 0 }],
    [job, { calls: 1 + sc.failTimes, read: 0, written: 0, kbRead: 0, kbWritten: 0 }],
    [
      "app:pools:onComplete (mutation)",
      { calls: 1, read: 0, written: 1, kbRead: 0, kbWritten: 0.1 },
    ],
  ];
  // Keyed runs read and write more in the loop and the enqueue; a rate limit a little more.
  const keyed = sc.keys ? (sc.keys.layout === "grouped" ? 1.5 : 1.4) : 1;
  const limited = sc.rateLimit ? 1.02 : 1;
  const g = keyed * limited;
  const pool: Array<[string, PerJob]> =
    side === "ours"
      ? [
          [
            "ours:lib:enqueueBatch (mutation)",
            { calls: 0.01, read: 0.5, written: 2 * g, kbRead: 0.1, kbWritten: 1.2 },
          ],
          [
            "ours:mainLoop/main:main (mutation)",
            { calls: 0.2, read: 8 * g, written: 4.4 * g, kbRead: 2 * g, kbWritten: 0.3 },
          ],
          [
            "ours:runners/worker:runActionWrapper (action)",
            { calls: sc.kind === "action" ? 1 : 0, read: 0, written: 0, kbRead: 0, kbWritten: 0 },
          ],
          [
            "ours:mainLoop/complete:complete (mutation)",
            { calls: 1, read: 3, written: 2, kbRead: 0.5, kbWritten: 0.3 },
          ],
          [
            "ours:deliver:deliver (mutation)",
            { calls: 0.01, read: 1, written: 1, kbRead: 0.1, kbWritten: 0.05 },
          ],
        ]
      : [
          [
            "peer:lib:enqueueBatch (mutation)",
            { calls: 0.01, read: 0.5, written: 1.5, kbRead: 0.1, kbWritten: 0.3 },
          ],
          [
            "peer/batchWorker:loop:loop (mutation)",
            { calls: 0.5, read: 10, written: 2.7, kbRead: 3, kbWritten: 0.27 },
          ],
          [
            "peer:loop:status (query)",
            { calls: 0.6, read: 1, written: 0, kbRead: 0.2, kbWritten: 0 },
          ],
          [
            "peer:worker:runActionWrapper (action)",
            { calls: 0.1, read: 0, written: 0, kbRead: 0, kbWritten: 0 },
          ],
          [
            "peer:complete:complete (mutation)",
            { calls: 1, read: 4, written: 2, kbRead: 0.8, kbWritten: 0.4 },
          ],
        ];
  return [...app, ...pool];
}

/** Counters of `jobs` jobs from `functionsOf`, in whole calls, documents and bytes. */
function countersOf(side: SideName, sc: Scenario): Counters {
  const counters: Counters = {
    invocations: {
      app: { query: 0, mutation: 0, action: 0 },
      pool: { query: 0, mutation: 0, action: 0 },
    },
    byFunction: new Map(),
    usage: { app: zeroUsage(), pool: zeroUsage() },
    usageByFunction: new Map(),
    transactions: 0,
    txTotal: zeroUsage(),
    maxTxDocsRead: side === "ours" ? 407 : 395 + Math.round(sc.jobs / 500),
    maxTxBytesRead: side === "ours" ? 81_234 : 90_456,
    maxTxDocsReadFn: "",
    maxTxBytesReadFn: "",
  };
  for (const [fn, per] of functionsOf(side, sc)) {
    const n = (x: number) => Math.round(x * sc.jobs);
    const calls = n(per.calls);
    if (calls === 0) continue;
    const u: Usage = {
      docsRead: n(per.read),
      docsWritten: n(per.written),
      bytesRead: n(per.kbRead * 1000),
      bytesWritten: n(per.kbWritten * 1000),
      billedBytesRead: Math.max(n(per.kbRead * 1000), n(per.read) * MIN_BILLED_DOCUMENT_BYTES),
      billedBytesWritten: Math.max(
        n(per.kbWritten * 1000),
        n(per.written) * MIN_BILLED_DOCUMENT_BYTES,
      ),
    };
    const where = fn.startsWith("app:") ? "app" : "pool";
    const type = fn.slice(fn.lastIndexOf("(") + 1, -1) as "query" | "mutation" | "action";
    counters.invocations[where][type] += calls;
    counters.byFunction.set(fn, calls);
    counters.usageByFunction.set(fn, u);
    for (const k of Object.keys(u) as Array<keyof Usage>) {
      counters.usage[where][k] += u[k];
      counters.txTotal[k] += u[k];
    }
    if (type !== "action") counters.transactions += calls;
  }
  return counters;
}

/** An executor run's functions: no worker and no job action, an executor action per 100 tasks
 * and its reports; the enqueue once per task when one per mutation. */
function taskFunctions(sc: Scenario): Array<[string, PerJob]> {
  const perEnqueue = sc.enqueue?.batch ? 0.01 : 1;
  const none = { read: 0, written: 0, kbRead: 0, kbWritten: 0 };
  return [
    ["app:pools:enqueue (mutation)", { calls: perEnqueue, ...none }],
    ["app:tasks:run (action)", { calls: 0.01, ...none }],
    [
      "app:pools:onComplete (mutation)",
      { calls: 1, read: 0, written: 1, kbRead: 0, kbWritten: 0.1 },
    ],
    [
      sc.enqueue?.batch ? "ours:lib:enqueueBatch (mutation)" : "ours:lib:enqueue (mutation)",
      { calls: perEnqueue, read: 0.5, written: 2, kbRead: 0.1, kbWritten: 1.2 },
    ],
    [
      "ours:mainLoop/main:main (mutation)",
      { calls: 0.02, read: 6, written: 4, kbRead: 2, kbWritten: 0.3 },
    ],
    [
      "ours:runners/executor:report (mutation)",
      { calls: 0.1, read: 2, written: 2, kbRead: 0.4, kbWritten: 0.3 },
    ],
    [
      "ours:runners/deliver:deliver (mutation)",
      { calls: 0.05, read: 1, written: 1, kbRead: 0.2, kbWritten: 0.1 },
    ],
  ];
}

/** What an executor scenario's actions held: a worker (or the peer's batch worker) and the job's
 * own action per job, or an executor action per 100 tasks. */
function actionsOf(sc: Scenario, side: SideName, makespanMs: number): ActionStats {
  const job = { count: sc.jobs, ms: sc.jobs * sc.ms };
  const byFunction: Record<string, ActionTime> = sc.tasks
    ? { "app:tasks:run": { count: sc.jobs / 100, ms: (sc.jobs / 100) * 4_000 } }
    : side === "ours"
      ? { "ours:runners/worker:runAction": job, "app:jobs:work": job }
      : {
          "peer:worker:runBatch": { count: Math.ceil(sc.jobs / 16), ms: job.ms / 16 },
          "app:jobs:work": job,
        };
  const top = Object.entries(byFunction).filter(([k]) => k !== "app:jobs:work");
  return {
    limit: sc.actionLimit,
    topLevel: { count: top[0][1].count, ms: top[0][1].ms },
    nested: sc.tasks ? { count: 0, ms: 0 } : job,
    byFunction,
    maxRunning: sc.tasks ? 12 : side === "ours" ? 16 : 1,
    maxExecutions: sc.tasks ? 12 : side === "ours" ? 48 : 17,
    maxWaiting: sc.tasks ? 0 : 2,
    waitedMs: makespanMs > 0 && !sc.tasks ? 40 : 0,
  };
}

const pair = (a: string, b: string, overlapping: number, conflicts: number): PairCount => ({
  a,
  b,
  overlapping,
  conflicts,
  causes: conflicts
    ? [
        {
          cause: `${b.split(" ")[0]} writes a row → ${a.split(" ")[0]} reads its index`,
          pairs: conflicts,
          example: {
            reader: a,
            writer: b,
            table: "pool:runs",
            read: "by_segment [0, 5)",
            write: "r1: {} → {}",
          },
        },
      ]
    : [],
});

/** Potential conflicts: ours only between worker reports and the loop, the peer's enqueue path and
 * loop as well; half as many in the narrow window. */
function conflictsOf(side: SideName, sc: Scenario): ConflictCounts {
  const enqueue = `app:pools:enqueue → ${side}:lib:enqueueBatch`;
  const loop = side === "ours" ? "ours:mainLoop/main:main" : "peer/batchWorker:loop:loop";
  const complete = `${side}:complete:complete`;
  const k = sc.jobs / 1000;
  const pairs = (w: number) => [
    pair(enqueue, loop, Math.round(40 * k * w), side === "ours" ? 0 : Math.round(12 * k * w)),
    pair(complete, loop, Math.round(130 * k * w), Math.round(9 * k * w)),
  ];
  return {
    transactions: Math.round(sc.jobs * 1.3),
    windows: [
      { windowMs: 100, pairs: pairs(1) },
      { windowMs: 10, pairs: pairs(0.5) },
    ],
  };
}

/** One side's measurements of `sc`: the peer slower to start, ours quicker as backlogs grow. */
export function measure(sc: Scenario, side: SideName): Measured {
  const ours = side === "ours";
  const canceled = sc.expectKind === "canceled";
  const attempts = sc.jobs * (sc.failTimes + 1);
  // Attempts run back to back in every slot, the peer's a fifth slower; lags spread over the first
  // half of the run (200 samples at most).
  const perSlotMs = (attempts * Math.max(sc.ms, 10)) / sc.maxParallelism;
  const makespanMs = canceled
    ? ours
      ? 1100
      : 1020
    : Math.round(perSlotMs * (ours ? 1.01 : 1.2) + sc.ms + (sc.tasks ? 400 : 0));
  const samples = Math.min(sc.jobs, 200);
  const lags = canceled
    ? []
    : Array.from({ length: samples }, (_, i) => Math.round((i * makespanMs) / samples / 2));
  return {
    side,
    scenario: sc,
    counters: countersOf(side, sc),
    lags,
    makespanMs,
    busyMs: canceled ? 0 : attempts * sc.ms,
    maxConcurrency: canceled ? 0 : sc.maxParallelism - (ours ? 0 : 1),
    completions: {
      success: canceled ? 0 : sc.jobs,
      failed: 0,
      canceled: canceled ? sc.jobs : 0,
    },
    lost: 0,
    duplicates: 0,
    wrongKind: 0,
    wallSeconds: (sc.jobs / 100) * (ours ? 1 : 1.3),
    finished: true,
    ...(sc.keys
      ? {
          keyChecks: {
            keys: sc.keys.count,
            maxConcurrency: 1,
            maxConcurrencyKey: "k0",
            outOfOrder: 0,
          },
        }
      : {}),
    ...(sc.rateLimit
      ? {
          rateChecks: {
            starts: attempts,
            spanMs: 45_500,
            minSpanMs: 45_000,
            achieved: 45_000 / 45_500,
            busiest: 50,
            busiestAt: 0,
          },
        }
      : {}),
    ...(sc.priorityMix
      ? {
          priorityChecks: {
            highLags: [101, 151, 151, 201],
            lowLags: Array.from({ length: sc.priorityMix.low }, (_, i) => i * 10),
            inversions: 0,
          },
        }
      : {}),
    ...(sc.tenants && side === "ours"
      ? { keyChecks: { keys: 4, maxConcurrency: 10, maxConcurrencyKey: "t0", outOfOrder: 0 } }
      : {}),
    ...(sc.tenants ? { tenantWaits: tenantWaitsOf(sc, side) } : {}),
    ...(sc.shares?.checkSplit
      ? {
          shareChecks: {
            starts: { k0: 1000, k1: 1000 },
            contested: 1333,
            windows: 1234,
            outside: 0,
            worst: { from: 40, key: "k1", starts: 28, share: 25, ratio: 3 / 3.5 },
          },
        }
      : {}),
    ...(sc.conflicts ? { conflicts: conflictsOf(side, sc) } : {}),
    ...(sc.actionLimit ? { actions: actionsOf(sc, side, makespanMs) } : {}),
  };
}

const meta: RunMeta = {
  date: "2026-11-23T01:00:00.000Z",
  command: "npm run bench",
  commit: "abc1234",
  versions: { ours: "0.1.0", peer: "0.4.12", convex: "1.48.0", convexTest: "0.0.60", node: "v20" },
  machine: { cpu: "A CPU", cores: 2, memoryGB: 24, os: "Linux x64" },
  wallSeconds: 681,
  stepMs: 10,
  settleMs: 5000,
  also: [
    {
      command: "BENCH_ONLY=4c BENCH_LARGE=1 npm run bench",
      commit: "def5678",
      date: "2026-11-23T02:00:00.000Z",
      wallSeconds: 1999,
      ids: ["4c"],
    },
  ],
};

const runOf = (sc: Scenario): ScenarioRun => {
  const sides = sc.sides ?? ["ours", "peer"];
  return {
    scenario: sc,
    ...(sides.includes("ours") ? { ours: measure(sc, "ours") } : {}),
    ...(sides.includes("peer") ? { peer: measure(sc, "peer") } : {}),
  };
};

/** Every fixture scenario, on every side it runs on, every check passed. */
export function fixtureRun(): BenchRun {
  return { meta, scenarios: FIXTURE_SCENARIOS.map(runOf) };
}

/** A run with every check broken once, the peer's side of 3 and the baselines 7a, 8 and 11d not
 * run, no 4c, 9c and 11b, and no `also`; its executor run 9b misses its targets. */
export function failingRun(): BenchRun {
  const scenarios = FIXTURE_SCENARIOS.filter(
    (sc) => !["4c", "7a", "8", "9c", "11b", "11d"].includes(sc.id),
  ).map(runOf);
  const run = (id: string) => scenarios.find((s) => s.scenario.id === id)!;
  const burst = run("1a").ours!;
  Object.assign(burst, {
    lost: 2,
    duplicates: 1,
    wrongKind: 1,
    maxConcurrency: 11,
    finished: false,
  });
  delete run("3").peer;
  run("7b").ours!.keyChecks = {
    keys: 1000,
    maxConcurrency: 2,
    maxConcurrencyKey: "k7",
    outOfOrder: 3,
    firstOutOfOrder: "job 17 of key k7 started after job 1017",
  };
  const rate = run("8a").ours!;
  rate.rateChecks = {
    ...rate.rateChecks!,
    starts: 499,
    busiest: 51,
    busiestAt: 1500,
    achieved: 0.8,
  };
  run("8b").ours!.priorityChecks = {
    highLags: [400, 450, 500],
    lowLags: [0, 10, 20],
    inversions: 2,
    firstInversion: "low j5 started 300 ms after high j201 was enqueued, which never started",
  };
  run("11c").ours!.shareChecks = {
    starts: { k0: 1000, k1: 1000 },
    contested: 1333,
    windows: 1234,
    outside: 5,
    worst: { from: 600, key: "k1", starts: 31, share: 25, ratio: 6 / 3.5 },
  };
  const tasks = run("9b").ours!;
  tasks.duplicates = 1;
  tasks.makespanMs = 60_000;
  tasks.counters.byFunction.set("ours:runners/executor:report (mutation)", 900);
  tasks.counters.invocations.pool.mutation += 800;
  tasks.actions!.maxRunning = 17;
  return { meta: { ...meta, also: undefined }, scenarios };
}
