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
 * ids the open transaction wrote, exactly as the original does for the whole database. The same
 * documents reach the callback (callers sort them by a total order afterwards), so queries, their
 * results and convex-test's read and write metrics are unchanged; `test/fastTables.test.ts` checks
 * that against the original on random writes.
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
const patched = new WeakSet<object>();
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

/** Replaces `_iterateDocs` and follows `commit` on convex-test's database prototype. */
export function patchDatabasePrototype(proto: any): void {
  if (patched.has(proto)) return;
  patched.add(proto);
  const commit = proto.commit;
  proto.commit = function (this: Db, ...args: unknown[]) {
    const topLevel = this._writes.length === 1;
    const last = this._writes[this._writes.length - 1];
    const result = commit.apply(this, args);
    if (topLevel && last !== undefined) {
      const byTable = tables(this);
      for (const [id, write] of Object.entries(last)) {
        const ids = idsOf(byTable, tableOfId(id));
        if (write === null) ids.delete(id);
        else ids.add(id);
      }
    }
    return result;
  };
  proto._iterateDocs = function (this: Db, tableName: string, callback: (doc: unknown) => void) {
    const ids = new Set(tables(this).get(tableName));
    for (const layer of this._writes) {
      for (const id of Object.keys(layer)) if (tableOfId(id) === tableName) ids.add(id);
    }
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
  const alsProto = AsyncLocalStorage.prototype as any;
  const origRun = alsProto.run;
  alsProto.run = function (this: unknown, store: any, ...rest: unknown[]) {
    if (isConvexGlobal(store)) {
      for (const component of Object.values(store.components ?? {}) as Array<{ db?: object }>) {
        if (component.db) patchDatabasePrototype(Object.getPrototypeOf(component.db));
      }
    }
    return origRun.call(this, store, ...rest);
  };
}
