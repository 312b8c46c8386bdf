/**
 * The model of potential OCC conflicts: what a recorded transaction is (bench/conflicts.ts records
 * them from convex-test), when a write meets a read, and which pairs of transactions a real
 * deployment could run at once. Pure: no I/O, no convex-test; docs/BENCHMARKS.md states the model
 * (bench/report/conflicts.ts), test/conflicts.test.ts checks it on hand-made transactions.
 *
 * - A write meets a read if, in the read's index, the key (index fields, `_creationTime`, `_id`, as
 *   Convex orders them) of the document's old or new version lies in the interval read: from the
 *   range's start (or a page's cursor) up to the last row read, or to the range's end. A point
 *   read meets an update or delete of that id, not its insert (a transaction that read a new id by
 *   id started after the insert committed). Different components never meet.
 * - Two committed mutations could run at once if their (virtual) start times are less than
 *   `windowMs` apart and neither scheduled the other, directly or through a chain of scheduled
 *   functions (a scheduled function, and an action's calls, start after the transaction that
 *   scheduled it committed). For each such pair where either one's writes meet the other's reads,
 *   OCC would retry one of them: one potential conflict for the pair, however many collisions.
 * - Queries never conflict (they do not commit).
 */
import { compareValues, type Value } from "convex/values";

// ---------------------------------------------------------------------------------------------
// A recorded transaction
// ---------------------------------------------------------------------------------------------

/** A document, or a part of it that holds every field an index of its table orders by. */
export type Doc = Record<string, Value | undefined>;
/** An index key, field by field (`undefined`: the field is missing). */
export type Key = Array<Value | undefined>;

export type RangeExpr = {
  op: "eq" | "gt" | "gte" | "lt" | "lte";
  /** A field path ("state.kind"). */
  field: string;
  value: Value | undefined;
};

/** `fn` is the function that read or wrote, nested ones included ("component:module:function",
 * component "app" for the app); `component` is the database's ("" for the app). */
type Located = { fn: string; component: string; table: string };

export type PointRead = Located & { kind: "point"; id: string };

export type RangeRead = Located & {
  kind: "range";
  /** "by_creation_time", "by_id" or the schema's index name. */
  index: string;
  /** The index key: its fields, then `_creationTime` and `_id`, as Convex orders them. */
  fields: string[];
  range: RangeExpr[];
  order: "asc" | "desc";
  /** Exclusive start in `order` (a page's cursor); absent: the range's start. */
  after?: Key;
  /** Inclusive end in `order` (the last row read); absent: the range's end. */
  upTo?: Key;
};

export type Read = PointRead | RangeRead;

export type Write = Located & {
  id: string;
  /** The document before (null: inserted) and after (null: deleted): at least every field an
   * index of its table orders by. */
  before: Doc | null;
  after: Doc | null;
};

export type Transaction = {
  /** The top-level function. */
  fn: string;
  /** Functions it called directly (`ctx.runQuery`/`ctx.runMutation`), each once, in call order. */
  calls: string[];
  type: "query" | "mutation";
  /** Virtual ms at its start. */
  start: number;
  committed: boolean;
  /** The scheduled function it belongs to (it is one, or an action's call): the row of
   * `_scheduled_functions` whose insert committed before it started. */
  scheduledBy?: { component: string; id: string };
  reads: Read[];
  writes: Write[];
};

// ---------------------------------------------------------------------------------------------
// When a write meets a read
// ---------------------------------------------------------------------------------------------

function fieldOf(doc: Doc, path: string): Value | undefined {
  let v: unknown = doc;
  for (const part of path.split(".")) {
    v = v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Doc)[part] : undefined;
  }
  return v as Value | undefined;
}

export function keyOf(doc: Doc, fields: string[]): Key {
  return fields.map((f) => fieldOf(doc, f));
}

/** Convex's order of values (`compareValues`), with a shortcut for two plain numbers. */
function compare(a: Value | undefined, b: Value | undefined): number {
  if (typeof a === "number" && typeof b === "number" && a !== 0 && b !== 0 && a === a && b === b)
    return a < b ? -1 : a > b ? 1 : 0;
  return compareValues(a, b);
}

