/**
 * Executors (scenario 9): I/O-bound jobs on a deployment that runs at most so many actions at once,
 * as ordinary actions on both pools (9a) and as tasks of an executor on ours (9b: batch enqueues,
 * 9c: one enqueue per app mutation). Owns the four-way table, the targets of issue 23 and their
 * verdicts, and the section's line for "At a glance". The figures are bench/report/figures.ts's;
 * the targets are stated here, each checked on what was measured.
 */
import type { Scenario } from "../harness.js";
import type { BenchRun, Measured, ScenarioRun } from "../results.js";
import {
  actionSeconds,
  billedCostPerJob,
  billedKibPerJob,
  allCallsPerJob,
  DOLLARS_PER_CALL,
  DOLLARS_PER_GIB,
  EXECUTOR_FUNCTION,
  executorActions,
  perJob,
  poolCallsWithExecutorsPerJob,
  utilization,
} from "./figures.js";
import { aboutOf, fmt, fmtMs, fmtRatio, ratioOf, table, type SectionLink } from "./format.js";
import { breakdown } from "./tables.js";

/** The executors section's heading (and anchor, `anchorOf`). */
export const EXECUTORS_HEADING = "Executors: I/O-bound jobs under a limit of actions at once";

/** Issue 23's targets for executors (9b against the peer's 9a). */
const MAKESPAN_FRACTION = 1 / 50;
const CALLS_BATCH = 0.2;
const CALLS_SINGLE = 1.2;
const COST_FRACTION = 0.2;

/** The component's function an executor reports to. */
const REPORT_FUNCTION = "ours:runners/executor:report (mutation)";

/** The four runs the section compares: (a) the peer's actions, (b) ours, (c) ours in executors,
 * enqueued in batches and one per mutation. */
type Sides = { a?: Measured; b?: Measured; c?: Measured; single?: Measured };

/** The executor scenarios of a run: the one on both sides (actions) and ours-only task runs. */
function executorRuns(run: BenchRun) {
  const withLimit = run.scenarios.filter((s) => s.scenario.actionLimit !== undefined);
  const actions = withLimit.find((s) => !s.scenario.tasks);
  const tasks = withLimit.filter((s) => s.scenario.tasks);
  const batch = tasks.find((s) => s.scenario.enqueue?.batch);
  const single = tasks.find((s) => !s.scenario.enqueue?.batch);
  const sides: Sides = {
    a: actions?.peer,
    b: actions?.ours,
    c: batch?.ours,
    single: single?.ours,
  };
  return { withLimit, actions, batch, single, sides };
}

/** How a run enqueued its jobs, in words. */
function enqueuedAs(sc: Scenario): string {
  const per = sc.enqueue?.perMutation ?? 100;
  const call = sc.tasks ? "enqueueTask" : "enqueueAction";
  if (sc.enqueue?.batch) return `${per} per \`${call}Batch\``;
  return per === 1
    ? `one \`${call}\` per app mutation`
    : `${per} \`${call}\` calls per app mutation`;
}

/** The pool's estimated cost per task in calls, and in bandwidth. */
const callCost = (r: Measured) => poolCallsWithExecutorsPerJob(r) * DOLLARS_PER_CALL;
const bandwidthCost = (r: Measured) => billedCostPerJob(r, "pool") - callCost(r);

/** The pool's estimated cost per task with bandwidth by the documents' own sizes (no 1 KiB
 * minimum): how much of the estimate the minimum makes. */
const costAtActualSize = (r: Measured) =>
  callCost(r) +
  (perJob(r, r.counters.usage.pool.bytesRead + r.counters.usage.pool.bytesWritten) / 2 ** 30) *
    DOLLARS_PER_GIB;

const micro = (dollars: number) => (Number.isNaN(dollars) ? "—" : `${fmt(dollars * 1e6, 3)} µ$`);
const pct = (r: Measured, n: number) => fmt(perJob(r, n), 3);

type Row = { label: string; cell: (r: Measured, a?: Measured) => string };

