/**
 * Potential OCC conflicts (bench/conflicts.ts): the model's interval logic on hand-made
 * transactions, and what the recorder finds on our pool when jobs are enqueued while the loop runs.
 * The scenarios drive the virtual clock of helpers.ts (`setup`, `runFor` in 10 ms steps): one app
 * mutation enqueues one job every 20 ms while earlier jobs run, so the loop passes as it would
 * under a steady stream; everything runs to completion before the recording stops.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import {
  between,
  potentialConflicts,
  readCovers,
  startRecording,
  stopRecording,
  transactionName,
  type Doc,
  type PairCount,
  type RangeRead,
  type Transaction,
  type Write,
} from "../bench/conflicts.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import { enqueue, runFor, setup } from "./helpers.js";

// ---------------------------------------------------------------------------------------------
// Hand-made transactions
// ---------------------------------------------------------------------------------------------

const at = { fn: "test:fn", component: "pool", table: "pendingStart" };

/** A row of `pendingStart` in `segment`, created at `t` (its `_creationTime`), id `id`. */
const row = (id: string, segment: number, t: number): Doc => ({
  _id: id,
  _creationTime: t,
  segment,
});

/** A read of `pendingStart` by its `by_segment` index over `range`, in `order`. */
function segmentRead(range: RangeRead["range"], extra: Partial<RangeRead> = {}): RangeRead {
  return {
    ...at,
    kind: "range",
    index: "by_segment",
    fields: ["segment", "_creationTime", "_id"],
    range,
    order: "asc",
    ...extra,
  };
}

const insert = (doc: Doc): Write => ({ ...at, id: doc._id as string, before: null, after: doc });

function tx(fn: string, start: number, reads: RangeRead[] | Transaction["reads"], writes: Write[]) {
  return { fn, calls: [], type: "mutation", start, committed: true, reads, writes } as Transaction;
}

