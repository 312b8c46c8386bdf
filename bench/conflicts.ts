/**
 * Potential OCC conflicts, recorded: for every transaction convex-test runs, the documents and
 * index ranges it read and the documents it wrote, for the model of bench/conflictModel.ts
 * (re-exported here: `potentialConflicts(transactions, windowMs)` counts, per pair of functions, the
 * pairs of transactions a real deployment could run at once and would retry).
 *
 * Owns: `startRecording()` / `stopRecording()` and the hooks behind them. Never changes what a
 * transaction does: it only watches convex-test's own objects, reads documents through the
 * database's original `get` (so convex-test's metrics are not disturbed), and keeps the indexed and
 * small fields of documents, not whole documents.
 *
 * Recorded, per top-level transaction (a query or mutation not nested in another; a nested
 * `ctx.runQuery`/`ctx.runMutation` belongs to its top-level transaction, as in Convex):
 * - reads: a point read per `db.get` (and per patch, replace and delete, which read their document
 *   first), except of a document it wrote itself; an index range per query: its index, range
 *   expressions (eq/gt/gte/lt/lte) and order, and the interval actually read, from the range's
 *   start (or a page's cursor) up to and including the last document the stream returned, or to
 *   the range's end if the stream reached it before any `.take(n)`/`.first()` limit — how Convex
 *   records those reads and a page. `.filter()` does not narrow a read: every row it skipped was
 *   read. A query never iterated read nothing. A snapshot query (batch-worker's
 *   `runSnapshotQuery`) takes no read dependency and is not recorded.
 * - writes: inserts, patches, replaces and deletes, with the document before and after (its indexed
 *   fields, and its other fields of up to SMALL_FIELD_CHARS characters, for people to read). A
 *   nested call that rolled back wrote nothing (its reads stay: they happened); a top-level
 *   transaction that rolled back (a query, a failed mutation) wrote nothing.
 * - its start (virtual ms), and the scheduled function it belongs to, if any.
 * convex-test's own helpers (`t.run`, `t.runInComponent`, the scheduler's bookkeeping of
 * `_scheduled_functions`: a function starting or ending) are not recorded. Read and write sets are
 * those of convex-test's serial run: run concurrently, a transaction could read a little
 * differently (e.g. a `.first()` stopping at another row).
 *
 * How it hooks convex-test (0.0.60), whose `DatabaseFake` and `TransactionManager` are not exported
 * (and whose global is no `globalThis.Convex.components`: `globalThis.Convex` only forwards
 * syscalls): every call into a backend runs in `convexGlobalStorage.run(convexGlobal, ...)`, every
 * function in `executionContextStorage.run(ctx, ...)`, a scheduled function in
 * `requestMetadataStorage.run({ scheduledFunctionId, ... })`, all AsyncLocalStorages. Wrapping
 * `AsyncLocalStorage.prototype.run` finds those stores (and so the storages), and through the first
 * the prototypes of the backend's database and transaction manager, patched once:
 * `begin`/`commit`/`rollback(isNested)` delimit transactions, `stashWrites`/`restoreWrites` a
 * snapshot query, `get`, `startQuery`/`queryNext`, `paginate` and the writes record. Top-level
 * transactions are serialized by convex-test's lock, so the first query or mutation to enter its
 * execution context after a top-level `begin` is that transaction's function.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { jsonToConvex, type Value } from "convex/values";
import {
  keyOf,
  type Doc,
  type Key,
  type RangeRead,
  type Transaction,
  type Write,
} from "./conflictModel.js";
import { isConvexGlobal, isExecutionContext } from "./instrument.js";

export * from "./conflictModel.js";

// ---------------------------------------------------------------------------------------------
// The recording
// ---------------------------------------------------------------------------------------------

/** A query being read: its read is kept from its first row on (a query never iterated read
 * nothing) and ends at the last row returned, or at the range's end once the stream ends before any
 * limit does. */
type QueryRead = { read: RangeRead; limit: number | null; returned: number; kept: boolean };
type Open = {
  tx: Transaction;
  /** Writes per nesting level: a nested commit folds its level into its parent's. */
  levels: Write[][];
  /** Until its function enters its execution context. */
  unlabeled: boolean;
  /** convex-test's own helpers: recorded nowhere. */
  harness: boolean;
  depth: number;
  /** Inside a snapshot query: reads take no dependency. */
  snapshot: number;
  queries: Map<string, QueryRead>;
  pointsRead: Set<string>;
  written: Set<string>;
};

let recording: Transaction[] | null = null;
let installed = false;
/** convex-test's `convexGlobalStorage`, `executionContextStorage` and `requestMetadataStorage`,
 * found by the hook. */