/** Compares keys field by field, over the fields both have. */
function compareKeys(a: Key, b: Key): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = compare(a[i], b[i]);
    if (c !== 0) return c;
  }
  return 0;
}

const TEST: Record<RangeExpr["op"], (c: number) => boolean> = {
  eq: (c) => c === 0,
  gt: (c) => c > 0,
  gte: (c) => c >= 0,
  lt: (c) => c < 0,
  lte: (c) => c <= 0,
};

/** A read's index, as an id, and where each of its range expressions' fields is in its key. */
type Compiled = { index: string; at: number[] };
const compiledReads = new WeakMap<RangeRead, Compiled>();
/** Each document version's key in each index it was compared in (a pair of transactions compares
 * the same rows many times). */
const docKeys = new WeakMap<Doc, Map<string, Key>>();

function compiled(read: RangeRead): Compiled {
  let c = compiledReads.get(read);
  if (!c) {
    const at = read.range.map((e) => read.fields.indexOf(e.field));
    compiledReads.set(read, (c = { index: read.fields.join("\u0000"), at }));
  }
  return c;
}

function keyIn(doc: Doc, read: RangeRead, index: string): Key {
  let keys = docKeys.get(doc);
  if (!keys) docKeys.set(doc, (keys = new Map()));
  let key = keys.get(index);
  if (!key) keys.set(index, (key = keyOf(doc, read.fields)));
  return key;
}

/** Whether `doc` (a version of a row of the read's table) lies in the interval the read covered. */
export function inRange(read: RangeRead, doc: Doc): boolean {
  const c = compiled(read);
  const key = keyIn(doc, read, c.index);
  for (let i = 0; i < read.range.length; i++) {
    const e = read.range[i];
    const v = c.at[i] >= 0 ? key[c.at[i]] : fieldOf(doc, e.field);
    if (!TEST[e.op](compare(v, e.value))) return false;
  }
  const dir = read.order === "asc" ? 1 : -1;
  if (read.after && compareKeys(key, read.after) * dir <= 0) return false;
  if (read.upTo && compareKeys(key, read.upTo) * dir > 0) return false;
  return true;
}

/** Whether `write` changes what `read` read: OCC would retry the reader. */
export function readCovers(read: Read, write: Write): boolean {
  if (read.component !== write.component || read.table !== write.table) return false;
  // An inserted id is new: a transaction that read it by id started after the insert committed.
  if (read.kind === "point") return read.id === write.id && write.before !== null;
  return (
    (write.before !== null && inRange(read, write.before)) ||
    (write.after !== null && inRange(read, write.after))
  );
}

// ---------------------------------------------------------------------------------------------
// Which pairs could run at once, and what collides
// ---------------------------------------------------------------------------------------------

/** How a transaction is named in the counts: its function; an app function also names the
 * functions it called ("app:pools:enqueue → ours:lib:enqueue"), which are what it is there for. */
export function transactionName(t: Pick<Transaction, "fn" | "calls">): string {
  return t.fn.startsWith("app:") && t.calls.length ? `${t.fn} → ${t.calls.join(", ")}` : t.fn;
}

/** One read and one write that meet, described for a person. */
export type Collision = {
  reader: string;
  writer: string;
  /** Component and table. */
  table: string;
  /** "point get <id>", or the index, range, order and interval. */
  read: string;
  /** The written row: id, and its fields before → after (as recorded). */
  write: string;
};

/** What makes pairs conflict: who writes what, and who reads it how. */
export type Cause = {
  /** "ours:lib:enqueue inserts ours:pendingStart → ours:loop:main reads by_segment". */
  cause: string;
  /** Conflicting pairs with a collision of this cause. */
  pairs: number;
  /** The first such collision. */
  example: Collision;
};

/** Potential conflicts between the transactions of two names (`a` <= `b`). */
export type PairCount = {
  a: string;
  b: string;
  /** Pairs of their transactions that could run at once. */
  overlapping: number;
  /** Of those, pairs where one's writes meet the other's reads. */
  conflicts: number;
  /** Why, most frequent first (a pair can have several causes). */
  causes: Cause[];
};

const show = (v: Value | undefined): string =>
  v === undefined ? "undefined" : typeof v === "bigint" ? `${v}n` : JSON.stringify(v);
