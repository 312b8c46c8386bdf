/**
 * Renders the potential OCC conflicts of a bench run (counted by bench/harness.ts with
 * bench/conflicts.ts) as the "Potential OCC conflicts" section of the document and of the console
 * report: per scenario that recorded them, per 1,000 jobs, ours beside the peer, by role (the
 * enqueue path, the loop, worker reports, ...), then per pair of functions with what collides, and
 * the model's assumptions. Pure functions from measurements to markdown, no I/O; it never counts a
 * conflict (the model in bench/conflictModel.ts does) and names a transaction's role only from its
 * function's name (`roleOf`).
 */
import type { Cause, PairCount } from "../conflicts.js";
import type { ConflictCounts } from "../harness.js";
import type { BenchRun, Measured, ScenarioRun } from "../results.js";
import { table } from "./format.js";

/** What a transaction is there for, from its name (`transactionName` of conflicts.ts). */
export type Role = "enqueue" | "loop" | "report" | "cancel" | "other";

const ROLES: Array<{ role: Role; label: string }> = [
  { role: "enqueue", label: "enqueue path" },
  { role: "loop", label: "loop" },
  { role: "report", label: "worker reports" },
  { role: "cancel", label: "cancel" },
  { role: "other", label: "other" },
];

/**
 * The enqueue path: an app mutation that calls the pool's `lib:enqueue` or `lib:enqueueBatch` (both
 * pools). The loop: our `mainLoop/main:main`; the peer's batch-worker `loop:loop` (its pass, which runs the
 * peer's `loop:run` inside it). Worker reports: `complete:complete` (both), and the transactions of
 * a mutation job (ours `runners/worker:runMutationOrQuery`, the peer's `worker:runMutationWrapper`).
 */
export function roleOf(name: string): Role {
  if (/:lib:enqueue(Batch)?\b/.test(name)) return "enqueue";
  if (/:lib:cancel/.test(name)) return "cancel";
  if (/:(mainLoop\/main|loop):main$|batchWorker:loop:loop$/.test(name)) return "loop";
  if (
    /:(mainLoop\/)?complete:complete$|:(runners\/)?worker:runMutation(OrQuery|Wrapper)$/.test(name)
  )
    return "report";
  return "other";
}

const labelOf = (role: Role) => ROLES.find((r) => r.role === role)!.label;
const rank = (role: Role) => ROLES.findIndex((r) => r.role === role);

/** The two roles of a pair, in ROLES order. */
function rolesOf(p: Pick<PairCount, "a" | "b">): [Role, Role] {
  const [x, y] = [roleOf(p.a), roleOf(p.b)];
  return rank(x) <= rank(y) ? [x, y] : [y, x];
}

const perThousand = (r: Measured, n: number) => (n / r.scenario.jobs) * 1000;

