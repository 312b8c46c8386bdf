/**
 * `npm run bench`: every scenario, once on our component and once on @convex-dev/workpool, through
 * the same app code; the key scenarios (7), and the rate-limit and priority scenarios (8), which the
 * peer cannot run, on ours only, keyed against unkeyed and rate-limited against unlimited. Prints a
 * line per run and the tables at the end, saves the measurements to bench-out/latest.json and
 * renders docs/BENCHMARKS.md and docs/benchmarks/scenarios.md from them (bench/report/document.ts).
 *
 * Sizes are overridable by environment variables (see SCENARIOS below); BENCH_ONLY=1a,3 runs a
 * subset; BENCH_SIDES=ours runs one side; BENCH_NO_WRITE=1 leaves both documents alone;
 * BENCH_BY_TABLE=<file> appends what each function wrote, table by table, per run (writesByTable.ts).
 * BENCH_FROM_JSON=bench-out/latest.json runs nothing and renders both documents from that file;
 * several comma-separated files are merged (results.ts, `mergeRuns`: e.g. a full run and a 4c run).
 * Scenarios 1a, 3, 5 (delayed jobs, canceled), 6 and 7b also record every transaction and count
 * potential OCC conflicts between them (bench/conflicts.ts). Scenarios 9a to 9c (executors: 9a on
 * both sides, 9b and 9c on ours only) run under a simulated limit of 16 actions at once
 * (bench/actionSlots.ts); `BENCH_ONLY=9` runs all three (an id no scenario has selects those it
 * numbers). Scenario 10 (schedules' cost, ours only: bench/schedules.ts) is no harness scenario:
 * `BENCH_ONLY=10 BENCH_SIDES=ours` runs it alone. Scenarios 11a to 11g (fair share across keys,
 * API-EXTENSIONS §13) run on ours only but 11a, whose peer side runs the same jobs in enqueue
 * order; `BENCH_ONLY=11` runs them all.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { RateLimit } from "../src/client/index.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import type { Fairness } from "../src/component/model/validators.js";
import { EXECUTOR_CONCURRENCY } from "./app/tasks.js";
import { highLagLimitMs, MIN_ACHIEVED_RATE } from "./checks.js";
import { SHARE_SLACK_STARTS, SHARE_TOLERANCE, SHARE_WINDOW_STARTS } from "./fairChecks.js";
import {
  runScenario,
  SETTLE_MS,
  STEP_MS,
  tenantJobs,
  type KeyLayout,
  type Result,
  type Scenario,
} from "./harness.js";
import { progressLine, renderConsole, renderDocuments, SUMMARY_PATH } from "./report/document.js";
import { lagStats } from "./report/figures.js";
import { scheduleLine } from "./report/schedules.js";
import {
  runScheduleBench,
  type ScheduleBenchConfig,
  type ScheduleBenchResult,
} from "./schedules.js";
import {
  loadRun,
  measured,
  mergeRuns,
  RUN_JSON,
  runMeta,
  saveRun,
  sourceCommit,
  type BenchRun,
  type ScenarioRun,
} from "./results.js";

function envInt(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  return n;
}

const burstJobs = envInt("BENCH_BURST_JOBS", 1000);
const retryJobs = envInt("BENCH_RETRY_JOBS", 200);
const mutationJobs = envInt("BENCH_MUTATION_JOBS", 1000);
const backlogSmall = envInt("BENCH_BACKLOG_SMALL_JOBS", 1000);
const backlogJobs = envInt("BENCH_BACKLOG_JOBS", 10_000);
const backlogLarge = envInt("BENCH_BACKLOG_LARGE_JOBS", 50_000);
const cancelJobs = envInt("BENCH_CANCEL_JOBS", 1000);
const trickleMs = envInt("BENCH_TRICKLE_MS", 60_000);
const keyedJobs = envInt("BENCH_KEYED_JOBS", 10_000);
const keyedKeys = envInt("BENCH_KEYED_KEYS", 1000);
const rateJobs = envInt("BENCH_RATE_JOBS", 500);
const priorityLowJobs = envInt("BENCH_PRIORITY_LOW_JOBS", 2000);
const priorityHighJobs = envInt("BENCH_PRIORITY_HIGH_JOBS", 40);
const executorJobs = envInt("BENCH_EXECUTOR_JOBS", 10_000);
const executorSingleJobs = envInt("BENCH_EXECUTOR_SINGLE_JOBS", 10_000);
/** Scenario 11a/11b's jobs per small tenant (the big tenant has FAIR_SKEW times as many): 2, 1/25
 * of issue 40's example (50), so that every `npm run bench` can afford them: at full size (50
 * each) 11a took 10 minutes for ours and 9 to 18 for the peer's, and 11b 7 (docs/PERFORMANCE.md). */
