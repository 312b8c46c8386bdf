/**
 * A faster table scan for convex-test's embedded database, so that the bench can run 50,000 jobs.
 *
 * Why: convex-test (0.0.60) answers every query by walking every document of the component's whole
 * database (`Object.keys(_documents)`, all tables, a regex per id), then filtering and sorting. A
 * run keeps every finished job's row, so the cost of each query grows with the jobs run so far and
 * a run's time with the square of its size (measured: 3,000 jobs in 18 s, 10,000 in 280 s).
 *
 * What: `DatabaseFake._iterateDocs(table, callback)` is replaced by one that walks only that
 * table's committed ids (kept per database instance, updated on every top-level commit) plus the
 * ids the open transaction wrote, exactly as the original does for the whole database. When the
 * query is an index range with an equality on a string, number, boolean or null (`eq("key", k)`),
 * it walks only the committed documents whose field holds that value (kept per field, built on
 * first use) plus the open transaction's writes: every document the range can match, and a few it
 * cannot, which convex-test's own range check then drops. So queries, their results and
 * convex-test's read and write metrics are unchanged; `test/fastTables.test.ts` checks both scans
 * against the original, and indexed queries against a filter of the whole table, on random writes.
 *
 * Owns: the patch (installed once, through the same AsyncLocalStorage hook the other bench probes
 * use to find convex-test's objects). Never changes what a query returns or what it counts.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { isConvexGlobal } from "./instrument.js";

type Db = {
  _documents: Record<string, unknown>;
  _writes: Array<Record<string, unknown>>;
  get(table: string, id: string): unknown;
};

/** Per database, its committed ids by table. Built on first use from `_documents`. */
const tablesOf = new WeakMap<Db, Map<string, Set<string>>>();
/** Per database, table and field path, its committed ids by the field's value (`valueKey`). */
const bucketsOf = new WeakMap<Db, Map<string, Map<string, Map<string, Set<string>>>>>();
/** The equality the query being resolved starts with, if it narrows the scan (set only while
 * `_resolveQuerySource` runs, which is synchronous). */
let narrowing: { table: string; fieldPath: string; key: string } | undefined;
/** Each patched prototype's own `_iterateDocs`, for the test that compares the two. */
const originals = new WeakMap<object, Iterate>();
let installed = false;

/** The table an id belongs to, as convex-test spells ids (digits, then the table's name). */
export function tableOfId(id: string): string | null {
  const match = /^[0-9]+/.exec(id);
  if (!match || match[0].length === id.length) return null;
  return id.slice(match[0].length);
}

function tables(db: Db): Map<string, Set<string>> {
  let byTable = tablesOf.get(db);
  if (byTable === undefined) {
    byTable = new Map();
    for (const id of Object.keys(db._documents)) idsOf(byTable, tableOfId(id)).add(id);
    tablesOf.set(db, byTable);
  }
  return byTable;
}

function idsOf(byTable: Map<string, Set<string>>, table: string | null): Set<string> {
  const key = table ?? "";
  let ids = byTable.get(key);
  if (ids === undefined) byTable.set(key, (ids = new Set()));
  return ids;
}

/** The committed ids of `table` in `db` (kept on every top-level commit), or undefined when
 * this module does not follow that database's commits (its prototype is not patched): for a
 * test's direct view of a table, without a walk of the whole store. */
export function committedIdsOf(db: object, table: string): ReadonlySet<string> | undefined {
  if (!originals.has(Object.getPrototypeOf(db))) return undefined;
  return tables(db as Db).get(table) ?? new Set();
}

/** A key per primitive value, equal for equal values (coarser is safe: the range check runs
 * after); undefined for other values, which no equality on a primitive can match. */
function valueKey(value: unknown): string | undefined {
  if (value === null) return "null";
  const type = typeof value;
  return type === "string" || type === "number" || type === "boolean"
    ? `${type}:${String(value)}`
    : undefined;
}

/** A document's value at a dotted field path, as convex-test reads it for index ranges and
 * sorting. */
export function fieldValue(doc: unknown, fieldPath: string): unknown {
  let value = doc;
  for (const part of fieldPath.split(".")) {
    value =
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? (value as Record<string, unknown>)[part]
        : undefined;
  }
  return value;
}

