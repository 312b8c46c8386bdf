/**
 * The document's fixed prose around the figures: what was compared (versions, machine, the
 * command, commit and date of the run and of any run merged into it), how it is measured, what it
 * does not show, and how to run it again. Only the run's description (`meta`) and a few of its
 * figures (harness times) fill it in: it never renders a table or a verdict.
 */
import { PRIORITY_GRACE_MS } from "../checks.js";
import type { BenchRun } from "../results.js";
import { MIN_RATE } from "./format.js";

/** What was compared, on what, and the command, commit and date of the run (and of each run
 * merged into it). */
export function compared(run: BenchRun): string {
  const { meta } = run;
  const v = meta.versions;
  const m = meta.machine;
  return `- **Ours**: convex-workpool ${v.ours} (this repository${meta.commit ? `, commit ${meta.commit}` : ""}).
- **Peer**: @convex-dev/workpool ${v.peer}.
- **Backend**: convex-test ${v.convexTest}, Convex's embedded test backend, with a virtual clock;
  convex ${v.convex}.
- **Machine**: ${m.cpu}, ${m.cores} cores, ${m.memoryGB} GB, ${m.os}; Node ${v.node}.
- **Command**: \`${meta.command}\`, on ${meta.date.slice(0, 10)}, ${meta.wallSeconds.toFixed(0)} s wall-clock for the whole run.${(
    meta.also ?? []
  )
    .map(
      (a) =>
        `\n- **Also**: scenario${a.ids.length === 1 ? "" : "s"} ${a.ids.join(", ")} from \`${a.command}\`` +
        `${a.commit ? ` (commit ${a.commit})` : ""}, on ${a.date.slice(0, 10)}, ${a.wallSeconds.toFixed(0)} s.`,
    )
    .join("")}`;
}

/** The run in one line, for the detail document's head: "\`npm run bench\` at commit 22649e3, on
 * 2026-11-23; scenario 4c from \`...\` at commit 3844639, on 2026-11-23". */
export function runLine(run: BenchRun): string {
  const at = (commit: string | undefined, date: string) =>
    `${commit ? ` at commit ${commit}` : ""}, on ${date.slice(0, 10)}`;
  const also = (run.meta.also ?? []).map(
    (a) =>
      `; scenario${a.ids.length === 1 ? "" : "s"} ${a.ids.join(", ")} from \`${a.command}\`` +
      at(a.commit, a.date),
  );
  return `\`${run.meta.command}\`${at(run.meta.commit, run.meta.date)}${also.join("")}`;
}