const fairSmallJobs = envInt("BENCH_FAIR_SMALL_JOBS", 2);
const fairTenants = envInt("BENCH_FAIR_TENANTS", 100);
const fairSplitJobs = envInt("BENCH_FAIR_SPLIT_JOBS", 1000);
const fairCostJobs = envInt("BENCH_FAIR_COST_JOBS", 1000);
const fairIdleKeys = envInt("BENCH_FAIR_IDLE_KEYS", 100_000);
/** The 50,000-job backlog is opt-in: see docs/BENCHMARKS.md for how long it takes. */
const large = process.env.BENCH_LARGE === "1";
/** Scenario 10 (bench/schedules.ts): schedules firing every minute for an hour, and idle ones. Not
 * 10,000 firing: an hour of them is 600,000 fires and as many runs, about 2.4 million
 * transactions, over an hour of wall time on convex-test; 100 give the same per-firing figures. */
const scheduleBench: ScheduleBenchConfig = {
  firing: envInt("BENCH_SCHEDULES_FIRING", 100),
  everyMs: 60_000,
  durationMs: envInt("BENCH_SCHEDULES_MS", 60 * 60_000),
  idle: envInt("BENCH_SCHEDULES_IDLE", 10_000),
  idleWindowMs: 10 * 60_000,
};

const SHORT_MS = 10;
const retry = { maxAttempts: 5, initialBackoffMs: 250, base: 2 };

/** Scenario 8a's limit: 50 starts per 5 s against 50 slots of 10 ms jobs, so the limit, not the
 * slots, sets the pace (the slots could start thousands in 5 s), and 500 jobs take ten periods. */
const RATE_LIMIT: RateLimit = { starts: 50, periodMs: 5_000 };
if (rateJobs <= RATE_LIMIT.starts)
  throw new Error(`BENCH_RATE_JOBS must be over ${RATE_LIMIT.starts}: a rate needs two periods`);
/** Scenario 8b's jobs last 100 ms (one segment), so with 10 slots one frees about every 10 ms. */
const PRIORITY_JOB_MS = 100;
/** Scenario 8b enqueues a high-priority job this often: 40 of them span the low backlog's drain. */
const HIGH_EVERY_MS = 500;

function backlog(id: string, jobs: number): Scenario {
  return {
    id,
    title: `backlog: ${jobs} actions of ${SHORT_MS} ms, maxParallelism 100`,
    short: `backlog of ${jobs.toLocaleString("en-US")}`,
    about:
      "Many very short actions (10 ms) with 100 slots: a queue that drains as fast as the pool can " +
      "start jobs, so the pool's own overhead sets the pace. 4a, 4b (and the opt-in 4c) differ only " +
      "in size, to show whether the cost per job stays flat as the backlog grows.",
    kind: "action",
    jobs,
    maxParallelism: 100,
    ms: SHORT_MS,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 120_000 + jobs * 100,
  };
}

/** Scenario 7: 10 ms actions, 50 slots, ours only; 7a without keys is the baseline of the keyed 7b
 * and 7c, which differ only in how the jobs' keys are laid out in enqueue order. */
function keyed(id: string, layout?: KeyLayout): Scenario {
  const base: Scenario = {
    id,
    title: `no keys: ${keyedJobs} actions of ${SHORT_MS} ms, maxParallelism 50 (ours only)`,
    short: `${keyedJobs.toLocaleString("en-US")} actions without keys`,
    about:
      "The baseline of the keyed runs 7b and 7c: the same actions, pool and options, without keys. " +
      "It runs on ours only, since it is there to be compared with them.",
    kind: "action",
    jobs: keyedJobs,
    maxParallelism: 50,
    keyParallelism: 1,
    ms: SHORT_MS,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 120_000 + keyedJobs * 100,
    sides: ["ours"],
  };
  if (!layout) return base;
  const perKey = Math.ceil(keyedJobs / keyedKeys);
  return {
    ...base,
    title:
      `keys, ${layout}: ${keyedJobs} actions of ${SHORT_MS} ms over ${keyedKeys} keys ` +
      `(${perKey} each), keyParallelism 1, maxParallelism 50 (ours only)`,
    short: `${keyedJobs.toLocaleString("en-US")} actions over ${keyedKeys.toLocaleString("en-US")} keys, ${layout}`,
    about:
      layout === "interleaved"
        ? `Each key's jobs are enqueued ${keyedKeys} apart (job i gets key i mod ${keyedKeys}): ` +
          "by the time the pool reaches a key's next job its previous one has usually finished, " +
          "so this measures what keys cost when they rarely hold a job back."
        : `Each key's ${perKey} jobs are enqueued one after another: at most one of them may run at ` +
          "a time, so most jobs wait in their key's queue and start as their key's previous job " +
          "finishes. This measures what keys cost when they constantly hold jobs back.",
    keys: { count: keyedKeys, layout },
    baseline: "7a",
  };
}

/** Scenario 8: 10 ms actions, 50 slots, ours only; 8 without a rate limit is the baseline of the
 * rate-limited 8a. */
