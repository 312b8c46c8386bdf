/**
 * Index ranges answered from sorted indexes, for convex-test's embedded database, in the chaos
 * programs (test/model.test.ts) and the bench (harness.ts, schedules.ts, where a backlog of 50,000
 * jobs under one key made each of its queue's reads walk all of them). The programs' loop passes
 * were most of their time in convex-test's query
 * evaluation, which walks every document of a table, checks its range and sorts the matches, for
 * every `first()` or `take(n)` on an index (measured: a program of 1,700 jobs under a rate limit,
 * 250 of its 464 s in the loop's range queries on `work` and `pendingStart`).
 *
 * What: per database, table and index used, the committed documents sorted by the index's key
 * (its fields, then `_creationTime` and `_id`, compared as convex-test compares them), kept up to
 * date on every top-level commit. A query on an index range then hands convex-test's own
 * evaluation (which still checks the range, applies filters, sorts and limits) only the committed
 * documents the range holds, found by binary search, plus every document the open transaction
 * wrote in that table; and when the query takes `n` with no filter, only the first (or last) `n`
 * of those the transaction did not write. Convex-test's answer, and the documents it counts as
 * read, are therefore the same as from a walk of the whole table: test/indexedRanges.test.ts
 * checks that against the original on random writes.
 *
 * Owns: the patch (installed once, over bench/fastTables.ts's if that is installed, through the
 * same AsyncLocalStorage hook). Never changes what a query returns or what it counts.
 */
import { compareValues, jsonToConvex, type Value } from "convex/values";
import {
  patchDatabasePrototype,
  patchEachBackendDatabase,
  equalityOf,
  fieldValue,
  isWritten,
  writeClockNow,
  tableOfId,
  writtenIds,
} from "./fastTables.js";

type Doc = Record<string, unknown> & { _id: string };
type Db = {
  _documents: Record<string, Doc>;
  _writes: Array<Record<string, Doc | null>>;
  _schema?: {
    tables: Map<string, { indexes: Array<{ indexDescriptor: string; fields: string[] }> }>;
  };
  get(table: string, id: string): Doc | null;
};
type RangeExpr = { type: "Eq" | "Gt" | "Gte" | "Lt" | "Lte"; fieldPath: string; value: unknown };
type Row = { key: unknown[]; id: string };
type SortedIndex = { fields: string[]; rows: Row[] };

/** Per database, its sorted indexes by "table.index", built on first use. */
const indexesOf = new WeakMap<Db, Map<string, SortedIndex>>();
/** The documents the query being resolved may match (set only while `_resolveQuerySource`
 * runs, which is synchronous). */
let candidates: { table: string; ids: string[] } | undefined;
/** Off: every query walks the whole table (for the test that compares the two). */
let enabled = true;
const patched = new WeakSet<object>();
let installed = false;

const keyOf = (doc: Doc, fields: string[]) => fields.map((field) => fieldValue(doc, field));

function compareKeys(a: unknown[], b: unknown[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareValues(a[i] as Value, b[i] as Value);
    if (c !== 0) return c;
  }
  return 0;
}

