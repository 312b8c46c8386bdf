// The bench app's table: what onComplete received (one row per call), so that lost and
// duplicate calls show, and when it was called (virtual ms).
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  completions: defineTable({ workId: v.string(), kind: v.string(), at: v.number() }),
  /** Only for bench/counters.test.ts: documents of a known count and size. */
  scratch: defineTable({ n: v.number(), text: v.string() }),
});