function rateLimited(id: string, limit?: RateLimit): Scenario {
  const base: Scenario = {
    id,
    title: `no rate limit: ${rateJobs} actions of ${SHORT_MS} ms, maxParallelism 50 (ours only)`,
    short: `${rateJobs} actions without a rate limit`,
    about:
      "The baseline of the rate-limited run 8a: the same actions, pool and options, without a " +
      "rate limit, so the slots set the pace. It runs on ours only, since it is there to be " +
      "compared with 8a.",
    kind: "action",
    jobs: rateJobs,
    maxParallelism: 50,
    ms: SHORT_MS,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 120_000 + rateJobs * 100,
    sides: ["ours"],
  };
  if (!limit) return base;
  const { starts, periodMs } = limit;
  const periods = Math.ceil(rateJobs / starts);
  const seconds = `${periodMs / 1000} s`;
  return {
    ...base,
    title:
      `rate limit: ${rateJobs} actions of ${SHORT_MS} ms, rateLimit ${starts} starts per ` +
      `${seconds}, maxParallelism 50 (ours only)`,
    short: `${rateJobs} actions, at most ${starts} starts per ${seconds}`,
    about:
      `All ${rateJobs} jobs are enqueued at once into a pool that may start at most ${starts} ` +
      `attempts in any ${seconds} (\`rateLimit: { starts: ${starts}, periodMs: ${periodMs} }\`): ` +
      "the limit, not the 50 slots, sets the pace, as with an upstream API's quota. Starts are " +
      'counted when the pool starts an attempt (its DEBUG "started" line, the run logging at ' +
      '"DEBUG"), not when the scheduler runs the function a little later. Checked: no window ' +
      `[s, s + ${seconds}) beginning at a start holds more than ${starts} starts; and the achieved ` +
      `rate, the least span the limit allows ${rateJobs} starts ((⌈${rateJobs} / ${starts}⌉ − 1) × ` +
      `${seconds} = ${((periods - 1) * periodMs) / 1000} s) divided by the measured span from the ` +
      `first start to the last, is at least ${MIN_ACHIEVED_RATE.toFixed(2)}, the limit's promise. Its cost ` +
      "per job is compared with 8, the same run without a limit.",
    rateLimit: limit,
    deadlineMs: 60_000 + 2 * periods * periodMs,
    baseline: "8",
  };
}

/** Scenario 8b: high-priority jobs arriving while a low-priority backlog drains. */
function priorityMix(): Scenario {
  const jobs = priorityLowJobs + priorityHighJobs;
  const maxParallelism = 10;
  const drainMs = (jobs * PRIORITY_JOB_MS) / maxParallelism;
  return {
    id: "8b",
    title:
      `priority: ${priorityLowJobs} low-priority actions of ${PRIORITY_JOB_MS} ms at once, then ` +
      `${priorityHighJobs} high-priority ones, one every ${HIGH_EVERY_MS} ms, maxParallelism ` +
      `${maxParallelism} (ours only)`,
    short: `${priorityHighJobs} high-priority actions into a backlog of ${priorityLowJobs.toLocaleString("en-US")} low`,
    about:
      `A backlog of ${priorityLowJobs} low-priority actions of ${PRIORITY_JOB_MS} ms ` +
      `(\`priority: "low"\`), enqueued at once, drains through ${maxParallelism} slots (about ` +
      `${Math.round(drainMs / 1000)} s) while a high-priority one (\`priority: "high"\`) arrives ` +
      `every ${HIGH_EVERY_MS} ms: how soon urgent work gets a slot in a busy pool. With every slot ` +
      `busy, one frees about every ${PRIORITY_JOB_MS / maxParallelism} ms. Checked: the high ` +
      `jobs' p50 start lag (enqueue to the start of their function) is at most ` +
      `${highLagLimitMs(PRIORITY_JOB_MS)} ms, the goal of one segment (${SEGMENT_MS} ms, the ` +
      `loop's unit) after a slot frees plus one job length (${PRIORITY_JOB_MS} ms), the longest ` +
      "a slot can take to free; and there is no priority inversion: no low job starts more than " +
      `one segment after a high job was enqueued while that high job still waits. The low jobs' ` +
      "lag is there for contrast. Its cost per job is reported alone (no run without priorities " +
      "to compare it with).",
    kind: "action",
    jobs,
    maxParallelism,
    ms: PRIORITY_JOB_MS,
    failTimes: 0,
    priorityMix: { low: priorityLowJobs, highEveryMs: HIGH_EVERY_MS },
    expectKind: "success",
    deadlineMs: 60_000 + 2 * (drainMs + priorityHighJobs * HIGH_EVERY_MS),
    sides: ["ours"],
  };
}