/** The committed ids of `table` by the value at `fieldPath`, built on first use. */
function bucketsFor(db: Db, table: string, fieldPath: string): Map<string, Set<string>> {
  let byTable = bucketsOf.get(db);
  if (byTable === undefined) bucketsOf.set(db, (byTable = new Map()));
  let byField = byTable.get(table);
  if (byField === undefined) byTable.set(table, (byField = new Map()));
  let buckets = byField.get(fieldPath);
  if (buckets === undefined) {
    byField.set(fieldPath, (buckets = new Map()));
    for (const id of tables(db).get(table) ?? []) {
      addTo(buckets, valueKey(fieldValue(db._documents[id], fieldPath)), id);
    }
  }
  return buckets;
}

function addTo(buckets: Map<string, Set<string>>, key: string | undefined, id: string): void {
  const k = key ?? "";
  let ids = buckets.get(k);
  if (ids === undefined) buckets.set(k, (ids = new Set()));
  ids.add(id);
}

/**
 * What each open write layer holds, by table, recorded as convex-test adds it (`_addWrite`, which
 * a nested transaction's commit also goes through into its parent; a rolled-back layer is dropped
 * with its entry): its ids, and, once a query narrows on a field, its ids by that field's value
 * (kept up to date by every later write of the layer). A scan then finds what the open
 * transaction wrote that may match without walking every id it wrote: a mutation enqueuing
 * thousands of jobs one by one, each enqueue querying the tables it writes, made that quadratic.
 */
type LayerIndex = {
  /** table → id → when the layer first wrote it (`writeClock`), for queries that snapshot. */
  byTable: Map<string, Map<string, number>>;
  /** table → field path → value key → ids whose version in this layer has that value. */
  buckets: Map<string, Map<string, Map<string, Set<string>>>>;
};
const layerIndexes = new WeakMap<object, LayerIndex>();
/** Counts writes, so that a query can ask what was written before it started. */
let writeClock = 0;
/** The write clock now: `isWritten(db, table, id, before)` is true only of writes up to it. */
export const writeClockNow = () => writeClock;

function layerIndexOf(layer: object): LayerIndex {
  let index = layerIndexes.get(layer);
  if (index === undefined)
    layerIndexes.set(layer, (index = { byTable: new Map(), buckets: new Map() }));
  return index;
}

/** Records a write of `id` (now `value`, or null for a delete) in `layer`, whose own version
 * before was `previous` (undefined if the layer had none). */
function recordWrite(
  layer: Record<string, unknown>,
  id: string,
  previous: unknown,
  value: unknown,
) {
  const index = layerIndexOf(layer);
  const table = tableOfId(id) ?? "";
  let ids = index.byTable.get(table);
  if (ids === undefined) index.byTable.set(table, (ids = new Map()));
  if (!ids.has(id)) ids.set(id, ++writeClock);
  for (const [fieldPath, buckets] of index.buckets.get(table) ?? []) {
    if (previous !== undefined && previous !== null) {
      buckets.get(valueKey(fieldValue(previous, fieldPath)) ?? "")?.delete(id);
    }
    if (value !== null) addTo(buckets, valueKey(fieldValue(value, fieldPath)), id);
  }
}

/** A layer's ids of `table` by the value at `fieldPath`, built on first use. */
function layerBuckets(layer: Record<string, unknown>, table: string, fieldPath: string) {
  const index = layerIndexOf(layer);
  let byField = index.buckets.get(table);
  if (byField === undefined) index.buckets.set(table, (byField = new Map()));
  let buckets = byField.get(fieldPath);
  if (buckets === undefined) {
    byField.set(fieldPath, (buckets = new Map()));
    for (const id of index.byTable.get(table)?.keys() ?? []) {
      const doc = layer[id];
      if (doc !== null) addTo(buckets, valueKey(fieldValue(doc, fieldPath)), id);
    }
  }
  return buckets;
}

/** Whether the open transaction (any of its layers) wrote `id` of `table` (by the write clock's
 * `before`, when given: a query answering as of its start). */
export function isWritten(
  db: Pick<Db, "_writes">,
  table: string,
  id: string,
  before = Number.POSITIVE_INFINITY,
): boolean {
  for (const layer of db._writes) {
    const at = layerIndexes.get(layer)?.byTable.get(table)?.get(id);
    if (at !== undefined && at <= before) return true;
  }
  return false;
}

/**
 * The ids the open transaction wrote in `table` that may match `equality` (a primitive value at a
 * field path; all of them without one). A superset: a document whose version in a lower layer
 * matches and whose newer version does not is among them, so a caller checks each as it stands.
 */