const ROWS: Row[] = [
  { label: "scenario, jobs", cell: (r) => `${r.scenario.id}, ${r.scenario.jobs}` },
  { label: "enqueued", cell: (r) => enqueuedAs(r.scenario) },
  {
    label: "maxParallelism (executor concurrency)",
    cell: (r) =>
      `${r.scenario.maxParallelism}${r.scenario.tasks ? ` (${r.scenario.tasks.concurrency})` : ""}`,
  },
  {
    label: "makespan, virtual s (÷ (a))",
    cell: (r, a) =>
      `${fmt(r.makespanMs / 1000)} (${fmtRatio(ratioOf(r.makespanMs, a?.makespanMs))})`,
  },
  {
    label: "slots kept busy (task time ÷ (maxParallelism × makespan))",
    cell: (r) => fmt(utilization(r), 3),
  },
  {
    label: "pool function calls / task, executor actions included",
    cell: (r) => fmt(poolCallsWithExecutorsPerJob(r), 3),
  },
  {
    label: "of which executor actions / their reports",
    cell: (r) =>
      r.scenario.tasks
        ? `${pct(r, executorActions(r))} / ${pct(r, r.counters.byFunction.get(REPORT_FUNCTION) ?? 0)}`
        : "—",
  },
  {
    label: "pool's documents read / written per task",
    cell: (r) =>
      `${pct(r, r.counters.usage.pool.docsRead)} / ${pct(r, r.counters.usage.pool.docsWritten)}`,
  },
  {
    label: "pool's billed bandwidth / task (KiB, each document ≥ 1 KiB)",
    cell: (r) => fmt(billedKibPerJob(r, "pool")),
  },
  {
    label: "**estimated billed cost / task, pool** (÷ (a))",
    cell: (r, a) =>
      `**${micro(billedCostPerJob(r, "pool"))}** (${fmtRatio(ratioOf(billedCostPerJob(r, "pool"), a && billedCostPerJob(a, "pool")))})`,
  },
  {
    label: "of which calls / bandwidth",
    cell: (r) => `${micro(callCost(r))} / ${micro(bandwidthCost(r))}`,
  },
  {
    label: "the same, bandwidth by the documents' own sizes (÷ (a))",
    cell: (r, a) =>
      `${micro(costAtActualSize(r))} (${fmtRatio(ratioOf(costAtActualSize(r), a && costAtActualSize(a)))})`,
  },
  {
    label: "all function calls / task (the app's too)",
    cell: (r) => fmt(allCallsPerJob(r), 3),
  },
  {
    label: "estimated billed cost / task, all functions (÷ (a))",
    cell: (r, a) =>
      `${micro(billedCostPerJob(r, "all"))} (${fmtRatio(ratioOf(billedCostPerJob(r, "all"), a && billedCostPerJob(a, "all")))})`,
  },
  {
    label: "action-seconds held, in all (÷ (a))",
    cell: (r, a) =>
      `${fmt(actionSeconds(r), 0)} (${fmtRatio(ratioOf(actionSeconds(r), a && actionSeconds(a)))})`,
  },
  {
    label: "of which scheduled actions / actions they called",
    cell: (r) =>
      r.actions
        ? `${fmt(r.actions.topLevel.ms / 1000, 0)} / ${fmt(r.actions.nested.ms / 1000, 0)}`
        : "—",
  },
  {
    label: "actions the scheduler started",
    cell: (r) => (r.actions ? String(r.actions.topLevel.count) : "—"),
  },
  {
    label: "most actions at once (limit) / most waiting for a slot",
    cell: (r) =>
      r.actions
        ? `${r.actions.maxRunning} (${r.actions.limit ?? "none"}) / ${r.actions.maxWaiting}`
        : "—",
  },
  {
    label: "most action executions at once, nested calls counted (the counting rule)",
    cell: (r) => (r.actions ? String(r.actions.maxExecutions ?? "—") : "—"),
  },
  {
    label: "most jobs running at once (maxParallelism)",
    cell: (r) => `${r.maxConcurrency} (${r.scenario.maxParallelism})`,
  },
  {
    label: "onComplete calls: success / lost / duplicate / wrong result",
    cell: (r) =>
      `${r.completions.success} / ${r.lost} / ${r.duplicates} / ${r.wrongKind}` +
      (r.finished ? "" : " (deadline hit)"),
  },
  { label: "harness wall-clock (real s)", cell: (r) => fmt(r.wallSeconds, 1) },
];

const COLUMNS: Array<{ header: string; get: (s: Sides) => Measured | undefined }> = [
  { header: "(a) peer, actions", get: (s) => s.a },
  { header: "(b) ours, actions", get: (s) => s.b },
  { header: "(c) ours, executors, batches", get: (s) => s.c },
  { header: "(c) ours, executors, one per mutation", get: (s) => s.single },
];