/** Scenario 9's simulated I/O: each job waits this long on the virtual clock (an LLM call, a fetch). */
const IO_MS = 2_000;
/** Scenario 9's deployment: actions it runs at once (the smallest instance class's limit). */
const ACTION_LIMIT = 16;
/** Scenario 9's ordinary pools run one action per slot, at most the deployment's limit. */
const ACTION_POOL_PARALLELISM = ACTION_LIMIT;
/** Scenario 9's executor pool: tasks in flight, spread over executors of EXECUTOR_CONCURRENCY. */
const TASK_POOL_PARALLELISM = 1_000;
/** Jobs per app mutation and batch call in 9a and 9b. */
const BATCH = 100;

/** Scenario 9: I/O-bound jobs under the deployment's limit of actions at once, as ordinary
 * actions on both pools (9a), and as tasks of an executor on ours, enqueued in batches (9b) or one
 * per app mutation (9c). */
function executorScenarios(): Scenario[] {
  const io = `${IO_MS / 1000} s of simulated I/O`;
  const common = {
    kind: "action" as const,
    ms: IO_MS,
    failTimes: 0,
    expectKind: "success" as const,
    actionLimit: ACTION_LIMIT,
  };
  /** Time to run `jobs` at `parallel` at once, with room for the pool's own pace. */
  const deadline = (jobs: number, parallel: number) =>
    120_000 + Math.ceil((2 * jobs * IO_MS) / parallel);
  const tasks = (id: string, jobs: number, perMutation: number): Scenario => {
    const batch = perMutation > 1;
    const enqueued = batch
      ? `enqueued ${perMutation} per enqueueTaskBatch`
      : "one enqueueTask per app mutation";
    return {
      ...common,
      id,
      title:
        `executor: ${jobs} tasks of ${io}, ${ACTION_LIMIT} actions at once, maxParallelism ` +
        `${TASK_POOL_PARALLELISM}, executor concurrency ${EXECUTOR_CONCURRENCY}, ${enqueued} (ours only)`,
      short: `${jobs.toLocaleString("en-US")} tasks in executors, ${batch ? "batch enqueue" : "one enqueue per mutation"}`,
      about:
        `The jobs of 9a as tasks of one executor (\`pool.executor({ concurrency: ` +
        `${EXECUTOR_CONCURRENCY} })\`): each executor action runs up to ${EXECUTOR_CONCURRENCY} ` +
        `of them at once, and the pool (maxParallelism ${TASK_POOL_PARALLELISM}) starts as many ` +
        `executors as it needs, under the same limit of ${ACTION_LIMIT} actions at once. ` +
        (batch
          ? `Enqueued ${perMutation} per \`enqueueTaskBatch\`, one call per app mutation.`
          : "Enqueued with one `enqueueTask` per app mutation, all at once, back to back."),
      jobs,
      maxParallelism: TASK_POOL_PARALLELISM,
      deadlineMs: deadline(jobs, TASK_POOL_PARALLELISM),
      enqueue: { perMutation, batch },
      tasks: { concurrency: EXECUTOR_CONCURRENCY },
      sides: ["ours"],
    };
  };
  return [
    {
      ...common,
      id: "9a",
      title:
        `I/O-bound actions: ${executorJobs} actions of ${io}, ${ACTION_LIMIT} actions at once, ` +
        `maxParallelism ${ACTION_POOL_PARALLELISM}, enqueued ${BATCH} per enqueueActionBatch`,
      short: `${executorJobs.toLocaleString("en-US")} I/O-bound actions, ${ACTION_LIMIT} actions at once`,
      about:
        `Actions that mostly wait on I/O (${io} each: a model call, a fetch) on a deployment that ` +
        `runs at most ${ACTION_LIMIT} actions at once (the smallest instance class; the harness ` +
        "holds back every action beyond that, apps' and pools' alike, until one ends). Each job is " +
        `an ordinary action, so the pool can run no more than ${ACTION_POOL_PARALLELISM} at once: ` +
        `maxParallelism ${ACTION_POOL_PARALLELISM}. Enqueued ${BATCH} per \`enqueueActionBatch\`, ` +
        "one call per app mutation. The baseline of the executor runs 9b and 9c.",
      jobs: executorJobs,
      maxParallelism: ACTION_POOL_PARALLELISM,
      deadlineMs: deadline(executorJobs, ACTION_POOL_PARALLELISM),
      enqueue: { perMutation: BATCH, batch: true },
    },
    tasks("9b", executorJobs, BATCH),
    tasks("9c", executorSingleJobs, 1),
  ];
}

/** Scenario 11's skew: the big tenant has this many times a small tenant's jobs, as in issue 40's
 * example (50,000 against 50 each); the sizes scale with BENCH_FAIR_SMALL_JOBS, the skew does not. */
const FAIR_SKEW = 1000;
/** Scenario 11's pool: 50 slots, as in the issue's example, and as many for one key, so that only
 * the order across keys (not keyParallelism) decides who waits. */
const FAIR_PARALLELISM = 50;
/** Scenario 11a/11b's jobs last one segment (100 ms), so the big backlog takes a while to drain
 * (50 slots start 500 a second) and a small tenant's wait is mostly the order's doing. */
