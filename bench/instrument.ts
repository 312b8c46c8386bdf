/**
 * Counters taken from convex-test itself, not from app code.
 *
 * Two hooks, installed once per vitest worker by `installInstrumentation()`:
 *
 * 1. Function invocations. convex-test runs every query, mutation and action inside
 *    `executionContextStorage.run(ctx, ...)` (an AsyncLocalStorage of its own) with a context object
 *    `{ componentPath, udfPath, udfType, depth, ... }` (0.0.60 adds `paginatedQueries`, 0.0.70
 *    `pagination` on queries; neither is relied on). convex-test offers no public hook for function
 *    invocations (checked up to 0.0.70), so this is the narrowest shape check that serves; the
 *    counters spec fails at once if a release changes it (no invocation counted). We wrap
 *    `AsyncLocalStorage.prototype.run` and count a call whenever the store has that shape. convex-test's
 *    own helpers (`t.run`, `t.runInComponent`, the bookkeeping of scheduled functions) use the udfPaths
 *    "custom" / "inline" and are not counted. componentPath "" is the app; anything else is a pool
 *    (including the peer's nested "peer/batchWorker").
 *
 * 2. Documents and bytes. convex-test tracks them per transaction in `TransactionMetricsTracker`, a
 *    stack of layers (one per top-level transaction, one more per nested `ctx.runQuery/runMutation`;
 *    a child layer starts from its parent's usage and folds back on commit; on rollback only reads
 *    fold back). We wrap `startTransaction`, `commit` and `rollback`: a function's own usage is its
 *    layer's usage at the end, minus the usage it inherited, minus what its children added. The usage
 *    of a top-level layer at its end is one transaction's total (for the "largest transaction").
 *
 *    Each document read or written is also counted as billed bandwidth, at least 1 KiB a document
 *    (`MIN_BILLED_DOCUMENT_BYTES`): `trackRead` and `trackWrite` are wrapped to add it to the
 *    layer's metrics as two more fields, which fold like the others (reads on rollback too).
 *
 * 4. Each document write, for bench/writesByTable.ts: `onDocumentWrite(listener)` hears the
 *    function whose transaction wrote (keyed like `Counters.byFunction`) and the bytes convex-test
 *    counted. It does not touch the counters.
 *
 * 3. Transaction totals, for test/passBudget.ts: `onTopLevelTransaction(listener)` hears every
 *    labeled top-level transaction as it ends, with its total usage (index ranges included). It does
 *    not touch the counters above.
 *
 * Top-level transactions are serialized by convex-test's global lock and nested ones by a nested
 * lock, so "the transaction most recently started and not yet labeled" is the one whose function
 * enters its execution context next: that is how a layer learns which function it belongs to.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { TransactionMetricsTracker } from "convex-test/dist/transactionMetrics.js";

/** Bytes a document read or written counts for at least, in the billed-bandwidth estimate
 * (`Usage.billedBytesRead`, `billedBytesWritten`): 1 KiB, the bench's model of how bandwidth is billed. */
export const MIN_BILLED_DOCUMENT_BYTES = 1024;

export type Side = "app" | "pool";
export type UdfType = "query" | "mutation" | "action";

export type Usage = {
  docsRead: number;
  docsWritten: number;
  bytesRead: number;
  bytesWritten: number;
  /** Bytes as bandwidth is billed here: each document at least `MIN_BILLED_DOCUMENT_BYTES`. */
  billedBytesRead: number;
  billedBytesWritten: number;
};

export type Counters = {
  invocations: Record<Side, Record<UdfType, number>>;
  /** Invocations per function, keyed `componentPath:udfPath (type)`. */
  byFunction: Map<string, number>;
  /** Own usage, summed per side. */
  usage: Record<Side, Usage>;
  /** Own usage per function, keyed like byFunction. */
  usageByFunction: Map<string, Usage>;
  /** Top-level transactions seen (not counting convex-test's own helpers). */
  transactions: number;
  /** Usage summed over top-level transactions (must equal app + pool usage: a self-check). */
  txTotal: Usage;
  /** The largest top-level transaction, by documents read and by bytes read. */
  maxTxDocsRead: number;
  maxTxBytesRead: number;
  maxTxDocsReadFn: string;
  maxTxBytesReadFn: string;
};