export function howMeasured(run: BenchRun): string {
  const { stepMs, settleMs } = run.meta;
  return `- **Same workload, same app code, both sides.** Each scenario runs twice, each time on a
  fresh convex-test backend with one pool installed (as component \`ours\` or \`peer\`), driven by the
  same app code (\`bench/app/pools.ts\`) through each package's public client: one
  \`enqueueAction\` / \`enqueueMutation\` call per job, 100 jobs per app mutation (one in the
  trickle), every job with an \`onComplete\` mutation that inserts one row.
- **Keys, ours against ours.** The key scenarios (7) run once, on ours (the peer has no keys): the
  same app code, with the \`key\` enqueue option set on the keyed runs only; everything else,
  pool options included, is the same as in their unkeyed baseline.
- **Rate limit and priority, ours only.** The rate-limited run (8a) sets the pool's \`rateLimit\`
  and \`logLevel: "DEBUG"\`; the harness records the virtual time of each DEBUG \`"started"\` line,
  which the pool logs in the loop pass that starts an attempt, and prints none of them: the
  limit is checked on the pool's own starts, not on the functions' (the scheduler runs a
  function a little after the pool starts it, which can bunch them). Its baseline (8) is the same
  run without \`rateLimit\` (or \`logLevel\`). In the priority mix (8b) the low jobs are enqueued
  100 per app mutation, then each high job in an app mutation of its own; start lags are the jobs'
  own, as above.
- **Executors, under a limit of actions at once.** The executor scenarios (9a to 9c) enqueue 100
  jobs per batch call (\`enqueueActionBatch\` on both sides, \`enqueueTaskBatch\`), or one
  \`enqueueTask\` per app mutation (9c), and run under a simulated limit of actions at once
  (\`bench/actionSlots.ts\`): their section says how, and what their cost estimate counts.
- **Virtual clock.** Timers and \`Date\` are faked and advanced ${stepMs} ms at a time, with one real
  tick between steps. After the last onComplete the run continues for ${settleMs / 1000} s of virtual
  time: the pool winding down is part of its cost, and a late duplicate onComplete would show.
- **Function calls, documents and bytes** are counted inside convex-test (\`bench/instrument.ts\`):
  calls from its execution contexts (component, function, type), documents and bytes from its
  per-transaction metrics, attributed to the function that did the reading or writing (a nested
  call's usage belongs to the callee). convex-test's own helpers (\`t.run\`, scheduled-function
  bookkeeping) are not counted, and scheduling a function does not count as a write. Per-job
  figures are totals divided by the number of jobs. Pool function calls are the pool's own;
  documents and bytes also include the app's enqueue mutations, the jobs themselves and their
  onComplete (identical on both sides, so their ratios slightly understate the difference between
  the pools): the full tables give the pool's share separately.
- **Start lag**: from enqueue to the start of the job's first attempt, as the job recorded it.
  **Makespan**: from the first enqueue to the last onComplete. **Utilization** (action scenarios):
  the attempts' total busy time / (maxParallelism × makespan); 1 means every slot was busy all the
  time. **Concurrency**: attempts running at once, as the jobs saw it.
- **Largest single transaction**: the most documents (and bytes) any one transaction read, to set
  against Convex's per-transaction limits (32,000 documents and 16 MiB, as convex-test enforces
  them): a pool whose transactions grow with its backlog would approach them.
- **Correctness is checked on every run**: the bench fails (non-zero exit) on a lost or duplicate
  onComplete, an onComplete with the wrong result kind, or more attempts running at once than
  maxParallelism; in the keyed runs also on a key with more attempts running at once than
  keyParallelism, or a job whose first attempt started after that of a later-enqueued job of its
  key (all are due at once, so a key's jobs must start in enqueue order), as the jobs saw it; in
  the rate-limited run on more starts than the limit in a window of one period beginning at a
  start, or an achieved rate under ${MIN_RATE} of the limit; in the priority mix on a high-priority
  start lag p50 over its limit, or a low job starting while a high one enqueued over
  ${PRIORITY_GRACE_MS} ms before still waits.`;
}

export function notShown(run: BenchRun): string {
  const wallsOf = (id: string) => {
    const s = run.scenarios.find((s) => s.scenario.id === id);
    const walls = [s?.ours, s?.peer].flatMap((r) => (r ? [r.wallSeconds.toFixed(0)] : []));
    return walls.length ? `scenario ${id} took ${walls.join(" and ")} s (ours and peer) here` : "";
  };
  const walls = ["4b", "4c"].map(wallsOf).filter((w) => w !== "");
  const ran4c = run.scenarios.some((s) => s.scenario.id === "4c");
  return `- **Not a live deployment.** convex-test runs every transaction in-process, one at a time:
  there are no optimistic-concurrency conflicts (and so no retried mutations), no network, no
  function cold starts and no real scheduler latency. Latency figures are the pools' own scheduling
  decisions (timers, polling intervals, batching) on a virtual clock, not end-to-end latency on a
  Convex deployment. Contention between transactions is counted from their read and write sets
  in "Potential OCC conflicts" (a model, stated there), not measured.
- **Not Convex's bill.** Documents and bytes are convex-test's accounting of reads and writes,
  which approximates but is not Convex's database bandwidth billing; scheduled functions, index
  entries and storage are not counted.
- **One run per scenario.** With a virtual clock the figures barely vary between runs, but no spread
  is measured. "Harness wall-clock" is how long convex-test took, not how fast a pool is.
- **Only these workloads.** No large arguments or results, no jobs that fail for good, no app with
  several pools, no status queries while jobs run, no keyed jobs that retry or keys that are paused,
  no rate limit with retries or keys, no "normal" jobs among the priorities.
- **The 50,000-job backlog** (scenario 4c) is opt-in and ${ran4c ? "was run here" : "was not run here"}: \`BENCH_LARGE=1 npm run bench\`
  (or \`BENCH_ONLY=4c BENCH_LARGE=1 npm run bench\`). Stock convex-test answers every query by
  scanning every table of the component and sorting what matches, so a run's time grows with the
  square of its size (a 10,000-job run took 280 s instead of 40); the bench answers an index range
  from that index, kept sorted (\`bench/indexedRanges.ts\`), and any other query from the queried
  table alone (\`bench/fastTables.ts\`), with the same answers and counts${walls.length ? `: ${walls.join("; ")}` : ""}.`;
}

