// onComplete handlers that are heavy, throwing or too big to commit, for the delivery specs
// (test/deliver.test.ts): how much each does comes in its context.
import { internalMutationGeneric, mutationGeneric } from "convex/server";
import { v } from "convex/values";

const vHeavyContext = v.object({
  /** The job's own key, echoed back (the model test checks it). */
  key: v.optional(v.string()),
  /** Filler rows to read (the table must hold at least this many; see `seedFiller`). */
  reads: v.optional(v.number()),
  /** Rows to write besides the completion record. */
  writes: v.optional(v.number()),
  /** Throw after recording. */
  throws: v.optional(v.boolean()),
});

/** Records the completion like `jobs.onComplete`, after doing the work its context asks for. */
export const onComplete = internalMutationGeneric({
  args: { workId: v.string(), context: vHeavyContext, result: v.any() },
  handler: async (ctx, args) => {
    const { reads, writes, throws } = args.context;
    if (reads) await ctx.db.query("filler").take(reads);
    for (let i = 0; i < (writes ?? 0); i++) {
      await ctx.db.insert("effects", { key: `w-${args.workId}`, value: i });
    }
    await ctx.db.insert("completions", args);
    if (throws) throw new Error("heavy onComplete throws");
  },
});

/** Inserts `n` filler rows, in chunks the caller sizes to stay inside one transaction. */
export const seedFiller = mutationGeneric({
  args: { n: v.number() },
  handler: async (ctx, { n }) => {
    for (let i = 0; i < n; i++) await ctx.db.insert("filler", { n: i });
  },
});