let globalStorage: AsyncLocalStorage<any> | undefined;
let contextStorage: AsyncLocalStorage<any> | undefined;
let requestStorage: AsyncLocalStorage<any> | undefined;
/** A scheduled function's request metadata → its component (that of the first function entered
 * under it: the function itself). */
const scheduledComponent = new WeakMap<object, string>();
const patched = new WeakSet<object>();
/** The transaction open on each transaction manager. */
const open = new WeakMap<object, Open>();
/** Depth of recorder-internal database calls (their own `get`s are not reads). */
let internal = 0;

/** Starts recording every transaction of every convex-test backend (installs the hooks once). */
export function startRecording(): void {
  install();
  recording = [];
}

/** Stops recording; returns the transactions that ended meanwhile, in the order they ended. */
export function stopRecording(): Transaction[] {
  const out = recording ?? [];
  recording = null;
  return out;
}

const fnName = (componentPath: string, udfPath: string) => `${componentPath || "app"}:${udfPath}`;

function isRequestMetadata(store: any): boolean {
  return (
    typeof store === "object" &&
    store !== null &&
    "requestId" in store &&
    "scheduledFunctionId" in store
  );
}

function install() {
  if (installed) return;
  installed = true;
  const alsProto = AsyncLocalStorage.prototype as any;
  const origRun = alsProto.run;
  alsProto.run = function (this: AsyncLocalStorage<any>, store: any, ...rest: unknown[]) {
    notice(this, store);
    return origRun.call(this, store, ...rest);
  };
}

/** Learns convex-test's storages and backends from the stores they run with. */
function notice(storage: AsyncLocalStorage<any>, store: any) {
  if (isConvexGlobal(store)) {
    globalStorage = storage;
    patchBackend(store);
  } else if (isExecutionContext(store)) {
    contextStorage = storage;
    const request = requestStorage?.getStore();
    if (request?.scheduledFunctionId && !scheduledComponent.has(request))
      scheduledComponent.set(request, store.componentPath);
    if (recording) onContext(store);
  } else if (isRequestMetadata(store)) {
    requestStorage = storage;
  }
}

/** The transaction open on the backend of the current call, if recording. */
function current(): Open | undefined {
  const g = globalStorage?.getStore();
  return g ? open.get(g.transactionManager) : undefined;
}

/** The function running now (the innermost, nested ones included). */
function runningFn(): string {
  const ctx = contextStorage?.getStore();
  return ctx ? fnName(ctx.componentPath, ctx.udfPath) : "unknown";
}

function onContext(ctx: {
  componentPath: string;
  udfPath: string;
  udfType: string;
  depth: number;
}) {
  if (ctx.udfType !== "query" && ctx.udfType !== "mutation") return;
  const o = current();
  if (!o) return;
  const name = fnName(ctx.componentPath, ctx.udfPath);
  if (o.unlabeled) {
    o.unlabeled = false;
    o.harness = ctx.udfPath === "custom" || ctx.udfPath === "inline";
    o.tx.fn = name;
    o.tx.type = ctx.udfType;
    o.depth = ctx.depth;
    const request = requestStorage?.getStore();
    const component = request && scheduledComponent.get(request);
    if (request?.scheduledFunctionId && component !== undefined)
      o.tx.scheduledBy = { component, id: request.scheduledFunctionId };
  } else if (ctx.depth === o.depth + 1 && !o.tx.calls.includes(name)) {
    o.tx.calls.push(name);
  }
}

function patchBackend(store: any) {
  const tm = store.transactionManager;
  const db = store.components[""]?.db;
  if (!tm || !db) return;
  const tmProto = Object.getPrototypeOf(tm);
  if (!patched.has(tmProto)) {
    patched.add(tmProto);
    patchTransactionManager(tmProto);
  }
  const dbProto = Object.getPrototypeOf(db);
  if (!patched.has(dbProto)) {
    patched.add(dbProto);
    patchDatabase(dbProto);
  }
}