/** The first position whose row does not come before `key`. */
function lowerBound(rows: Row[], key: unknown[]): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (compareKeys(rows[mid].key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The fields an index sorts by (convex-test's: the declared ones, then `_creationTime`, `_id`). */
function indexFields(db: Db, table: string, index: string): string[] | undefined {
  if (index === "by_creation_time") return ["_creationTime", "_id"];
  if (index === "by_id") return ["_id"];
  const found = db._schema?.tables.get(table)?.indexes.find((i) => i.indexDescriptor === index);
  return found && [...found.fields, "_creationTime", "_id"];
}

function sortedIndex(db: Db, table: string, index: string): SortedIndex | undefined {
  let indexes = indexesOf.get(db);
  if (indexes === undefined) indexesOf.set(db, (indexes = new Map()));
  const name = `${table}.${index}`;
  let sorted = indexes.get(name);
  if (sorted === undefined) {
    const fields = indexFields(db, table, index);
    if (fields === undefined) return undefined;
    const rows = Object.entries(db._documents)
      .filter(([id]) => tableOfId(id) === table)
      .map(([id, doc]) => ({ key: keyOf(doc, fields), id }));
    rows.sort((a, b) => compareKeys(a.key, b.key));
    indexes.set(name, (sorted = { fields, rows }));
  }
  return sorted;
}

/** An index range's expressions with their bounds as values (converted once per query, not at
 * every comparison of the binary search). */
type Bound = { type: RangeExpr["type"]; fieldPath: string; value: Value | undefined };
const boundsOf = (range: RangeExpr[]): Bound[] =>
  range.map((expr) => ({
    type: expr.type,
    fieldPath: expr.fieldPath,
    value: isUnset(expr.value) ? undefined : jsonToConvex(expr.value as any),
  }));

/** Where a document stands against an index range: before it, in it, or after it (the range's
 * expressions are on the index's fields in order, so the documents in it are contiguous). */
function sideOf(doc: Doc, range: Bound[]): -1 | 0 | 1 {
  for (const expr of range) {
    const c = compareValues(fieldValue(doc, expr.fieldPath) as Value, expr.value as Value);
    if (expr.type === "Eq" && c !== 0) return c < 0 ? -1 : 1;
    if ((expr.type === "Gt" && c <= 0) || (expr.type === "Gte" && c < 0)) return -1;
    if ((expr.type === "Lt" && c >= 0) || (expr.type === "Lte" && c > 0)) return 1;
  }
  return 0;
}

const isUnset = (value: unknown) =>
  typeof value === "object" && value !== null && "$undefined" in value;

/** Where the committed documents in the range lie in `sorted.rows`: positions [from, to). */
function rangeOf(db: Db, sorted: SortedIndex, range: Bound[]): { from: number; to: number } {
  const side = (row: Row) => sideOf(db._documents[row.id], range);
  const rows = sorted.rows;
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (side(rows[mid]) < 0) lo = mid + 1;
    else hi = mid;
  }
  const from = lo;
  hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (side(rows[mid]) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return { from, to: lo };
}

/** The documents a query on an index range may match, or undefined to walk the whole table. */
function candidatesOf(db: Db, query: any): typeof candidates {
  const source = query?.source;
  if (!enabled || source?.type !== "IndexRange") return undefined;
  const [table, index] = String(source.indexName).split(".");
  const sorted = sortedIndex(db, table, index);
  if (sorted === undefined) return undefined;
  const bounds = boundsOf(source.range ?? []);
  const { from, to } = rangeOf(db, sorted, bounds);
  const committed: string[] = [];
  for (let i = from; i < to; i++) {
    if (!isWritten(db, table, sorted.rows[i].id)) committed.push(sorted.rows[i].id);
  }
  const written = writtenInRange(db, table, source, bounds).map((doc) => doc._id);
  return { table, ids: [...committed, ...written] };
}

/** What the open transaction wrote in `table` that lies in the range, as it stands now (a deleted
 * document is in no range): a mutation writing thousands of rows of a table does not hand every
 * one of them to each of its queries. */
function writtenInRange(db: Db, table: string, source: unknown, bounds: Bound[]): Doc[] {
  const docs: Doc[] = [];
  for (const id of writtenIds(db, table, equalityOf(source))) {
    const doc = db.get(table, id);
    if (doc !== null && sideOf(doc, bounds) === 0) docs.push(doc);
  }
  return docs;
}

/**
 * A query on an index range with no filter, answered lazily in index order: the committed
 * documents in the range that the transaction had not written when the query started, merged with
 * what it had written that lies in the range, as convex-test's own answer would give them
 * (snapshotted at the start; the same documents, in the same order, each counted as read only when
 * the function takes it). Convex-test resolves and sorts the whole range first, so a `for await`
 * over a few thousand due rows that stops at the first cost the whole range at every pass.
 * Undefined when the query is not of that kind (convex-test answers it).
 */
function lazyAnswer(db: Db, query: any): Generator<Doc> | undefined {
  const source = query?.source;
  if (!enabled || source?.type !== "IndexRange") return undefined;
  const operators: any[] = query.operators ?? [];
  if (operators.some((op) => "filter" in op)) return undefined;
  const [table, index] = String(source.indexName).split(".");
  const sorted = sortedIndex(db, table, index);
  if (sorted === undefined) return undefined;
  const bounds = boundsOf(source.range ?? []);
  const { from, to } = rangeOf(db, sorted, bounds);
  const limit: number = operators.find((op) => "limit" in op)?.limit ?? Number.POSITIVE_INFINITY;
  const desc = (source.order ?? "asc") === "desc";
  const startedAt = writeClockNow();
  const written = writtenInRange(db, table, source, bounds).map((doc) => ({
    key: keyOf(doc, sorted.fields),
    doc,
  }));
  written.sort((a, b) => compareKeys(a.key, b.key));
  if (desc) written.reverse();
  const rows = sorted.rows;
  // The committed documents as they stood at the start (no commit lands inside a transaction).
  const committedDoc = (i: number) => db._documents[rows[i].id];
  return (function* () {
    const step = desc ? -1 : 1;
    let i = desc ? to - 1 : from;
    let w = 0;
    let returned = 0;
    const inRange = () => (desc ? i >= from : i < to);
    while (returned < limit) {
      while (inRange() && isWritten(db, table, rows[i].id, startedAt)) i += step;
      const next = written[w];
      if (!inRange() && next === undefined) return;
      const takeWritten =
        next !== undefined &&
        (!inRange() ||
          (desc ? compareKeys(next.key, rows[i].key) > 0 : compareKeys(next.key, rows[i].key) < 0));
      returned++;
      if (takeWritten) {
        w++;
        yield next.doc;
      } else {
        const doc = committedDoc(i);
        i += step;
        yield doc;
      }
    }
  })();
}

/** Keeps the sorted indexes of `db` in step with a top-level commit of `writes`. */
function follow(db: Db, before: Array<readonly [string, Doc | undefined]>): void {
  const indexes = indexesOf.get(db);
  if (indexes === undefined) return;
  for (const [name, sorted] of indexes) {
    const table = name.slice(0, name.indexOf("."));
    for (const [id, old] of before) {
      if (tableOfId(id) !== table) continue;
      if (old !== undefined) {
        const at = lowerBound(sorted.rows, keyOf(old, sorted.fields));
        if (sorted.rows[at]?.id === id) sorted.rows.splice(at, 1);
      }
      const now = db._documents[id];
      if (now !== undefined) {
        const key = keyOf(now, sorted.fields);
        sorted.rows.splice(lowerBound(sorted.rows, key), 0, { key, id });
      }
    }
  }
}

/** Patches convex-test's database prototype (once). */
export function patchIndexedRanges(proto: any): void {
  if (patched.has(proto)) return;
  patched.add(proto);
  // Over the faster table scan: it walks a table without asking anyone, so it goes underneath.
  patchDatabasePrototype(proto);
  const commit = proto.commit;
  proto.commit = function (this: Db, ...args: unknown[]) {
    const last = this._writes.length === 1 ? this._writes[0] : undefined;
    const before = Object.keys(last ?? {}).map((id) => [id, this._documents[id]] as const);
    const result = commit.apply(this, args);
    if (before.length > 0) follow(this, before);
    return result;
  };
  const resolve = proto._resolveQuerySource;
  proto._resolveQuerySource = function (this: Db, query: unknown) {
    candidates = candidatesOf(this, query);
    try {
      return resolve.call(this, query);
    } finally {
      candidates = undefined;
    }
  };
  const evaluate = proto._evaluateQuery;
  proto._evaluateQuery = function (this: Db, query: unknown) {
    return lazyAnswer(this, query) ?? evaluate.call(this, query);
  };
  const iterate = proto._iterateDocs;
  proto._iterateDocs = function (this: Db, table: string, callback: (doc: unknown) => void) {
    const mine = candidates?.table === table ? candidates : undefined;
    // Each iteration is answered once: a nested scan of the same table walks it whole.
    candidates = undefined;
    if (mine === undefined) return iterate.call(this, table, callback);
    for (const id of mine.ids) {
      const doc = this.get(table, id);
      if (doc !== null) callback(doc);
    }
  };
}

/** Runs `fn` with every query walking whole tables (convex-test's own answer), for comparison. */
export async function withoutIndexedRanges<T>(fn: () => Promise<T>): Promise<T> {
  enabled = false;
  try {
    return await fn();
  } finally {
    enabled = true;
  }
}

/** Installs the patch for every convex-test backend used from now on (idempotent). */
export function installIndexedRanges(): void {
  if (installed) return;
  installed = true;
  patchEachBackendDatabase(patchIndexedRanges);
}
