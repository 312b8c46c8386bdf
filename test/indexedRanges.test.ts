/**
 * The sorted indexes of bench/indexedRanges.ts must not change what any query answers: after any
 * sequence of inserts, patches and deletes, committed or rolled back, and inside a transaction
 * with writes of its own, every range on an index, taken first, a few or all, in either order,
 * answers the same documents in the same order as convex-test's walk of the whole table.
 */
import { convexTest } from "convex-test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { installIndexedRanges, withoutIndexedRanges } from "../bench/indexedRanges.js";
import schema from "./app/schema.js";
import { appModules } from "./helpers.js";

installIndexedRanges();

/** workIds drawn from a few, so that ranges and equalities meet several rows each. */
const WORK_IDS = ["w0", "w1", "w2", "w3", "w4"];

const vOp = fc.oneof(
  fc.record({ kind: fc.constant("insert" as const), w: fc.nat(4) }),
  fc.record({ kind: fc.constant("patch" as const), pick: fc.nat(), w: fc.nat(4) }),
  fc.record({ kind: fc.constant("delete" as const), pick: fc.nat() }),
);
type Op = typeof vOp extends fc.Arbitrary<infer T> ? T : never;

/** A range on `completions.by_workId` (or none), an order, and how many to take. */
const vQuery = fc.record({
  range: fc.constantFrom("eq", "gt", "gte", "lt", "lte", "between", "none"),
  w: fc.nat(4),
  order: fc.constantFrom("asc" as const, "desc" as const),
  take: fc.constantFrom(1, 2, 5, undefined),
});
type Query = typeof vQuery extends fc.Arbitrary<infer T> ? T : never;

async function apply(ctx: any, op: Op, known: string[]): Promise<void> {
  if (op.kind === "insert") {
    known.push(await ctx.db.insert("completions", { workId: WORK_IDS[op.w], result: op.w }));
    return;
  }
  if (known.length === 0) return;
  const id = known[op.pick % known.length]!;
  if ((await ctx.db.get(id)) === null) return;
  if (op.kind === "patch") await ctx.db.patch(id, { workId: WORK_IDS[op.w] });
  else await ctx.db.delete(id);
}

/** The ids the query answers. */
async function answer(ctx: any, q: Query): Promise<string[]> {
  const w = WORK_IDS[q.w];
  const query = ctx.db
    .query("completions")
    .withIndex("by_workId", (r: any) =>
      q.range === "eq"
        ? r.eq("workId", w)
        : q.range === "gt"
          ? r.gt("workId", w)
          : q.range === "gte"
            ? r.gte("workId", w)
            : q.range === "lt"
              ? r.lt("workId", w)
              : q.range === "lte"
                ? r.lte("workId", w)
                : q.range === "between"
                  ? r.gte("workId", "w1").lte("workId", w)
                  : r,
    )
    .order(q.order);
  const docs = q.take === undefined ? await query.collect() : await query.take(q.take);
  return docs.map((doc: any) => doc._id);
}

describe("index ranges from sorted indexes", () => {
  it("answer every query as convex-test's walk of the whole table does", async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            ops: fc.array(vOp, { maxLength: 6 }),
            queries: fc.array(vQuery, { minLength: 1, maxLength: 4 }),
            fail: fc.boolean(),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        async (transactions) => {
          const t = convexTest(schema, appModules);
          const known: string[] = [];
          for (const tx of transactions) {
            await t
              .run(async (ctx: any) => {
                for (const op of tx.ops) await apply(ctx, op, known);
                for (const q of tx.queries) {
                  const fast = await answer(ctx, q);
                  const whole = await withoutIndexedRanges(() => answer(ctx, q));
                  expect(fast, JSON.stringify(q)).toEqual(whole);
                  compared++;
                }
                if (tx.fail) throw new Error("rolled back");
              })
              .catch((error: Error) => {
                if (error.message !== "rolled back") throw error;
              });
          }
        },
      ),
      { numRuns: 150, seed: 36 },
    );
    expect(compared).toBeGreaterThan(150);
  });
});