const showKey = (k: Key) => `(${k.map(show).join(", ")})`;
const showDoc = (d: Doc | null) =>
  d === null
    ? "none"
    : `{${Object.entries(d)
        .filter(([f]) => f !== "_id")
        .map(([f, v]) => `${f}: ${show(v)}`)
        .join(", ")}}`;

export function describeRead(r: Read): string {
  if (r.kind === "point") return `point get ${r.id}`;
  const range = r.range.map((e) => `${e.field} ${e.op} ${show(e.value)}`).join(", ") || "all";
  const from = r.after ? `after ${showKey(r.after)}` : "from the range's start";
  const to = r.upTo ? `up to ${showKey(r.upTo)}` : "to the range's end";
  return `${r.index} [${range}] ${r.order}, ${from} ${to} (key: ${r.fields.join(", ")})`;
}

const verb = (w: Write) =>
  w.before === null ? "inserts" : w.after === null ? "deletes" : "updates";

/** The halves of a cause, made once per write and per read. */
const writeCauses = new WeakMap<Write, string>();
const readCauses = new WeakMap<Read, string>();

function causeOf(read: Read, write: Write): string {
  let w = writeCauses.get(write);
  if (w === undefined)
    writeCauses.set(
      write,
      (w = `${write.fn} ${verb(write)} ${write.component || "app"}:${write.table}`),
    );
  let r = readCauses.get(read);
  if (r === undefined)
    readCauses.set(
      read,
      (r = `${read.fn} ${read.kind === "point" ? "gets it" : `reads ${read.index}`}`),
    );
  return `${w} → ${r}`;
}

function collision(read: Read, write: Write): Collision {
  return {
    reader: read.fn,
    writer: write.fn,
    table: `${write.component || "app"}:${write.table}`,
    read: describeRead(read),
    write: `${write.id}: ${showDoc(write.before)} → ${showDoc(write.after)}`,
  };
}

/** A transaction's reads by component and table, ids apart, and its writes by component and
 * table, built once. */
type ReadIndex = Map<string, { ids: Map<string, PointRead>; ranges: RangeRead[] }>;
const readIndexes = new WeakMap<Transaction, ReadIndex>();
const writeIndexes = new WeakMap<Transaction, Map<string, Write[]>>();
const tableOf = (x: Located) => `${x.component}\u0000${x.table}`;

function readIndex(t: Transaction): ReadIndex {
  let index = readIndexes.get(t);
  if (index) return index;
  index = new Map();
  for (const r of t.reads) {
    let entry = index.get(tableOf(r));
    if (!entry) index.set(tableOf(r), (entry = { ids: new Map(), ranges: [] }));
    if (r.kind === "point") entry.ids.set(r.id, r);
    else entry.ranges.push(r);
  }
  readIndexes.set(t, index);
  return index;
}

function writeIndex(t: Transaction): Map<string, Write[]> {
  let index = writeIndexes.get(t);
  if (index) return index;
  index = new Map();
  for (const w of t.writes) {
    const writes = index.get(tableOf(w));
    if (writes) writes.push(w);
    else index.set(tableOf(w), [w]);
  }
  writeIndexes.set(t, index);
  return index;
}

/** Every read of `reader` that a write of `writer` meets, by cause (the first of each). */
function collisions(
  writer: Transaction,
  reader: Transaction,
  into: Map<string, [Read, Write]>,
): void {
  const reads = readIndex(reader);
  for (const [table, writes] of writeIndex(writer)) {
    const entry = reads.get(table);
    if (!entry) continue;
    for (const w of writes) {
      const point = entry.ids.get(w.id);
      if (point && readCovers(point, w)) {
        const cause = causeOf(point, w);
        if (!into.has(cause)) into.set(cause, [point, w]);
      }
      for (const r of entry.ranges) {
        if (!readCovers(r, w)) continue;
        const cause = causeOf(r, w);
        if (!into.has(cause)) into.set(cause, [r, w]);
      }
    }
  }
}

const rowKey = (component: string, id: string) => `${component}\u0000${id}`;

/** Each transaction's scheduler: the one that inserted the row of the scheduled function it
 * belongs to, if recorded. */