const TENANT_JOB_MS = SEGMENT_MS;
/** Scenario 11a/11b's small tenants arrive this long after the big tenant's backlog. */
const SMALL_AFTER_MS = 1_000;
/** Scenario 11c's weights: §13's 3:1 example. */
const SPLIT_WEIGHTS = [3, 1];
/** Scenario 11d to 11f's weight: not the default 1, so that each key holds a share of its own. */
const OWN_WEIGHT = 2;
/** BENCH_FAIR_SHARE=0 leaves out the scenarios with fairness "share" (11b to 11g): 11a, the order
 * before fair share and the peer, runs alone. */
const fairShare = process.env.BENCH_FAIR_SHARE !== "0";

/** Scenario 11a/11b: one big tenant and many small ones, in the order `fairness` gives. */
function tenantsScenario(id: string, fairness: Fairness): Scenario {
  const tenants = {
    bigJobs: fairSmallJobs * FAIR_SKEW,
    small: fairTenants - 1,
    smallJobs: fairSmallJobs,
    smallAfterMs: SMALL_AFTER_MS,
  };
  const jobs = tenantJobs(tenants);
  const drainMs = (jobs * TENANT_JOB_MS) / FAIR_PARALLELISM;
  const n = (x: number) => x.toLocaleString("en-US");
  const share = fairness === "share";
  return {
    id,
    title:
      `tenants, fairness "${fairness}": 1 tenant with ${tenants.bigJobs} actions of ` +
      `${TENANT_JOB_MS} ms, then ${tenants.small} with ${tenants.smallJobs} each, ` +
      `maxParallelism ${FAIR_PARALLELISM}` +
      (share ? " (ours only)" : ""),
    short: `${tenants.small} small tenants behind one of ${n(tenants.bigJobs)} jobs, fairness "${fairness}"`,
    about:
      `A tenant enqueues ${n(tenants.bigJobs)} actions of ${TENANT_JOB_MS} ms at once; ` +
      `${SMALL_AFTER_MS / 1000} s later each of ${tenants.small} small tenants enqueues ` +
      `${tenants.smallJobs} (the skew of issue 40's example, 1 tenant with 50,000 jobs and 99 with ` +
      `50, at 1/${50 / tenants.smallJobs} of its size). On ours each tenant is a key ` +
      `(keyParallelism ${FAIR_PARALLELISM}, so that a key alone may use every slot) and the pool's ` +
      `\`fairness\` is "${fairness}": ` +
      (share
        ? "due jobs of different keys take the free slots in turn, so a small tenant waits for " +
          "its turn, not for the big backlog. "
        : "the earlier-due job starts first, across keys (the order before fair share), so the " +
          "small tenants wait behind the big backlog. The peer has no keys and runs the same " +
          "jobs in enqueue order: the tenants are labels of the app. ") +
      `Reported: each small tenant's p50 and p99 wait (enqueue to the start of its first attempt), ` +
      `across the small tenants, and the big tenant's.`,
    kind: "action",
    jobs,
    maxParallelism: FAIR_PARALLELISM,
    keyParallelism: FAIR_PARALLELISM,
    ms: TENANT_JOB_MS,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 120_000 + 4 * drainMs,
    fairness,
    tenants,
    ...(share ? { sides: ["ours"] as const } : {}),
  };
}

/** Scenario 11c to 11g: keys holding shares, ours only, fairness "share". */
function sharesScenario(
  id: string,
  parts: Pick<Scenario, "title" | "short" | "about" | "jobs" | "keys" | "shares">,
): Scenario {
  return {
    ...parts,
    id,
    kind: "action",
    maxParallelism: FAIR_PARALLELISM,
    keyParallelism: FAIR_PARALLELISM,
    ms: SHORT_MS,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 120_000 + parts.jobs * 100,
    fairness: "share",
    sides: ["ours"],
  };
}