type Metrics = {
  bytesRead: number;
  bytesWritten: number;
  documentsRead: number;
  documentsWritten: number;
  billedBytesRead: number;
  billedBytesWritten: number;
};
type Label = { side: Side; key: string } | "harness";
type Frame = { start: Metrics; children: Metrics; label?: Label };

export const zeroUsage = (): Usage => ({
  docsRead: 0,
  docsWritten: 0,
  bytesRead: 0,
  bytesWritten: 0,
  billedBytesRead: 0,
  billedBytesWritten: 0,
});
const zeroMetrics = (): Metrics => ({
  bytesRead: 0,
  bytesWritten: 0,
  documentsRead: 0,
  documentsWritten: 0,
  billedBytesRead: 0,
  billedBytesWritten: 0,
});

/** One top-level transaction's usage at its end, as convex-test's limits see it. */
export type TransactionTotal = {
  documentsRead: number;
  documentsWritten: number;
  bytesRead: number;
  bytesWritten: number;
  /** Index ranges read (convex-test's name, after Convex's limit on "database queries"). */
  databaseQueries: number;
};
/** `fn` is keyed like `Counters.byFunction`; `committed` is false when the transaction rolled back
 * (its writes are undone, but they were made: `total` still counts them). */
export type TransactionListener = (fn: string, total: TransactionTotal, committed: boolean) => void;

const listeners = new Set<TransactionListener>();

/** Hears one document write: the function whose layer wrote it, and its size as counted. */
export type WriteListener = (fn: string, bytes: number) => void;
const writeListeners = new Set<WriteListener>();

/** Calls `listener` at every document write of a labeled function (see the header comment, 4);
 * returns a function that removes it. Needs `installInstrumentation()`. */
export function onDocumentWrite(listener: WriteListener): () => void {
  writeListeners.add(listener);
  return () => writeListeners.delete(listener);
}

/** Calls `listener` at the end of every labeled top-level transaction (not convex-test's own
 * helpers); returns a function that removes it. Needs `installInstrumentation()`. */