export function writtenIds(
  db: Pick<Db, "_writes">,
  table: string,
  equality?: { fieldPath: string; key: string },
): Set<string> {
  const written = new Set<string>();
  for (const layer of db._writes) {
    const ids =
      equality === undefined
        ? layerIndexes.get(layer)?.byTable.get(table)?.keys()
        : layerBuckets(layer as Record<string, unknown>, table, equality.fieldPath).get(
            equality.key,
          );
    if (ids !== undefined) for (const id of ids) written.add(id);
  }
  return written;
}

/** The equality a query source starts with, when it is on a primitive. */
export function equalityOf(source: any): typeof narrowing {
  if (source?.type !== "IndexRange") return undefined;
  const first = source.range?.[0];
  if (first?.type !== "Eq") return undefined;
  const key = valueKey(first.value);
  if (key === undefined) return undefined;
  return { table: String(source.indexName).split(".")[0], fieldPath: first.fieldPath, key };
}

/** convex-test's `_iterateDocs`: hands each document of a table (committed, or written by the open
 * transaction) to `callback`. */
export type Iterate = (this: any, tableName: string, callback: (doc: any) => void) => void;

/** convex-test's own scan of a prototype this module patched (undefined if it did not). */
export function originalIterateDocs(proto: object): Iterate | undefined {
  return originals.get(proto);
}

/** Replaces `_iterateDocs` and follows `commit` on convex-test's database prototype. */
export function patchDatabasePrototype(proto: any): void {
  if (originals.has(proto)) return;
  originals.set(proto, proto._iterateDocs);
  const addWrite = proto._addWrite;
  proto._addWrite = function (this: Db, id: string, value: unknown) {
    const layer = this._writes[this._writes.length - 1];
    const previous = layer?.[id];
    const result = addWrite.call(this, id, value);
    recordWrite(layer, id, previous, value);
    return result;
  };
  const commit = proto.commit;
  proto.commit = function (this: Db, ...args: unknown[]) {
    const last = this._writes.length === 1 ? this._writes[0] : undefined;
    const before = Object.keys(last ?? {}).map((id) => [id, this._documents[id]] as const);
    const result = commit.apply(this, args);
    const byTable = tables(this);
    for (const [id, old] of before) {
      const table = tableOfId(id);
      const now = this._documents[id];
      const ids = idsOf(byTable, table);
      if (now === undefined) ids.delete(id);
      else ids.add(id);
      for (const [fieldPath, buckets] of bucketsOf.get(this)?.get(table ?? "") ?? []) {
        if (old !== undefined) buckets.get(valueKey(fieldValue(old, fieldPath)) ?? "")?.delete(id);
        if (now !== undefined) addTo(buckets, valueKey(fieldValue(now, fieldPath)), id);
      }
    }
    return result;
  };
  const resolve = proto._resolveQuerySource;
  proto._resolveQuerySource = function (this: Db, query: { source: unknown }) {
    narrowing = equalityOf(query.source);
    try {
      return resolve.call(this, query);
    } finally {
      narrowing = undefined;
    }
  };
  proto._iterateDocs = function (this: Db, tableName: string, callback: (doc: unknown) => void) {
    const narrow = narrowing?.table === tableName ? narrowing : undefined;
    const ids = new Set(
      narrow
        ? bucketsFor(this, tableName, narrow.fieldPath).get(narrow.key)
        : tables(this).get(tableName),
    );
    for (const id of writtenIds(this, tableName, narrow)) ids.add(id);
    for (const id of ids) {
      const document = this.get(tableName, id);
      if (document !== null) callback(document);
    }
  };
}

/** Installs the patch for every convex-test backend created from now on (idempotent). */
export function installFastTables(): void {
  if (installed) return;
  installed = true;
  patchEachBackendDatabase(patchDatabasePrototype);
}

/**
 * Calls `patch` with the database prototype of each component of every convex-test backend, as the
 * backend's transactions enter their AsyncLocalStorage: the one hook the test backend's speed-ups
 * (this file's, bench/indexedRanges.ts) are installed through. `patch` must be idempotent.
 */
export function patchEachBackendDatabase(patch: (prototype: object) => void): void {
  const alsProto = AsyncLocalStorage.prototype as any;
  const origRun = alsProto.run;
  alsProto.run = function (this: unknown, store: any, ...rest: unknown[]) {
    if (isConvexGlobal(store)) {
      for (const component of Object.values(store.components ?? {}) as Array<{ db?: object }>) {
        if (component.db) patch(Object.getPrototypeOf(component.db));
      }
    }
    return origRun.call(this, store, ...rest);
  };
}