function fairShareScenarios(): Scenario[] {
  const n = (x: number) => x.toLocaleString("en-US");
  const [heavy, light] = SPLIT_WEIGHTS;
  const pct = `${SHARE_TOLERANCE * 100} %`;
  const oneKey: Pick<Scenario, "title" | "short" | "about"> = {
    title:
      `one key with a share: ${fairCostJobs} actions of ${SHORT_MS} ms on one key of weight ` +
      `${OWN_WEIGHT}, maxParallelism ${FAIR_PARALLELISM} (ours only)`,
    short: `${n(fairCostJobs)} actions on one key with its own share`,
    about:
      `The baseline of 11e: ${n(fairCostJobs)} actions on one key that holds a share of ` +
      `its own (\`setKeyShare(key, { weight: ${OWN_WEIGHT} })\`, set before the run and not counted).`,
  };
  return [
    tenantsScenario("11a", "due"),
    ...(fairShare
      ? [
          tenantsScenario("11b", "share"),
          sharesScenario("11c", {
            title:
              `weights ${heavy}:${light}: ${fairSplitJobs} actions of ${SHORT_MS} ms on each of ` +
              `two keys, maxParallelism ${FAIR_PARALLELISM} (ours only)`,
            short: `two deep backlogs, weights ${heavy}:${light}`,
            about:
              `Two keys with ${n(fairSplitJobs)} actions of ${SHORT_MS} ms each, enqueued in turn, ` +
              `one of weight ${heavy} and one of weight ${light} (\`setKeyShare\`, set before the ` +
              `run). Checked (API-EXTENSIONS §13): in every ${SHARE_WINDOW_STARTS} consecutive ` +
              `starts the pool made while both keys still had jobs to start (counted in the order ` +
              `of its DEBUG "started" lines, the run logging at "DEBUG"), each key's starts are ` +
              `within ${pct} of its weighted share, plus ${SHARE_SLACK_STARTS} (the light key: ` +
              `${(SHARE_WINDOW_STARTS * light) / (heavy + light)} ± ` +
              `${(SHARE_TOLERANCE * SHARE_WINDOW_STARTS * light) / (heavy + light) + SHARE_SLACK_STARTS}).`,
            jobs: 2 * fairSplitJobs,
            keys: { count: 2, layout: "interleaved" },
            shares: { weights: SPLIT_WEIGHTS, checkSplit: true },
          }),
          sharesScenario("11d", {
            ...oneKey,
            jobs: fairCostJobs,
            keys: { count: 1, layout: "grouped" },
            shares: { weights: [OWN_WEIGHT] },
          }),
          sharesScenario("11e", {
            title:
              `${n(fairIdleKeys)} idle keys with shares: the actions of 11d, while ` +
              `${fairIdleKeys} other keys hold shares, maxParallelism ${FAIR_PARALLELISM} (ours only)`,
            short: `${n(fairCostJobs)} actions on one key, ${n(fairIdleKeys)} other keys holding shares`,
            about:
              `The jobs of 11d, while ${n(fairIdleKeys)} other keys hold shares of their own ` +
              `(weight ${OWN_WEIGHT}, set before the run and not counted) and have no job: ` +
              "§13 promises that documents read and written per started job do not grow with " +
              "the number of keys holding shares. Compared with 11d.",
            jobs: fairCostJobs,
            keys: { count: 1, layout: "grouped" },
            shares: { weights: [OWN_WEIGHT], idleKeys: fairIdleKeys },
          }),
          sharesScenario("11f", {
            title:
              `${n(fairCostJobs)} keys with shares: ${fairCostJobs} actions of ${SHORT_MS} ms, one ` +
              `per key, each key of weight ${OWN_WEIGHT}, maxParallelism ${FAIR_PARALLELISM} (ours only)`,
            short: `${n(fairCostJobs)} actions on as many keys, each with its own share`,
            about:
              `The jobs of 11d, each on a key of its own that holds a share (weight ${OWN_WEIGHT}, ` +
              "set before the run and not counted): every key is active and takes turns with the " +
              "others. Compared with 11g, the same keys without shares of their own (a key's " +
              "first job costs its key's rows, shares or not: 7b measures what keys cost).",
            jobs: fairCostJobs,
            keys: { count: fairCostJobs, layout: "interleaved" },
            shares: { weights: [OWN_WEIGHT] },
          }),
          sharesScenario("11g", {
            title:
              `${n(fairCostJobs)} keys without shares: ${fairCostJobs} actions of ${SHORT_MS} ms, ` +
              `one per key, maxParallelism ${FAIR_PARALLELISM} (ours only)`,
            short: `${n(fairCostJobs)} actions on as many keys, no shares`,
            about:
              "The baseline of 11f: its keys and jobs, every key at the default share (weight 1, " +
              "no row of its own).",
            jobs: fairCostJobs,
            keys: { count: fairCostJobs, layout: "interleaved" },
          }),
        ]
      : []),
  ];
}