function fourWayTable(sides: Sides): string {
  return table(
    ["metric", ...COLUMNS.map((c) => c.header)],
    ["---", ...COLUMNS.map(() => "---:")],
    ROWS.map((row) => [
      row.label,
      ...COLUMNS.map((c) => {
        const r = c.get(sides);
        return r ? row.cell(r, sides.a) : "not run";
      }),
    ]),
  );
}

const met = (ok: boolean) => (ok ? "**Met**" : "**Missed**");

/** Whether every onComplete came exactly once, with the expected result, in a run. */
const exactlyOnce = (r: Measured) => r.finished && !r.lost && !r.duplicates && !r.wrongKind;

/** Issue 23's targets, each with what was measured and whether it was met ("not run" when a run
 * it needs is missing). */
export function executorTargets(sides: Sides): string[] {
  const { a, c, single } = sides;
  const lines: string[] = [];
  if (a && c) {
    const x = c.makespanMs / a.makespanMs;
    lines.push(
      `Makespan of (c) at most 1/${1 / MAKESPAN_FRACTION} of (a)'s: ${met(x <= MAKESPAN_FRACTION)}, ` +
        `${fmtMs(c.makespanMs)} against ${fmtMs(a.makespanMs)}, 1/${fmt(1 / x, 1)}` +
        (c.scenario.jobs === a.scenario.jobs
          ? ""
          : ` (**not comparable**: ${c.scenario.jobs} tasks against ${a.scenario.jobs})`) +
        `; (c) kept ${fmt(utilization(c), 3)} of its ${c.scenario.maxParallelism} slots busy on ` +
        `average, (a) ${fmt(utilization(a), 3)} of its ${a.scenario.maxParallelism}.`,
    );
  } else lines.push("Makespan of (c) against (a): not run.");
  if (c) {
    const n = poolCallsWithExecutorsPerJob(c);
    lines.push(
      `Pool function calls per task of (c), batches of 100, at most ${CALLS_BATCH}: ${met(n <= CALLS_BATCH)}, ${fmt(n, 3)}.`,
    );
  } else lines.push("Pool function calls per task of (c), batches: not run.");
  if (single) {
    const n = poolCallsWithExecutorsPerJob(single);
    lines.push(
      `Pool function calls per task of (c), one enqueue per mutation, at most ${CALLS_SINGLE}: ` +
        `${met(n <= CALLS_SINGLE)}, ${fmt(n, 3)} (${single.scenario.jobs} tasks).`,
    );
  } else lines.push("Pool function calls per task of (c), one enqueue per mutation: not run.");
  if (a && c) {
    const x = billedCostPerJob(c, "pool") / billedCostPerJob(a, "pool");
    const docs = (r: Measured) =>
      fmt(perJob(r, r.counters.usage.pool.docsRead + r.counters.usage.pool.docsWritten), 1);
    lines.push(
      `Estimated billed cost per task of (c) at most ${COST_FRACTION}× (a)'s: ${met(x <= COST_FRACTION)}, ` +
        `${micro(billedCostPerJob(c, "pool"))} against ${micro(billedCostPerJob(a, "pool"))}, ${fmtRatio(x)}×: ` +
        `calls ${micro(callCost(c))} against ${micro(callCost(a))}, bandwidth ` +
        `${micro(bandwidthCost(c))} against ${micro(bandwidthCost(a))} (the pool read and wrote ` +
        `${docs(c)} documents per task against ${docs(a)}, each counted as at least 1 KiB; by ` +
        `their own sizes, ${fmtRatio(costAtActualSize(c) / costAtActualSize(a))}×).`,
    );
  } else lines.push("Estimated billed cost per task of (c) against (a): not run.");
  const ran = COLUMNS.flatMap((col) => {
    const r = col.get(sides);
    return r ? [{ header: col.header, r }] : [];
  });
  if (ran.length) {
    const bad = ran.filter(({ r }) => !exactlyOnce(r));
    lines.push(
      bad.length === 0
        ? `Every onComplete exactly once, with the expected result: **Met** in all ${ran.length} runs.`
        : `Every onComplete exactly once: **Missed** in ${bad.map((b) => b.header).join(", ")}.`,
    );
  }
  return lines;
}