/** How to run it again; `detail` links to the detail document, `conflicts` to its section. */
export function rerunning(detail: string, conflicts: string): string {
  return `\`npm run bench\` runs every scenario but the opt-in 4c (about 15 minutes on two cores: 6½ of
them in 9a, 10,000 actions of 2 s on each side, and 3 in the key scenarios 7a to 7c, whose lookups
convex-test answers by scanning; \`BENCH_ONLY\` can leave them out; 4c takes about 15 minutes a side), prints the tables, writes this file and
${detail}, and saves the raw measurements to \`bench-out/latest.json\`;
\`BENCH_FROM_JSON=bench-out/latest.json npm run bench\` renders both files again from that JSON
without running anything (several files, comma-separated, are merged into one run: a full run and
a 4c run). \`BENCH_ONLY=1a,3\` and \`BENCH_SIDES=ours\` select runs (a keyed or
rate-limited run is compared with its baseline only when both ran: \`BENCH_ONLY=7a,7c\`,
\`BENCH_ONLY=8,8a\`; \`BENCH_ONLY=9\` runs the executor scenarios 9a to 9c), \`BENCH_NO_WRITE=1\` leaves both files alone (the JSON is still saved),
\`BENCH_STEP_MS\` sets the virtual step. Scenarios 1a, 3, 5, 6 and 7b also record every
transaction for ${conflicts} (\`bench/conflicts.ts\`). Sizes: \`BENCH_BURST_JOBS\`,
\`BENCH_RETRY_JOBS\`, \`BENCH_MUTATION_JOBS\`, \`BENCH_BACKLOG_SMALL_JOBS\`, \`BENCH_BACKLOG_JOBS\`,
\`BENCH_BACKLOG_LARGE_JOBS\`, \`BENCH_CANCEL_JOBS\`, \`BENCH_TRICKLE_MS\`, \`BENCH_KEYED_JOBS\`,
\`BENCH_KEYED_KEYS\`, \`BENCH_RATE_JOBS\` (8 and 8a; over 50), \`BENCH_PRIORITY_LOW_JOBS\`,
\`BENCH_PRIORITY_HIGH_JOBS\`, \`BENCH_EXECUTOR_JOBS\` (9a and 9b), \`BENCH_EXECUTOR_SINGLE_JOBS\` (9c),
\`BENCH_FAIR_SMALL_JOBS\` (11a and 11b: each small tenant's jobs; the big tenant has 1,000 times as
many), \`BENCH_FAIR_TENANTS\`, \`BENCH_FAIR_SPLIT_JOBS\` (11c, per key), \`BENCH_FAIR_COST_JOBS\` (11d to
11g), \`BENCH_FAIR_IDLE_KEYS\` (11e); \`BENCH_ONLY=11\` runs the fair-share scenarios, and
\`BENCH_FAIR_SHARE=0\` leaves out those with fairness "share" (11b to 11g).`;
}