export function onTopLevelTransaction(listener: TransactionListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function newCounters(): Counters {
  const byType = () => ({ query: 0, mutation: 0, action: 0 });
  return {
    invocations: { app: byType(), pool: byType() },
    byFunction: new Map(),
    usage: { app: zeroUsage(), pool: zeroUsage() },
    usageByFunction: new Map(),
    transactions: 0,
    txTotal: zeroUsage(),
    maxTxDocsRead: 0,
    maxTxBytesRead: 0,
    maxTxDocsReadFn: "",
    maxTxBytesReadFn: "",
  };
}

let counters: Counters = newCounters();
let installed = false;
/** The tracker of the transaction most recently started (see the header comment). */
let activeTracker: any = null;
const frames = new WeakMap<object, Frame[]>();

/** Starts counting afresh; returns the new counters object (filled as functions run). */
export function resetCounters(): Counters {
  counters = newCounters();
  return counters;
}

export function currentCounters(): Counters {
  return counters;
}

/** convex-test's global of one backend call: its components' databases, transaction manager and
 * scheduler. */
export function isConvexGlobal(store: any): boolean {
  return (
    typeof store === "object" &&
    store !== null &&
    typeof store.components === "object" &&
    typeof store.transactionManager === "object" &&
    "scheduler" in store
  );
}

/** True for convex-test's execution context (the store it runs every function in). */
export function isExecutionContext(store: unknown): store is {
  componentPath: string;
  udfPath: string;
  udfType: string;
  depth: number;
} {
  return (
    typeof store === "object" &&
    store !== null &&
    "componentPath" in store &&
    "udfPath" in store &&
    "udfType" in store &&
    "depth" in store &&
    typeof (store as { udfType: unknown }).udfType === "string"
  );
}

function pick(m: any): Metrics {
  return {
    bytesRead: m.bytesRead,
    bytesWritten: m.bytesWritten,
    documentsRead: m.documentsRead,
    documentsWritten: m.documentsWritten,
    billedBytesRead: m.billedBytesRead ?? 0,
    billedBytesWritten: m.billedBytesWritten ?? 0,
  };
}

function addUsage(into: Usage, m: Metrics) {
  into.docsRead += m.documentsRead;
  into.docsWritten += m.documentsWritten;
  into.bytesRead += m.bytesRead;
  into.bytesWritten += m.bytesWritten;
  into.billedBytesRead += m.billedBytesRead;
  into.billedBytesWritten += m.billedBytesWritten;
}

function endFrame(tracker: any, committed: boolean) {
  const layer = tracker._layers[tracker._layers.length - 1];
  const stack = frames.get(tracker);
  const frame = stack?.pop();
  if (!layer || !frame) return;
  const end = pick(layer.metrics);
  // What this layer adds to its parent: everything on commit, only reads on rollback.
  const delta: Metrics = {
    bytesRead: end.bytesRead - frame.start.bytesRead,
    documentsRead: end.documentsRead - frame.start.documentsRead,
    bytesWritten: committed ? end.bytesWritten - frame.start.bytesWritten : 0,
    documentsWritten: committed ? end.documentsWritten - frame.start.documentsWritten : 0,
    billedBytesRead: end.billedBytesRead - frame.start.billedBytesRead,
    billedBytesWritten: committed ? end.billedBytesWritten - frame.start.billedBytesWritten : 0,
  };
  const own: Metrics = {
    bytesRead: delta.bytesRead - frame.children.bytesRead,
    documentsRead: delta.documentsRead - frame.children.documentsRead,
    bytesWritten: committed ? delta.bytesWritten - frame.children.bytesWritten : 0,
    documentsWritten: committed ? delta.documentsWritten - frame.children.documentsWritten : 0,
    billedBytesRead: delta.billedBytesRead - frame.children.billedBytesRead,
    billedBytesWritten: committed
      ? delta.billedBytesWritten - frame.children.billedBytesWritten
      : 0,
  };
  const parent = stack![stack!.length - 1];
  if (parent) {
    parent.children.bytesRead += delta.bytesRead;
    parent.children.documentsRead += delta.documentsRead;
    parent.children.bytesWritten += delta.bytesWritten;
    parent.children.documentsWritten += delta.documentsWritten;
    parent.children.billedBytesRead += delta.billedBytesRead;
    parent.children.billedBytesWritten += delta.billedBytesWritten;
  }
  const label = frame.label;
  if (label === undefined || label === "harness") return;
  addUsage(counters.usage[label.side], own);
  const u = counters.usageByFunction.get(label.key) ?? zeroUsage();
  addUsage(u, own);
  counters.usageByFunction.set(label.key, u);
  if (!parent) {
    counters.transactions++;
    addUsage(counters.txTotal, delta);
    if (end.documentsRead > counters.maxTxDocsRead) {
      counters.maxTxDocsRead = end.documentsRead;
      counters.maxTxDocsReadFn = label.key;
    }
    if (end.bytesRead > counters.maxTxBytesRead) {
      counters.maxTxBytesRead = end.bytesRead;
      counters.maxTxBytesReadFn = label.key;
    }
    const total: TransactionTotal = {
      documentsRead: layer.metrics.documentsRead,
      documentsWritten: layer.metrics.documentsWritten,
      bytesRead: layer.metrics.bytesRead,
      bytesWritten: layer.metrics.bytesWritten,
      databaseQueries: layer.metrics.databaseQueries,
    };
    for (const listener of listeners) listener(label.key, total, committed);
  }
}

/** Installs the hooks (idempotent). */
export function installInstrumentation() {
  if (installed) return;
  installed = true;

  const proto = TransactionMetricsTracker.prototype as any;
  const origStart = proto.startTransaction;
  const origCommit = proto.commit;
  const origRollback = proto.rollback;
  proto.startTransaction = function (this: any, ...args: unknown[]) {
    const parentLayer = this._layers[this._layers.length - 1];
    const r = origStart.apply(this, args);
    let stack = frames.get(this);
    if (!stack) frames.set(this, (stack = []));
    stack.push({
      start: parentLayer ? pick(parentLayer.metrics) : zeroMetrics(),
      children: zeroMetrics(),
    });
    // The tracker of the transaction now running, read by the invocation counters.
    // eslint-disable-next-line @typescript-eslint/no-this-alias
    activeTracker = this;
    return r;
  };
  proto.commit = function (this: any, ...args: unknown[]) {
    endFrame(this, true);
    return origCommit.apply(this, args);
  };
  proto.rollback = function (this: any, ...args: unknown[]) {
    endFrame(this, false);
    // convex-test folds only its own read metrics back into the parent: fold the billed reads too.
    const billedRead = this._layers[this._layers.length - 1]?.metrics.billedBytesRead;
    const r = origRollback.apply(this, args);
    const parent = this._layers[this._layers.length - 1];
    if (parent && billedRead !== undefined) parent.metrics.billedBytesRead = billedRead;
    return r;
  };
  const billed = (bytes: number) => Math.max(bytes, MIN_BILLED_DOCUMENT_BYTES);
  const origTrackRead = proto.trackRead;
  const origTrackWrite = proto.trackWrite;
  proto.trackRead = function (this: any, size: number) {
    const metrics = this._layers[this._layers.length - 1]?.metrics;
    if (metrics) metrics.billedBytesRead = (metrics.billedBytesRead ?? 0) + billed(size);
    return origTrackRead.call(this, size);
  };
  proto.trackWrite = function (this: any, size: number) {
    if (writeListeners.size > 0) {
      const stack = frames.get(this);
      const label = stack?.[stack.length - 1]?.label;
      if (label !== undefined && label !== "harness") {
        for (const listener of writeListeners) listener(label.key, size);
      }
    }
    const metrics = this._layers[this._layers.length - 1]?.metrics;
    if (metrics) metrics.billedBytesWritten = (metrics.billedBytesWritten ?? 0) + billed(size);
    return origTrackWrite.call(this, size);
  };

  const alsProto = AsyncLocalStorage.prototype as any;
  const origRun = alsProto.run;
  alsProto.run = function (this: unknown, store: unknown, ...rest: unknown[]) {
    if (isExecutionContext(store)) onInvocation(store);
    return origRun.call(this, store, ...rest);
  };
}

function onInvocation(store: { componentPath: string; udfPath: string; udfType: string }) {
  const harness =
    store.udfPath === "custom" || store.udfPath === "inline" || store.udfType === "http";
  const side: Side = store.componentPath === "" ? "app" : "pool";
  const key = `${store.componentPath || "app"}:${store.udfPath} (${store.udfType})`;
  if (store.udfType === "query" || store.udfType === "mutation") {
    // Label the innermost unlabeled layer of the active transaction: this function's.
    const stack = activeTracker ? frames.get(activeTracker) : undefined;
    const frame = stack?.[stack.length - 1];
    if (frame && frame.label === undefined) frame.label = harness ? "harness" : { side, key };
  }
  if (harness) return;
  const type = store.udfType as UdfType;
  if (!(type in counters.invocations[side])) return;
  counters.invocations[side][type]++;
  counters.byFunction.set(key, (counters.byFunction.get(key) ?? 0) + 1);
}