describe("the model: which writes meet which reads", () => {
  const first = row("1pendingStart", 10, 1000);
  it("a .first() that ended at its first row does not meet an insert past that row", () => {
    // `.withIndex("by_segment", q => q.gte("segment", 10)).first()` returned `first`: Convex
    // records the interval from the range's start up to and including that row.
    const read = segmentRead([{ op: "gte", field: "segment", value: 10 }], {
      upTo: [10, 1000, "1pendingStart"],
    });
    expect(readCovers(read, insert(row("2pendingStart", 11, 1001)))).toBe(false);
    expect(readCovers(read, insert(row("3pendingStart", 10, 1002)))).toBe(false);
    // Before the row it stopped at, the insert lands in what it read.
    expect(readCovers(read, insert(row("4pendingStart", 10, 999)))).toBe(true);
    expect(readCovers(read, insert(first))).toBe(true);
  });

  it("a read that reached the end of its range meets an insert anywhere in the range", () => {
    const read = segmentRead([
      { op: "gte", field: "segment", value: 10 },
      { op: "lte", field: "segment", value: 12 },
    ]);
    expect(readCovers(read, insert(row("2pendingStart", 12, 5000)))).toBe(true);
    expect(readCovers(read, insert(row("3pendingStart", 13, 5000)))).toBe(false);
    expect(readCovers(read, insert(row("4pendingStart", 9, 5000)))).toBe(false);
    // Descending, with a page cursor: only rows after the cursor in that order were read.
    const page = segmentRead([{ op: "lte", field: "segment", value: 12 }], {
      order: "desc",
      after: [11, 1000, "1pendingStart"],
    });
    expect(readCovers(page, insert(row("5pendingStart", 10, 1)))).toBe(true);
    expect(readCovers(page, insert(row("6pendingStart", 12, 1)))).toBe(false);
  });

  it("a patch that moves a row into (or out of) a range read meets it", () => {
    const read = segmentRead([{ op: "eq", field: "segment", value: 10 }]);
    const moved = (from: number, to: number): Write => ({
      ...at,
      id: "7pendingStart",
      before: row("7pendingStart", from, 1),
      after: row("7pendingStart", to, 1),
    });
    expect(readCovers(read, moved(20, 10))).toBe(true);
    expect(readCovers(read, moved(10, 20))).toBe(true);
    expect(readCovers(read, moved(20, 21))).toBe(false);
  });

  it("a point read meets a write to that id, and only to that id", () => {
    const get = { ...at, kind: "point" as const, id: "1pendingStart" };
    const patch = (id: string): Write => ({ ...at, id, before: first, after: first });
    expect(readCovers(get, patch("1pendingStart"))).toBe(true);
    expect(readCovers(get, { ...patch("1pendingStart"), after: null })).toBe(true);
    expect(readCovers(get, patch("2pendingStart"))).toBe(false);
    expect(readCovers(get, { ...patch("1pendingStart"), component: "other" })).toBe(false);
    // An insert makes a new id: whoever read it by id started after the insert committed.
    expect(readCovers(get, insert(first))).toBe(false);
  });

  it("pairs transactions that start less than the window apart, unless one scheduled the other", () => {
    const reader = (start: number) =>
      tx(
        "pool:mainLoop/main:main",
        start,
        [segmentRead([{ op: "gte", field: "segment", value: 10 }])],
        [],
      );
    const writer = (start: number) => tx("pool:lib:enqueue", start, [], [insert(first)]);
    const count = (txs: Transaction[]) =>
      potentialConflicts(txs, 100).reduce((n, p) => n + p.conflicts, 0);
    expect(count([writer(0), reader(99)])).toBe(1);
    expect(count([writer(0), reader(100)])).toBe(0);
    // The reader is a function the writer scheduled (its `_scheduled_functions` row), or one
    // scheduled by such a function: it started after the writer committed.
    const schedules = (t: Transaction, id: string) => {
      t.writes.push({ ...at, table: "_scheduled_functions", id, before: null, after: { _id: id } });
      return t;
    };
    const r1 = { ...reader(5), scheduledBy: { component: "pool", id: "s1" } };
    const r2 = { ...reader(6), scheduledBy: { component: "pool", id: "s2" } };
    expect(count([schedules(writer(0), "s1"), r1])).toBe(0);
    expect(count([schedules(writer(0), "s1"), schedules(r1, "s2"), r2])).toBe(0);
    expect(count([writer(0), r1])).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------
// Our pool, recorded
// ---------------------------------------------------------------------------------------------

/** A transaction of the enqueue path, and our loop. */
const isEnqueue = (name: string) => /:lib:enqueue(Batch)?\b/.test(name);
const isLoop = (name: string) => name === "workpool:mainLoop/main:main";

/** At window `windowMs`: the pairs of (enqueue path, loop) transactions that could overlap and
 * those that would conflict, with each cause and the pairs it is in. Function names drop the
 * component ("workpool:"). (Conflicts among enqueues are left out: `enqueueCounts` picks its shard
 * at random, so their number varies from run to run.) */
function summary(txs: Transaction[], windowMs: number) {
  const pairs = potentialConflicts(txs, windowMs);
  const causes = (p: PairCount[]) =>
    Object.fromEntries(
      p.flatMap((q) => q.causes.map((c) => [c.cause.replaceAll("workpool:", ""), c.pairs])),
    );
  const { conflicts, overlapping } = between(pairs, isEnqueue, isLoop);
  return {
    enqueueLoop: { conflicts, overlapping },
    causes: causes(pairs.filter((p) => between([p], isEnqueue, isLoop).overlapping > 0)),
  };
}

/** Enqueues `jobs` jobs of 50 ms, one app mutation every 20 ms, then lets all of them finish;
 * returns the transactions recorded meanwhile. With `group`, one group is created first (outside
 * the recording) and every job joins it. */
async function stream(
  jobs: number,
  options: (i: number) => object,
  poolOptions: object,
  { group = false } = {},
) {
  const t = setup();
  // Warm up: the first use of each module is real I/O (see CONVEX-TEST-NOTES.md).
  await enqueue(t, "action", [{ key: "warm", ms: 10 }], { poolOptions });
  await runFor(t, 1000);
  const joined = group
    ? { group: await t.mutation(anyApi.pool.callClient, { method: "createGroup", args: [] }) }
    : {};
  startRecording();
  try {
    for (let i = 0; i < jobs; i++) {
      await enqueue(t, "action", [{ key: `j${i}`, ms: 50 }], {
        options: { ...options(i), ...joined },
        poolOptions,
      });
      await runFor(t, 20);
    }
    await runFor(t, 2000);
  } catch (e) {
    stopRecording();
    throw e;
  }
  return stopRecording();
}

const JOBS = 30;
const poolOptions = { maxParallelism: 10 };

// The goal is no potential conflict between the enqueue path and the loop. An enqueue reads and
// writes nothing a pass writes, and writes into the next segment, which no pass reads until it
// begins (kick.ts): at W = 10 ms (transactions that start together) there is none. At W = 100 ms
// the model also pairs an enqueue made late in a segment with the pass at the next segment's start
// (which reads that segment, and deletes its rows, the one recording its wake-up included); they
// overlap only if the enqueue is still running when the next segment begins. Those are the only
// causes left.
// Under fair share (API-EXTENSIONS section 13) the pass reads a segment's keyed rows apart from
// the others (`by_keyed`): the same boundary, by the other index.
const BOUNDARY_CAUSES = [
  "lib:enqueue inserts pendingStart → mainLoop/main:main reads by_priority",
  "lib:enqueue inserts pendingStart → mainLoop/main:main reads by_keyed",
  "mainLoop/main:main deletes pendingStart → lib:enqueue reads by_wake",
];

/** Asserts the goal: no conflict at W = 10 ms; at W = 100 ms, only the segment boundary's. */
function expectNoConflictWithTheLoop(txs: Transaction[]) {
  const tight = summary(txs, 10);
  expect(tight.enqueueLoop.overlapping).toBeGreaterThan(0);
  expect(tight).toEqual({
    enqueueLoop: { conflicts: 0, overlapping: tight.enqueueLoop.overlapping },
    causes: {},
  });
  const wide = summary(txs, SEGMENT_MS);
  for (const cause of Object.keys(wide.causes)) expect(BOUNDARY_CAUSES, cause).toContain(cause);
  return wide;
}

describe("our pool: the enqueue path against the running loop", () => {
  it("names and records an enqueue's transaction, which reads nothing the loop writes", async () => {
    const txs = await stream(2, () => ({}), poolOptions);
    const enqueues = txs.filter((t) => isEnqueue(transactionName(t)));
    expect(enqueues.map(transactionName)).toEqual([
      "app:pool:enqueue → workpool:lib:enqueue",
      "app:pool:enqueue → workpool:lib:enqueue",
    ]);
    const written = new Set(enqueues[0].writes.map((w) => w.table));
    expect(written).toContain("work");
    expect(written).toContain("pendingStart");
    const read = new Set(enqueues.flatMap((e) => e.reads.map((r) => r.table)));
    // The segment's wake-up, recorded on a start row (index `by_wake`).
    expect(enqueues.flatMap((e) => e.reads)).toContainEqual(
      expect.objectContaining({ table: "pendingStart", index: "by_wake" }),
    );
    for (const table of ["runStatus", "loopState"]) expect(read).not.toContain(table);
    expect(txs.some((t) => t.fn === "workpool:mainLoop/main:main")).toBe(true);
  });

  it("plain jobs: none at W = 10 ms; at W = 100 ms only the segment boundary's", async () => {
    const txs = await stream(JOBS, () => ({}), poolOptions);
    expectNoConflictWithTheLoop(txs);
  });

  it("keyed jobs: none at W = 10 ms; at W = 100 ms only the segment boundary's", async () => {
    const txs = await stream(JOBS, (i) => ({ key: `k${i % 3}` }), poolOptions);
    expectNoConflictWithTheLoop(txs);
  });

  it("delayed jobs: none at either window", async () => {
    // A job due 300 ms later goes into a segment no pass reads before it is due.
    const txs = await stream(JOBS, () => ({ runAfter: 300 }), poolOptions);
    expect(expectNoConflictWithTheLoop(txs).enqueueLoop.conflicts).toBe(0);
  });
});

describe("our pool: enqueues into one key", () => {
  it("touch the key's ledger only when they already share an enqueueCounts shard", async () => {
    const txs = await stream(JOBS, () => ({ key: "hot" }), poolOptions);
    const pairs = potentialConflicts(txs, SEGMENT_MS).filter(
      (p) => isEnqueue(p.a) && isEnqueue(p.b),
    );
    expect(pairs.reduce((n, p) => n + p.overlapping, 0)).toBeGreaterThan(JOBS);
    /** Conflicting pairs of enqueues with a collision on `table`. */
    const through = (table: string) =>
      pairs.reduce(
        (n, p) =>
          n +
          p.causes.filter((c) => c.cause.includes(`:${table}`)).reduce((m, c) => m + c.pairs, 0),
        0,
      );
    // One shared ledger row per key made every overlapping pair of them conflict.
    expect(through("keyLedger")).toBeLessThanOrEqual(through("enqueueCounts"));
  });
});

/** `body` with Math.random drawing from a fixed sequence (mulberry32 of `seed`): the counter
 * shards enqueues pick (client and component) are then the same from run to run. */
async function withSeededRandom<R>(seed: number, body: () => Promise<R>): Promise<R> {
  let state = seed >>> 0;
  const spy = vi.spyOn(Math, "random").mockImplementation(() => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  });
  try {
    return await body();
  } finally {
    spy.mockRestore();
  }
}

/** Conflicting pairs among enqueues at `windowMs`, and those with a collision on `table`. */
function enqueueConflicts(txs: Transaction[], windowMs: number) {
  const pairs = potentialConflicts(txs, windowMs).filter((p) => isEnqueue(p.a) && isEnqueue(p.b));
  const through = (table: string) =>
    pairs.reduce(
      (n, p) =>
        n + p.causes.filter((c) => c.cause.includes(`:${table}`)).reduce((m, c) => m + c.pairs, 0),
      0,
    );
  return {
    overlapping: pairs.reduce((n, p) => n + p.overlapping, 0),
    conflicts: pairs.reduce((n, p) => n + p.conflicts, 0),
    through,
  };
}

describe("our pool: enqueues into one group (API-EXTENSIONS §12)", () => {
  // 30 enqueues, one app mutation every 20 ms, at W = 100 ms (about four overlapping neighbours
  // each): the same stream of plain jobs and of jobs joining one open group, with the same
  // counter-shard draws. A group row every enqueue wrote would make every overlapping pair
  // conflict; the group's ledger is sharded as `enqueueCounts` is, by the same draw.
  const GROUP_JOBS = 30;

  it("conflict exactly as often as plain enqueues, and no more with the loop", async () => {
    const plain = await withSeededRandom(7, () => stream(GROUP_JOBS, () => ({}), poolOptions));
    const grouped = await withSeededRandom(7, () =>
      stream(GROUP_JOBS, () => ({}), poolOptions, { group: true }),
    );
    const [p, g] = [enqueueConflicts(plain, SEGMENT_MS), enqueueConflicts(grouped, SEGMENT_MS)];
    expect(g.overlapping).toBeGreaterThan(2 * GROUP_JOBS);
    expect(g.overlapping).toBe(p.overlapping);
    // The same pairs conflict, over the shard they share; the group's ledger row adds no pair.
    expect(g.conflicts).toBe(p.conflicts);
    expect(g.through("groupLedger")).toBeLessThanOrEqual(g.through("enqueueCounts"));
    expect(g.through("groups")).toBe(0);
    // Against the loop: nothing new (the loop counts a group's jobs in `groupState`, which no
    // enqueue reads or writes).
    expectNoConflictWithTheLoop(grouped);
    expect(summary(grouped, SEGMENT_MS).enqueueLoop.conflicts).toBe(
      summary(plain, SEGMENT_MS).enqueueLoop.conflicts,
    );
    // For docs/PERFORMANCE.md.
    console.log(
      `enqueue pairs at W = ${SEGMENT_MS} ms: plain ${p.conflicts} of ${p.overlapping} conflict, ` +
        `one group ${g.conflicts} of ${g.overlapping} (groupLedger ${g.through("groupLedger")}, ` +
        `enqueueCounts ${g.through("enqueueCounts")})`,
    );
  });
});

/** The causes of the potential conflicts between two transactions that `is` both picks. */
function causesAmong(pairs: PairCount[], is: (name: string) => boolean): string[] {
  return pairs.filter((p) => is(p.a) && is(p.b)).flatMap((p) => p.causes.map((c) => c.cause));
}

describe("our pool: executors' reports", () => {
  /** Tasks enqueued one per app mutation every 20 ms while earlier ones run (300 to 390 ms each),
   * on two executors (concurrency 5, maxParallelism 10); the transactions recorded meanwhile.
   * (With every task 300 ms long, the two executors' reports kept exactly a segment apart, so no
   * two of them ever overlapped: the durations vary to bring them together.) */
  async function taskStream(): Promise<Transaction[]> {
    const t = setup();
    const poolOptions = { maxParallelism: 10 };
    await t.mutation(anyApi.tasks.enqueueIo, { argsList: [{ key: "warm" }], poolOptions });
    await runFor(t, 1000);
    startRecording();
    try {
      for (let i = 0; i < JOBS; i++) {
        await t.mutation(anyApi.tasks.enqueueIo, {
          argsList: [{ key: `t${i}`, ms: 300 + 30 * (i % 4) }],
          poolOptions,
        });
        await runFor(t, 20);
      }
      await runFor(t, 3000);
    } finally {
      // (stopRecording below returns what was recorded even when the loop threw)
    }
    return stopRecording();
  }

  const isReport = (name: string) => /:runners\/executor:report\b/.test(name);

  /** The transactions, each report named after its executor ("…:report@<executor id>", the
   * executor row it reads by id: its own), so that pairs of one executor's reports and pairs of
   * two executors' can be told apart; and the executors seen. */
  function reportsByExecutor(txs: Transaction[]) {
    const executors = new Set<string>();
    const named = txs.map((t) => {
      if (!isReport(t.fn)) return t;
      const own = t.reads.find((r) => r.kind === "point" && r.table === "executors");
      if (own?.kind !== "point") throw new Error(`a report that reads no executor row: ${t.fn}`);
      executors.add(own.id);
      return { ...t, fn: `${t.fn}@${own.id}` };
    });
    return { txs: named, executors };
  }

  it("never conflict with enqueues, nor with each other over their hand-overs", async () => {
    const { txs, executors } = reportsByExecutor(await taskStream());
    const pairs = potentialConflicts(txs, SEGMENT_MS);
    expect(between(pairs, isEnqueue, isReport).overlapping).toBeGreaterThan(0);
    expect(between(pairs, isEnqueue, isReport).conflicts).toBe(0);
    // Two executors (or more) reported, and reports of different executors overlapped.
    const ofTwo = pairs.filter((p) => isReport(p.a) && isReport(p.b) && p.a !== p.b);
    const ofOne = pairs.filter((p) => isReport(p.a) && p.a === p.b);
    expect(executors.size).toBeGreaterThanOrEqual(2);
    expect(ofTwo.reduce((n, p) => n + p.overlapping, 0)).toBeGreaterThan(0);
    const causes = (among: PairCount[]) => among.flatMap((p) => p.causes.map((c) => c.cause));
    // Between two executors' reports, only what any two worker reports share: waking the loop
    // through runStatus. Nothing over hand-overs or executor rows.
    for (const cause of causes(ofTwo)) expect(cause).toMatch(/workpool:runStatus →/);
    // Between one executor's reports, also its own row and its own hand-overs (a report deletes
    // those the one before it kept for a retry of itself): it sends them one after another (the
    // model pairs them by start time alone).
    for (const cause of causes(ofOne)) {
      expect(cause).toMatch(/workpool:(runStatus|executors|handovers) →/);
    }
  });
  it("meet the loop only over the executor's own row, its hand-overs and waking the loop (measured)", async () => {
    const txs = await taskStream();
    const pairs = potentialConflicts(txs, SEGMENT_MS);
    const { overlapping, conflicts } = between(pairs, isReport, isLoop);
    const found = pairs
      .filter((p) => between([p], isReport, isLoop).conflicts > 0)
      .flatMap((p) => p.causes);
    const causes = found.map((c) => c.cause);
    console.info(
      `report/loop pairs: ${overlapping} overlapping, ${conflicts} conflicting;`,
      JSON.stringify(Object.fromEntries(found.map((c) => [c.cause, c.pairs]))),
    );
    // They do meet (docs/RELIABILITY.md, "Executors under real semantics"): the loop writes the
    // executor's row (assigned, open) when it hands over or settles, and its hand-over rows, both
    // of which a report reads; a report writes its row (concurrency, ending), which a pass reads,
    // and, as any worker's report, a completion into the segment a sleeping loop reads, and
    // runStatus to wake it. One of the two runs again (OCC); nothing else is shared.
    expect(overlapping).toBeGreaterThan(0);
    for (const cause of causes) {
      expect(cause).toMatch(/workpool:(runStatus|executors|handovers|pendingCompletion) →/);
    }
  });
});

describe("our pool: action runners' reports", () => {
  it("never conflict with enqueues; between each other only over waking the loop", async () => {
    const t = setup();
    await enqueue(t, "action", [{ key: "warm", ms: 10 }], { poolOptions });
    await runFor(t, 1000);
    startRecording();
    let txs: Transaction[];
    try {
      // Three jobs per app mutation: each pass starts several, so they go to action runners.
      for (let i = 0; i < JOBS; i++) {
        const argsList = [0, 1, 2].map((j) => ({ key: `j${i}.${j}`, ms: 50 }));
        await enqueue(t, "action", argsList, { poolOptions });
        await runFor(t, 20);
      }
      await runFor(t, 2000);
    } finally {
      txs = stopRecording();
    }
    const isReport = (name: string) => /:runners\/actionRunner:complete\b/.test(name);
    const pairs = potentialConflicts(txs, SEGMENT_MS);
    expect(between(pairs, isEnqueue, isReport).overlapping).toBeGreaterThan(0);
    expect(between(pairs, isEnqueue, isReport).conflicts).toBe(0);
    for (const cause of causesAmong(pairs, isReport)) expect(cause).toMatch(/workpool:runStatus →/);
  });
});