const SCENARIOS: Scenario[] = [
  {
    id: "1a",
    title: `burst: ${burstJobs} actions of 1 s, maxParallelism 10`,
    short: "burst, 10 slots",
    about:
      "One-second actions, all enqueued at once, into a pool that runs 10 at a time: the common " +
      "case of fanning out slow calls (emails, API or LLM requests) under a concurrency limit. The " +
      "limit sets the total time, so what differs is the pool's cost per job and whether it keeps " +
      "every slot busy.",
    kind: "action",
    jobs: burstJobs,
    maxParallelism: 10,
    ms: 1000,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 60_000 + burstJobs * 400,
    conflicts: true,
  },
  {
    id: "1b",
    title: `burst: ${burstJobs} actions of 1 s, maxParallelism 50`,
    short: "burst, 50 slots",
    about:
      "The same burst with 50 slots: jobs start and finish five times as often, so the pool does more " +
      "per pass and its batching matters more.",
    kind: "action",
    jobs: burstJobs,
    maxParallelism: 50,
    ms: 1000,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 60_000 + burstJobs * 100,
  },
  {
    id: "2",
    title: `retries: ${retryJobs} actions of 1 s failing twice, retry {maxAttempts 5, initialBackoffMs 250, base 2}, maxParallelism 10`,
    short: "retries",
    about:
      "Every job fails twice and succeeds on its third attempt, with exponential backoff: what a flaky " +
      "upstream costs. Per-job figures cover all three attempts.",
    kind: "action",
    jobs: retryJobs,
    maxParallelism: 10,
    ms: 1000,
    failTimes: 2,
    retry,
    expectKind: "success",
    deadlineMs: 60_000 + retryJobs * 1200,
  },
  {
    id: "3",
    title: `mutations: ${mutationJobs} mutations, maxParallelism 10`,
    short: "mutations",
    about:
      "Mutation jobs, which run in one transaction and finish at once: the pool's own " +
      "scheduling, not the work, decides how soon they start and how long the batch takes.",
    kind: "mutation",
    jobs: mutationJobs,
    maxParallelism: 10,
    ms: 0,
    failTimes: 0,
    expectKind: "success",
    deadlineMs: 60_000 + mutationJobs * 200,
    conflicts: true,
  },
  backlog("4a", backlogSmall),
  backlog("4b", backlogJobs),
  ...(large ? [backlog("4c", backlogLarge)] : []),
  {
    id: "5",
    title: `cancel: ${cancelJobs} actions of 1 s scheduled 10 s ahead, cancelAll 1 s later, maxParallelism 10`,
    short: "cancel all",
    about:
      "Actions scheduled 10 s ahead, all canceled by `cancelAll` one second later: what " +
      "canceling a large queue costs. Every job still gets its onComplete, with result `canceled`; " +
      "makespan is how long until the last one did.",
    kind: "action",
    jobs: cancelJobs,
    maxParallelism: 10,
    ms: 1000,
    failTimes: 0,
    runAfter: 10_000,
    cancelAllAfter: 1000,
    expectKind: "canceled",
    deadlineMs: 60_000 + cancelJobs * 400,
    conflicts: true,
  },
  {
    id: "6",
    title: `trickle: one action of ${SHORT_MS} ms every 500 ms for ${trickleMs / 1000} s, maxParallelism 10`,
    short: "trickle",
    about:
      "One short action every 500 ms: a mostly idle pool, the usual state of a background " +
      "queue. The cost is in how the pool wakes up and goes back to sleep; start lag shows how fast " +
      "it reacts to a new job.",
    kind: "action",
    jobs: Math.floor(trickleMs / 500),
    maxParallelism: 10,
    ms: SHORT_MS,
    failTimes: 0,
    trickleEveryMs: 500,
    expectKind: "success",
    deadlineMs: trickleMs + 60_000,
    conflicts: true,
  },
  keyed("7a"),
  { ...keyed("7b", "interleaved"), conflicts: true },
  keyed("7c", "grouped"),
  rateLimited("8"),
  rateLimited("8a", RATE_LIMIT),
  priorityMix(),
  ...executorScenarios(),
  ...fairShareScenarios(),
];

const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
const sides = (process.env.BENCH_SIDES ?? "ours,peer").split(",").map((s) => s.trim()) as Array<
  "ours" | "peer"
>;
/** Whether `BENCH_ONLY` selects `id`: named, or numbered by an id no scenario has ("9": 9a to 9c). */
const isSelected = (id: string) =>
  !only ||
  only.includes(id) ||
  only.some((o) => !SCENARIOS.some((s) => s.id === o) && id.replace(/[a-z]+$/, "") === o);
const selected = SCENARIOS.filter((s) => isSelected(s.id));
const fromJson = process.env.BENCH_FROM_JSON;

const out = (s: string) => process.stdout.write(s);

/** Prints the tables and writes the documents (unless BENCH_NO_WRITE=1). */
function publish(run: BenchRun) {
  out(renderConsole(run));
  if (process.env.BENCH_NO_WRITE === "1") return;
  for (const doc of renderDocuments(run)) {
    mkdirSync(dirname(doc.path), { recursive: true });
    writeFileSync(doc.path, doc.text);
  }
}

