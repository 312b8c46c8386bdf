/**
 * The bench's faster table scan (bench/fastTables.ts) must hand every query exactly the documents
 * convex-test's own scan does: after any sequence of inserts, patches and deletes, committed or
 * rolled back, and while a transaction has writes of its own.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { convexTest } from "convex-test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  originalIterateDocs,
  patchDatabasePrototype,
  tableOfId,
  type Iterate,
} from "../bench/fastTables.js";
import { isConvexGlobal } from "../bench/instrument.js";

import schema from "./app/schema.js";
import { appModules } from "./helpers.js";

/** Three of the test app's tables (`completions` has an index on `workId`), and a row for any. */
const TABLES = ["filler", "effects", "completions"] as const;
const row = (table: string, n: number) =>
  table === "filler"
    ? { n }
    : table === "effects"
      ? { key: `k${n}`, value: n }
      : { workId: `w${n % 4}`, result: n };

/** Each `workId` an indexed query asks for: the four rows take, and one no row has. */
const WORK_IDS = ["w0", "w1", "w2", "w3", "w9"];

/** Checks every indexed lookup of `completions` against a filter of the whole table (convex-test's
 * own scan), inside the transaction `ctx` is in: the same documents, in the same order. */
async function checkIndexedLookups(ctx: any): Promise<void> {
  const all: any[] = [];
  captured.original().call(captured.db(), "completions", (doc) => all.push(doc));
  for (const workId of WORK_IDS) {
    const rows = await ctx.db
      .query("completions")
      .withIndex("by_workId", (q: any) => q.eq("workId", workId))
      .collect();
    const expected = all
      .filter((doc) => doc.workId === workId)
      .sort((a, b) => a._creationTime - b._creationTime);
    expect(rows.map((doc: any) => doc._id)).toEqual(expected.map((doc) => doc._id));
  }
}

/** Captures the app database of the latest backend call, and patches its prototype (if the
 * suite's setup has not already). */
function captureDatabase(): { db: () => object; original: () => Iterate } {
  let db: object | undefined;
  const proto = AsyncLocalStorage.prototype as any;
  const run = proto.run;
  proto.run = function (this: unknown, store: any, ...rest: unknown[]) {
    if (isConvexGlobal(store) && store.components[""]?.db) {
      db = store.components[""].db as object;
      patchDatabasePrototype(Object.getPrototypeOf(db));
    }
    return run.call(this, store, ...rest);
  };
  return { db: () => db!, original: () => originalIterateDocs(Object.getPrototypeOf(db!))! };
}

const captured = captureDatabase();

/** The ids each scan hands over, per table, sorted (callers sort by a total order anyway). */
function scans(db: object): { fast: string[][]; original: string[][] } {
  const ids = (iterate: Iterate) =>
    TABLES.map((table) => {
      const out: string[] = [];
      iterate.call(db, table, (doc) => out.push(doc._id));
      return out.sort();
    });
  return {
    fast: ids((Object.getPrototypeOf(db) as { _iterateDocs: Iterate })._iterateDocs),
    original: ids(captured.original()),
  };
}

const vOp = fc.oneof(
  fc.record({
    kind: fc.constant("insert" as const),
    table: fc.constantFrom(...TABLES),
    n: fc.nat(9),
  }),
  fc.record({ kind: fc.constant("patch" as const), pick: fc.nat(), n: fc.nat(9) }),
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
);
type Op = typeof vOp extends fc.Arbitrary<infer T> ? T : never;

/** Applies one operation; patches and deletes pick among the ids written so far. */
async function apply(ctx: any, op: Op, known: string[]): Promise<void> {
  if (op.kind === "insert") {
    known.push(await ctx.db.insert(op.table, row(op.table, op.n)));
    return;
  }
  if (known.length === 0) return;
  const id = known[op.pick % known.length]!;
  if ((await ctx.db.get(id)) === null) return;
  if (op.kind === "patch") await ctx.db.patch(id, row(tableOfId(id)!, op.n));
  else await ctx.db.delete(id);
}

describe("the bench's table scan", () => {
  it("names an id's table as convex-test spells ids", () => {
    expect(tableOfId("10004filler")).toBe("filler");
    expect(tableOfId("12345")).toBeNull();
    expect(tableOfId("effects")).toBeNull();
  });

  it("replaces convex-test's scan, keeping the original for comparison", async () => {
    const t = convexTest(schema, appModules);
    await t.run(async (ctx: any) => await ctx.db.insert("filler", { n: 1 }));
    const proto = Object.getPrototypeOf(captured.db()) as { _iterateDocs: Iterate };
    expect(typeof captured.original()).toBe("function");
    expect(proto._iterateDocs).not.toBe(captured.original());
  });

  it("hands every query the same documents as convex-test's scan, in and out of transactions", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            ops: fc.array(vOp, { maxLength: 6 }),
            then: fc.array(vOp, { maxLength: 4 }),
            fail: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (transactions) => {
          const t = convexTest(schema, appModules);
          const known: string[] = [];
          let checks = 0;
          for (const tx of transactions) {
            await t
              .run(async (ctx: any) => {
                for (const op of tx.ops) await apply(ctx, op, known);
                const inside = scans(captured.db());
                expect(inside.fast).toEqual(inside.original);
                await checkIndexedLookups(ctx);
                checks++;
                if (tx.fail) throw new Error("roll back");
              })
              .catch((error: Error) => expect(error.message).toContain("roll back"));
            const after = scans(captured.db());
            expect(after.fast).toEqual(after.original);
            checks++;
            await t.run(async (ctx: any) => {
              for (const op of tx.then) await apply(ctx, op, known);
              await checkIndexedLookups(ctx);
              const rows = await ctx.db.query("filler").collect();
              expect(rows.map((doc: any) => doc._id).sort()).toEqual(
                scans(captured.db()).original[0],
              );
            });
          }
          expect(checks).toBe(transactions.length * 2);
        },
      ),
      { numRuns: 60 },
    );
  });
});