/** The executor runs' verdicts for "At a glance", pointing to their section with `link`. */
export function executorsGlance(run: BenchRun, link: SectionLink): string {
  const { withLimit, sides } = executorRuns(run);
  if (withLimit.length === 0) return "";
  return `**Executors** (I/O-bound jobs on a deployment that runs ${withLimit[0].scenario.actionLimit} actions at once: (a) the peer's actions, (c) our executors; see ${link("Executors", EXECUTORS_HEADING)}):

${executorTargets(sides)
  .map((line) => `- ${line}`)
  .join("\n")}

`;
}

/** What the section says about how it is measured (the same for every run of it). */
function method(limit: number, ioMs: number): string {
  return `How it is run and measured:

- **The limit of ${limit} actions at once** is simulated in the harness (\`bench/actionSlots.ts\`):
  convex-test runs every action inside an execution context of its own, and the bench holds each
  action the scheduler starts until fewer than ${limit} such actions run, in the order they came
  (apps' and pools' alike: the workers, the executor actions, the peer's batch workers).
  Mutations and queries are never held back. An action that an action calls (\`ctx.runAction\`: the
  job's own action under a worker, in (a) and (b)) runs inside its caller's slot: counting it too
  would let callers that hold every slot wait forever on their callees. A deployment that counts
  those calls would run (a) and (b) slower, not (c), which calls no action.
- **The I/O**: a job's handler awaits a ${fmtMs(ioMs)} timer on the virtual clock: in (a) and (b) the
  action \`jobs.work\`, in (c) the task \`io\` of the executor \`tasks.run\` (\`bench/app/tasks.ts\`).
- **Makespan**: virtual time from the first enqueue to the last onComplete.
- **Pool function calls per task**: every function of the pool's component (enqueue mutations,
  loop passes, workers, executor reports and check-ins, deliveries of onComplete) and the executor
  actions (\`${EXECUTOR_FUNCTION.replace(" (action)", "")}\`: the app exports them, but they are the
  pool's runners), per task. Not counted there: the app's own enqueue mutations, the jobs' own
  actions in (a) and (b), and onComplete; the "all function calls" row has them.
- **Estimated billed cost per task**: the pool's calls at $${DOLLARS_PER_CALL * 1e6} per million,
  plus the database bandwidth of the pool's functions (every document read or written, each
  counted as at least 1 KiB, as convex-test's metrics see them) at $${DOLLARS_PER_GIB.toFixed(2)} per GiB, in
  millionths of a dollar (µ$). The "all functions" row adds the app's calls and bandwidth. Neither
  counts action compute, which is billed on the action-seconds below, nor storage.
- **Action-seconds held**: the sum of every action's time from its start (after any wait for a
  slot) to its end, on the virtual clock: what action compute is billed on. The actions that
  actions called are counted too (they are billed as actions of their own), shown apart.`;
}

/** The executors section: the runs, how they are measured, the targets, the four-way table and
 * where the executor runs' calls go. */
export function executorsSection(run: BenchRun, level: number): string {
  const { withLimit, actions, batch, single, sides } = executorRuns(run);
  if (withLimit.length === 0) return "";
  const h = "#".repeat(level);
  const limit = withLimit[0].scenario.actionLimit!;
  const described = (s: ScenarioRun | undefined, name: string) =>
    s ? `- ${name}: ${s.scenario.id}. ${s.scenario.title}. ${aboutOf(s.scenario).trim()}` : "";
  const scenarios = [
    described(actions, "(a) and (b)"),
    described(batch, "(c), batches"),
    described(single, "(c), one enqueue per mutation"),
  ].filter(Boolean);
  const details = [sides.c, sides.single].flatMap((r) =>
    r ? [`${h}# Where the calls go: ${r.scenario.id}, ours\n\n${breakdown(r)}`] : [],
  );
  return `${h} ${EXECUTORS_HEADING}

The same I/O-bound jobs on a deployment that runs at most ${limit} actions at once, three ways: (a)
the peer's pool and (b) ours, each job an ordinary action, maxParallelism ${actions?.scenario.maxParallelism ?? "—"}; (c) ours,
each job a task of an executor (API-EXTENSIONS section 8), maxParallelism
${batch?.scenario.maxParallelism ?? single?.scenario.maxParallelism ?? "—"}, enqueued in batches and one per app mutation.

${scenarios.join("\n")}

${method(limit, withLimit[0].scenario.ms)}

Targets (issue 23), as measured:

${executorTargets(sides)
  .map((line) => `- ${line}`)
  .join("\n")}

${fourWayTable(sides)}

${details.join("\n\n")}

`;
}
