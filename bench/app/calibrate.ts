// Only for bench/counters.test.ts: functions with known reads and writes, to check that the counters
// of bench/instrument.ts agree with convex-test's own `ctx.meta.getTransactionMetrics()`.
import { internalQueryGeneric, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { internal } from "./_generated/api.js";

/** Writes `n` documents, then reads them all through a nested query; returns the transaction's metrics. */
export const writeThenRead = mutationGeneric({
  args: { n: v.number() },
  handler: async (ctx, { n }) => {
    for (let i = 0; i < n; i++) await ctx.db.insert("scratch", { n: i, text: "x".repeat(100) });
    const read: number = await ctx.runQuery(internal.calibrate.readAll, {});
    const m = await (ctx as any).meta.getTransactionMetrics();
    return {
      read,
      documentsRead: m.documentsRead.used,
      documentsWritten: m.documentsWritten.used,
      bytesRead: m.bytesRead.used,
      bytesWritten: m.bytesWritten.used,
    };
  },
});

export const readAll = internalQueryGeneric({
  args: {},
  handler: async (ctx) => (await ctx.db.query("scratch").collect()).length,
});