function patchTransactionManager(proto: any) {
  const { begin, commit, rollback, stashWrites, restoreWrites } = proto;
  proto.begin = async function (this: object, isNested: boolean, ...rest: unknown[]) {
    await begin.call(this, isNested, ...rest);
    if (!recording) return;
    if (!isNested) {
      open.set(this, {
        tx: {
          fn: "unknown",
          calls: [],
          type: "mutation",
          start: Date.now(),
          committed: false,
          reads: [],
          writes: [],
        },
        levels: [[]],
        unlabeled: true,
        harness: false,
        depth: 0,
        snapshot: 0,
        queries: new Map(),
        pointsRead: new Set(),
        written: new Set(),
      });
    } else open.get(this)?.levels.push([]);
  };
  const end = (tm: object, isNested: boolean, committed: boolean) => {
    const o = open.get(tm);
    if (!o) return;
    const level = o.levels.pop() ?? [];
    if (isNested) {
      if (committed) o.levels[o.levels.length - 1]?.push(...level);
      return;
    }
    open.delete(tm);
    o.tx.committed = committed;
    o.tx.writes = committed ? level : [];
    if (recording && !o.harness && !o.unlabeled) recording.push(o.tx);
  };
  proto.commit = function (this: object, isNested: boolean, ...rest: unknown[]) {
    const r = commit.call(this, isNested, ...rest);
    end(this, isNested, true);
    return r;
  };
  proto.rollback = function (this: object, isNested: boolean, ...rest: unknown[]) {
    const r = rollback.call(this, isNested, ...rest);
    end(this, isNested, false);
    return r;
  };
  proto.stashWrites = function (this: object, ...rest: unknown[]) {
    const o = open.get(this);
    if (o) o.snapshot++;
    return stashWrites.call(this, ...rest);
  };
  proto.restoreWrites = function (this: object, ...rest: unknown[]) {
    const o = open.get(this);
    if (o) o.snapshot--;
    return restoreWrites.call(this, ...rest);
  };
}

/** The index key fields of `index` on `table` in `db`'s schema; undefined if unknown. */
function indexFields(db: any, table: string, index: string): string[] | undefined {
  if (index === "by_creation_time") return ["_creationTime", "_id"];
  if (index === "by_id") return ["_id"];
  const indexes: Array<{ indexDescriptor: string; fields: string[] }> | undefined =
    db._schema?.tables.get(table)?.indexes;
  const found = indexes?.find((i) => i.indexDescriptor === index);
  return found && [...found.fields, "_creationTime", "_id"];
}

/** Every field any index of `table` orders by (top-level names), with `_id` and `_creationTime`. */
const indexedFieldsCache = new WeakMap<object, Map<string, Set<string>>>();
function indexedFields(db: any, table: string): Set<string> {
  let byTable = indexedFieldsCache.get(db);
  if (!byTable) indexedFieldsCache.set(db, (byTable = new Map()));
  let fields = byTable.get(table);
  if (!fields) {
    fields = new Set(["_id", "_creationTime"]);
    const indexes: Array<{ fields: string[] }> = db._schema?.tables.get(table)?.indexes ?? [];
    for (const i of indexes) for (const f of i.fields) fields.add(f.split(".")[0]);
    byTable.set(table, fields);
  }
  return fields;
}

/** Fields kept for people to read, besides the indexed ones: small ones ("state" of runStatus). */
const SMALL_FIELD_CHARS = 100;

const isSmall = (v: unknown) =>
  (JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? String(x) : x)) ?? "").length <=
  SMALL_FIELD_CHARS;

/** What is kept of a document version: every field an index orders by, and other small fields. */
function project(db: any, table: string, doc: any): Doc | null {
  if (doc === null || doc === undefined) return null;
  const out: Doc = {};
  const indexed = indexedFields(db, table);
  for (const [f, v] of Object.entries(doc))
    if (indexed.has(f) || isSmall(v)) out[f] = v as Value | undefined;
  return out;
}

/** convex-test ids are a number then the table name. */
const tableOfId = (id: string) => id.replace(/^[0-9]+/, "");

const queryValue = (v: any): Value | undefined =>
  v !== null && typeof v === "object" && "$undefined" in v ? undefined : jsonToConvex(v);

/** The range read a query (convex-test's JSON form) starts: a full table scan reads by creation
 * time, a search reads its whole table. */
function rangeOf(db: any, query: any, fn: string): RangeRead {
  const source = query.source;
  const base = { kind: "range" as const, fn, component: db._componentPath as string };
  if (source.type === "IndexRange") {
    const [table, index] = source.indexName.split(".");
    const fields = indexFields(db, table, index);
    return {
      ...base,
      table,
      index,
      // An index convex-test does not know (a system table's): read whole, by creation time.
      fields: fields ?? ["_creationTime", "_id"],
      range: fields
        ? source.range.map((e: any) => ({
            op: e.type.toLowerCase(),
            field: e.fieldPath,
            value: queryValue(e.value),
          }))
        : [],
      order: source.order ?? "asc",
    };
  }
  const table = source.type === "FullTableScan" ? source.tableName : source.indexName.split(".")[0];
  return {
    ...base,
    table,
    index: source.type === "FullTableScan" ? "by_creation_time" : `${source.indexName} (search)`,
    fields: ["_creationTime", "_id"],
    range: [],
    order: source.type === "FullTableScan" ? (source.order ?? "asc") : "asc",
  };
}