function schedulers(txs: Transaction[]): Map<Transaction, Transaction> {
  const inserter = new Map<string, Transaction>();
  for (const t of txs)
    for (const w of t.writes)
      if (w.table === "_scheduled_functions" && w.before === null)
        inserter.set(rowKey(w.component, w.id), t);
  const out = new Map<Transaction, Transaction>();
  for (const t of txs) {
    const by = t.scheduledBy && inserter.get(rowKey(t.scheduledBy.component, t.scheduledBy.id));
    if (by) out.set(t, by);
  }
  return out;
}

/** Whether `x` scheduled `y`, or scheduled what scheduled it, and so on: then `y` started after `x`
 * committed, and they never overlap. */
function before(x: Transaction, y: Transaction, scheduler: Map<Transaction, Transaction>): boolean {
  for (let p = scheduler.get(y); p && p.start >= x.start; p = scheduler.get(p))
    if (p === x) return true;
  return false;
}

/**
 * Counts, per pair of transaction names, the pairs of committed mutations that could run at once
 * (start times less than `windowMs` apart, neither scheduled by the other, directly or through a
 * chain of scheduled functions), and of those the pairs where one's writes meet the other's reads
 * (OCC would retry one of them), with their causes. Most conflicts first.
 */
export function potentialConflicts(transactions: Transaction[], windowMs: number): PairCount[] {
  return potentialConflictsByWindow(transactions, [windowMs]).get(windowMs)!;
}

/** `potentialConflicts` for several windows at once (each pair is examined once). */
export function potentialConflictsByWindow(
  transactions: Transaction[],
  windowsMs: number[],
): Map<number, PairCount[]> {
  const txs = transactions
    .filter((t) => t.type === "mutation" && t.committed)
    .sort((x, y) => x.start - y.start);
  const names = new Map(txs.map((t) => [t, transactionName(t)]));
  const scheduler = schedulers(txs);
  const widest = Math.max(...windowsMs);
  const counts = windowsMs.map((windowMs) => ({
    windowMs,
    pairs: new Map<string, PairCount>(),
    causes: new Map<PairCount, Map<string, Cause>>(),
  }));
  for (let i = 0; i < txs.length; i++) {
    for (let j = i + 1; j < txs.length && txs[j].start - txs[i].start < widest; j++) {
      const [x, y] = [txs[i], txs[j]];
      if (before(x, y, scheduler) || before(y, x, scheduler)) continue;
      const [a, b] = [names.get(x)!, names.get(y)!].sort();
      const hits = new Map<string, [Read, Write]>();
      collisions(x, y, hits);
      collisions(y, x, hits);
      for (const count of counts) {
        if (y.start - x.start >= count.windowMs) continue;
        const id = `${a}\u0000${b}`;
        let pair = count.pairs.get(id);
        if (!pair) {
          count.pairs.set(id, (pair = { a, b, overlapping: 0, conflicts: 0, causes: [] }));
          count.causes.set(pair, new Map());
        }
        pair.overlapping++;
        if (hits.size === 0) continue;
        pair.conflicts++;
        const byCause = count.causes.get(pair)!;
        for (const [cause, [r, w]] of hits) {
          const c = byCause.get(cause);
          if (c) c.pairs++;
          else byCause.set(cause, { cause, pairs: 1, example: collision(r, w) });
        }
      }
    }
  }
  const out = new Map<number, PairCount[]>();
  for (const { windowMs, pairs, causes } of counts) {
    for (const [pair, byCause] of causes)
      pair.causes = [...byCause.values()].sort((c, d) => d.pairs - c.pairs);
    out.set(
      windowMs,
      [...pairs.values()].sort(
        (p, q) => q.conflicts - p.conflicts || `${p.a} ${p.b}`.localeCompare(`${q.a} ${q.b}`),
      ),
    );
  }
  return out;
}

/** Sums the pairs whose names match `isA` and `isB` (either way round). */
export function between(
  pairs: PairCount[],
  isA: (name: string) => boolean,
  isB: (name: string) => boolean,
): { overlapping: number; conflicts: number } {
  let overlapping = 0;
  let conflicts = 0;
  for (const p of pairs) {
    if ((isA(p.a) && isB(p.b)) || (isA(p.b) && isB(p.a))) {
      overlapping += p.overlapping;
      conflicts += p.conflicts;
    }
  }
  return { overlapping, conflicts };
}
