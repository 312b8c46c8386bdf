// The test app's tables: what jobs did (effects), what onComplete received (completions), and rows
// for heavy onComplete handlers to read (filler).
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  effects: defineTable({ key: v.string(), value: v.any() }),
  completions: defineTable({
    workId: v.string(),
    context: v.optional(v.any()),
    result: v.any(),
  }).index("by_workId", ["workId"]),
  filler: defineTable({ n: v.number() }),
});