if (fromJson) {
  it(`renders ${SUMMARY_PATH} and its detail from ${fromJson}`, () =>
    publish(mergeRuns(fromJson.split(",").map((path) => loadRun(path.trim())))));
} else {
  const runs = new Map<string, ScenarioRun>();
  const benchStart = performance.now();
  const commit = sourceCommit();

  let schedules: ScheduleBenchResult | undefined;
  describe("bench", () => {
    for (const sc of selected) {
      for (const side of sides.filter((s) => sc.sides?.includes(s) ?? true)) {
        it(
          `${sc.id} ${side}: ${sc.title}`,
          async () => {
            const logged = { error: 0, warn: 0 };
            vi.spyOn(console, "log").mockImplementation(() => {});
            vi.spyOn(console, "info").mockImplementation(() => {});
            vi.spyOn(console, "debug").mockImplementation(() => {});
            vi.spyOn(console, "warn").mockImplementation(() => void logged.warn++);
            vi.spyOn(console, "error").mockImplementation(() => void logged.error++);
            let r: Result;
            try {
              r = await runScenario(side, sc);
            } finally {
              vi.restoreAllMocks();
            }
            const run = runs.get(sc.id) ?? { scenario: sc };
            run[side] = measured(r);
            runs.set(sc.id, run);
            out(progressLine(r, logged));
            expect(
              r.finished,
              `${side}: every job's onComplete within ${sc.deadlineMs} virtual ms`,
            ).toBe(true);
            expect(r.lost, `${side}: lost onComplete calls`).toBe(0);
            expect(r.duplicates, `${side}: duplicate onComplete calls`).toBe(0);
            expect(
              r.wrongKind,
              `${side}: onComplete calls with a result other than ${sc.expectKind}`,
            ).toBe(0);
            expect(r.maxConcurrency, `${side}: highest concurrency`).toBeLessThanOrEqual(
              sc.maxParallelism,
            );
            if (sc.actionLimit) {
              expect(
                r.actions?.maxRunning,
                `${side}: most actions running at once (the simulated limit)`,
              ).toBeLessThanOrEqual(sc.actionLimit);
            }
            if (r.keyChecks) {
              const k = r.keyChecks;
              expect(
                k.maxConcurrency,
                `${side}: highest concurrency of one key (key ${k.maxConcurrencyKey})`,
              ).toBeLessThanOrEqual(sc.keyParallelism ?? 1);
              expect(
                k.outOfOrder,
                `${side}: jobs started out of their key's order (first: ${k.firstOutOfOrder})`,
              ).toBe(0);
            }
            if (sc.rateLimit) {
              const rc = r.rateChecks!;
              const { starts, periodMs } = sc.rateLimit;
              expect(rc.starts, `${side}: starts the pool logged, one per attempt`).toBe(
                sc.jobs * (sc.failTimes + 1),
              );
              expect(
                rc.busiest,
                `${side}: most starts in one window of ${periodMs} ms (from ${rc.busiestAt} ms)`,
              ).toBeLessThanOrEqual(starts);
              expect(
                rc.achieved,
                `${side}: achieved start rate, of the limit (span ${rc.spanMs} ms, least ${rc.minSpanMs} ms)`,
              ).toBeGreaterThanOrEqual(MIN_ACHIEVED_RATE);
            }
            if (r.shareChecks) {
              const c = r.shareChecks;
              expect(
                c.windows,
                `${side}: windows of ${SHARE_WINDOW_STARTS} starts while every key had jobs`,
              ).toBeGreaterThan(0);
              expect(
                c.outside,
                `${side}: windows off the weights (worst: ${JSON.stringify(c.worst)})`,
              ).toBe(0);
            }
            if (sc.priorityMix) {
              const pc = r.priorityChecks!;
              expect(
                lagStats(pc.highLags).p50,
                `${side}: high-priority start lag p50 (virtual ms)`,
              ).toBeLessThanOrEqual(highLagLimitMs(sc.ms));
              expect(
                pc.inversions,
                `${side}: low starts ahead of a waiting high job (first: ${pc.firstInversion})`,
              ).toBe(0);
            }
          },
          60 * 60_000,
        );
      }
    }
    if (isSelected("10") && sides.includes("ours")) {
      it(
        `10 ours: ${scheduleBench.firing} schedules every minute for ${scheduleBench.durationMs / 60_000} min, and ${scheduleBench.idle} idle ones`,
        async () => {
          schedules = await runScheduleBench(scheduleBench);
          out(scheduleLine(schedules));
          const { firing, idle } = schedules;
          expect(firing.enqueued, "a run for every time (no overlap: each run ends at once)").toBe(
            firing.times,
          );
          expect(firing.fires.transactions, "one fire per time").toBe(firing.times);
          expect(idle.window.transactions, "pool transactions between times").toBe(0);
          expect(
            idle.probeFires.maxDocumentsRead,
            "a fire's reads among the idle schedules, against the firing run's largest",
          ).toBeLessThanOrEqual(firing.fires.maxDocumentsRead);
        },
        60 * 60_000,
      );
    }
  });

  afterAll(() => {
    if (runs.size === 0 && schedules === undefined) return;
    const run: BenchRun = {
      meta: runMeta((performance.now() - benchStart) / 1000, STEP_MS, SETTLE_MS, commit),
      // In SCENARIOS order, whatever order the runs finished in.
      scenarios: SCENARIOS.flatMap((sc) => runs.get(sc.id) ?? []),
      ...(schedules !== undefined ? { schedules } : {}),
    };
    saveRun(RUN_JSON, run);
    publish(run);
    out(`measurements saved to ${RUN_JSON}\n`);
  });
}