/** Pairs per 1,000 jobs: whole from 100, one decimal from 10, two below ("0" for none). */
function fmt(n: number): string {
  if (n === 0) return "0";
  if (n >= 100) return n.toFixed(0);
  return n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

/** Conflicts and overlapping pairs per 1,000 jobs between two roles: "12.0 (130)". */
function roleCell(r: Measured | undefined, windowMs: number, roles: [Role, Role]): string {
  const w = r?.conflicts?.windows.find((x) => x.windowMs === windowMs);
  if (!r || !w) return "not run";
  let conflicts = 0;
  let overlapping = 0;
  for (const p of w.pairs) {
    const [x, y] = rolesOf(p);
    if (x !== roles[0] || y !== roles[1]) continue;
    conflicts += p.conflicts;
    overlapping += p.overlapping;
  }
  return `${fmt(perThousand(r, conflicts))} (${fmt(perThousand(r, overlapping))})`;
}

const sides = (s: ScenarioRun) => [s.ours, s.peer].filter((r): r is Measured => !!r?.conflicts);

/** The windows recorded, widest first. */
function windowsOf(s: ScenarioRun): number[] {
  const first = sides(s)[0]?.conflicts;
  return first ? first.windows.map((w) => w.windowMs) : [];
}

/** The role pairs either pool has pairs in (the enqueue path's always), in ROLES order. */
function rolePairs(s: ScenarioRun): Array<[Role, Role]> {
  const seen = new Set<string>(["enqueue loop", "enqueue enqueue"]);
  for (const r of sides(s))
    for (const w of r.conflicts!.windows) for (const p of w.pairs) seen.add(rolesOf(p).join(" "));
  return [...seen]
    .map((k) => k.split(" ") as [Role, Role])
    .sort((p, q) => rank(p[0]) - rank(q[0]) || rank(p[1]) - rank(q[1]));
}

function roleTable(s: ScenarioRun): string {
  const windows = windowsOf(s);
  const header = ["pair of roles"];
  for (const w of windows) header.push(`ours, W = ${w} ms`, `peer, W = ${w} ms`);
  return table(
    header,
    ["---", ...header.slice(1).map(() => "---:")],
    rolePairs(s).map((roles) => [
      `${labelOf(roles[0])} ↔ ${labelOf(roles[1])}`,
      ...windows.flatMap((w) => [roleCell(s.ours, w, roles), roleCell(s.peer, w, roles)]),
    ]),
  );
}

const code = (s: string) => `\`${s}\``;

/** Conflicts (overlapping pairs) per 1,000 jobs of one pair of functions at one window. */
function pairCell(r: Measured, window: ConflictCounts["windows"][number], p: PairCount): string {
  const q = window.pairs.find((x) => x.a === p.a && x.b === p.b);
  return q
    ? `${fmt(perThousand(r, q.conflicts))} (${fmt(perThousand(r, q.overlapping))})`
    : "0 (0)";
}

/** One pool's pairs of functions with conflicts, and everything that collides between its enqueue
 * path and its loop, with an example of each. */
function sideDetail(r: Measured, level: string): string {
  const { windows } = r.conflicts as ConflictCounts;
  const wide = windows[0];
  const pairs = wide.pairs.filter((p) => p.conflicts > 0);
  const header = [
    "functions",
    ...windows.map((w) => `W = ${w.windowMs} ms`),
    `what collides most (W = ${wide.windowMs} ms)`,
  ];
  const rows = pairs.map((p) => [
    `${code(p.a)} ↔ ${code(p.b)}`,
    ...windows.map((w) => pairCell(r, w, p)),
    p.causes[0]?.cause ?? "",
  ]);
  // Every cause between the enqueue path and the loop, at any window, with its count at each.
  const causes = new Map<string, { example: Cause; counts: Map<number, number> }>();
  for (const w of windows)
    for (const p of w.pairs)
      if (rolesOf(p).join(" ") === "enqueue loop")
        for (const c of p.causes) {
          const entry = causes.get(c.cause) ?? { example: c, counts: new Map() };
          entry.counts.set(w.windowMs, (entry.counts.get(w.windowMs) ?? 0) + c.pairs);
          causes.set(c.cause, entry);
        }
  const lines = [...causes].map(([cause, { example, counts }]) => {
    const n = windows.map((w) => fmt(perThousand(r, counts.get(w.windowMs) ?? 0))).join(" / ");
    return `- ${cause}: ${n}. Example: ${describeCollision(example)}`;
  });
  const perWindow = windows.map((w) => `W = ${w.windowMs}`).join(" / ");
  return `${level} ${r.side}

${
  pairs.length
    ? table(header, ["---", ...header.slice(1, -1).map(() => "---:"), "---"], rows)
    : "No potential conflicts."
}

${
  lines.length
    ? `Between the enqueue path and the loop, what collides (pairs per 1,000 jobs at ${perWindow} ms):\n\n${lines.join("\n")}`
    : "No potential conflict between the enqueue path and the loop."
}
`;
}

function describeCollision(c: Cause): string {
  const e = c.example;
  return (
    `${code(e.reader)} read ${code(e.table)} ${code(e.read)}; ` +
    `${code(e.writer)} wrote ${code(e.write)}.`
  );
}

function assumptions(run: BenchRun): string {
  const windows = run.scenarios.flatMap(windowsOf);
  const [wide, narrow] = [Math.max(...windows), Math.min(...windows)];
  return `- **Recorded, not run concurrently.** convex-test runs one transaction at a time, so no
  conflict happens here. \`bench/conflicts.ts\` records, for every top-level transaction (nested
  \`ctx.runQuery\`/\`ctx.runMutation\` calls belong to it), the documents it read by id, the index
  ranges it read (the interval actually read: from the range's start, or a page's cursor, up to the
  last row returned, or to the range's end if the query reached it — as Convex records a
  \`.first()\` or \`.take(n)\`; a \`.filter()\` does not narrow it) and the documents it wrote
  (before and after). A snapshot query (the peer's batch worker reads its work that way) takes no
  read dependency and is not recorded; a nested call that rolled back wrote nothing.
- **A conflict**: a write of one transaction whose document (old or new version) has its index
  key (the index fields, then \`_creationTime\` and \`_id\`) in an interval the other read, or that
  updates or deletes a document the other read by id (an insert does not count against a read by
  id: a transaction that read the new id started after the insert committed). OCC would retry one
  of the two.
- **Overlap**: two committed mutations could run at once if their virtual start times are less
  than W apart, and neither scheduled the other, directly or through a chain of scheduled
  functions (a scheduled function, and an action's calls, start after the transaction that
  scheduled it committed). W = ${wide} ms, one segment of either pool (both cut time into 100 ms
  segments), is the same for both pools: it supposes a transaction may take up to a segment.
  W = ${narrow} ms (one step of the virtual clock: transactions that start together) shows what
  remains when transactions are short. Each overlapping pair of transactions counts once, however
  many of its reads and writes collide.
- **Virtual time stands still while a transaction runs**, so work a deployment does one transaction
  after another can start at one virtual instant here (a chain of loop passes and the mutation
  jobs they start in scenario 3, a burst's passes): where many transactions share an instant, the
  overlaps, and the conflicts among them, are far more than a deployment would see.
- **Figures** are pairs per 1,000 jobs: conflicts, and in parentheses the overlapping pairs
  they are out of. Pairs are named by function; an app mutation by the pool function it calls
  (\`app:pools:enqueue → ours:lib:enqueue\`). Roles: the enqueue path (an app mutation calling
  \`lib:enqueue\` or \`lib:enqueueBatch\`), the loop (our \`mainLoop/main:main\`; the peer's batch-worker
  \`loop:loop\`, which runs its \`loop:run\`), worker reports (\`complete:complete\`, and a mutation
  job's own transaction), cancel.
- **What it leaves out**: read and write sets are those of the serial run (run concurrently, a
  \`.first()\` could stop at another row); queries never conflict (they do not commit); the
  system's own writes to \`_scheduled_functions\` (a function starting or ending) are not recorded;
  how long transactions really take, so how likely an overlap is, is not known here: the counts are
  potential conflicts, an upper bound for the window, not retries measured on a deployment.`;
}

/** The conflicts section's heading (and anchor, `anchorOf`). */
export const CONFLICTS_HEADING = "Potential OCC conflicts";

/** The "Potential OCC conflicts" section, or nothing if no scenario recorded them. */
export function conflictsSection(run: BenchRun, level: number): string {
  const recorded = run.scenarios.filter((s) => sides(s).length > 0);
  if (recorded.length === 0) return "";
  const h = "#".repeat(level);
  const scenarios = recorded.map(
    (s) => `${h}# Conflicts in ${s.scenario.id}. ${s.scenario.title}

${roleTable(s)}

${sides(s)
  .map((r) => sideDetail(r, `${h}##`))
  .join("\n")}`,
  );
  return `${h} ${CONFLICTS_HEADING}

A real deployment runs transactions at once and retries one of two that conflict (optimistic
concurrency control); convex-test runs them one at a time. These figures count, from what each
transaction read and wrote, the pairs of transactions that could run at once and would conflict,
per 1,000 jobs: **conflicts (overlapping pairs)**, for two windows W of overlap. The goal is none
between the enqueue path and the loop. The model:

${assumptions(run)}

${scenarios.join("\n\n")}

`;
}