/** A paginate cursor (convex-test's encoding) as a key. */
function cursorKey(cursor: string): Key {
  return (JSON.parse(cursor) as Array<string | null>).map((k) =>
    k === null ? undefined : jsonToConvex(JSON.parse(k)),
  );
}

function patchDatabase(proto: any) {
  const { get, insert, patch, replace, startQuery, queryNext, paginate } = proto;
  const remove = proto.delete;
  const quiet = <R>(f: () => R): R => {
    internal++;
    try {
      return f();
    } finally {
      internal--;
    }
  };
  const recordable = (): Open | undefined => {
    const o = recording ? current() : undefined;
    return o && !o.harness ? o : undefined;
  };

  proto.get = function (this: any, table: string | undefined, id: string) {
    const doc = get.call(this, table, id);
    if (internal > 0) return doc;
    const o = recordable();
    const key = `${this._componentPath}\u0000${id}`;
    if (o && o.snapshot === 0 && !o.written.has(key) && !o.pointsRead.has(key)) {
      o.pointsRead.add(key);
      o.tx.reads.push({
        kind: "point",
        fn: runningFn(),
        component: this._componentPath,
        table: table ?? tableOfId(id),
        id,
      });
    }
    return doc;
  };

  const write = (db: any, table: string, id: string, before: any) => {
    const o = recordable();
    if (!o) return;
    const after = quiet(() => get.call(db, table, id));
    o.written.add(`${db._componentPath}\u0000${id}`);
    o.levels[o.levels.length - 1]?.push({
      fn: runningFn(),
      component: db._componentPath,
      table,
      id,
      before: project(db, table, before),
      after: project(db, table, after),
    });
  };
  const before = (db: any, table: string | undefined, id: string) => {
    try {
      return quiet(() => get.call(db, table, id));
    } catch {
      return null; // the write itself reports a bad id
    }
  };

  proto.insert = function (this: any, table: string, value: unknown) {
    const id = quiet(() => insert.call(this, table, value));
    write(this, table, id, null);
    return id;
  };
  for (const [name, orig] of [
    ["patch", patch],
    ["replace", replace],
  ] as const) {
    proto[name] = function (this: any, table: string | undefined, id: string, value: unknown) {
      const old = before(this, table, id);
      const r = quiet(() => orig.call(this, table, id, value));
      write(this, table ?? tableOfId(id), id, old);
      return r;
    };
  }
  proto.delete = function (this: any, table: string | undefined, id: string) {
    const old = before(this, table, id);
    const r = quiet(() => remove.call(this, table, id));
    write(this, table ?? tableOfId(id), id, old);
    return r;
  };

  proto.startQuery = function (this: any, query: any) {
    const queryId = quiet(() => startQuery.call(this, query));
    const o = recordable();
    if (o && o.snapshot === 0) {
      const limit = query.operators.find((op: any) => "limit" in op)?.limit ?? null;
      const read = rangeOf(this, query, runningFn());
      o.queries.set(`${this._componentPath}\u0000${queryId}`, {
        read,
        limit,
        returned: 0,
        kept: false,
      });
    }
    return queryId;
  };
  proto.queryNext = function (this: any, queryId: number) {
    const r = quiet(() => queryNext.call(this, queryId));
    const o = recordable();
    const id = `${this._componentPath}\u0000${queryId}`;
    const q = o?.queries.get(id);
    if (!o || !q) return r;
    if (!q.kept) {
      q.kept = true;
      o.tx.reads.push(q.read);
    }
    if (!r.done) {
      q.returned++;
      q.read.upTo = keyOf(r.value, q.read.fields);
    } else {
      if (q.limit === null || q.returned < q.limit) delete q.read.upTo;
      o.queries.delete(id);
    }
    return r;
  };

  proto.paginate = function (this: any, args: any) {
    const result = quiet(() => paginate.call(this, args));
    const o = recordable();
    if (!o || o.snapshot > 0 || args.cursor === "_end_cursor") return result;
    const read = rangeOf(this, args.query, runningFn());
    if (args.cursor) read.after = cursorKey(args.cursor);
    const end = args.endCursor && args.endCursor !== "_end_cursor" ? args.endCursor : null;
    if (end) read.upTo = cursorKey(end);
    else if (!result.isDone) read.upTo = cursorKey(result.continueCursor);
    o.tx.reads.push(read);
    return result;
  };
}
