// The test app's tables: what jobs did (effects) and what onComplete received (completions).
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

export default defineSchema({
  effects: defineTable({ key: v.string(), value: v.any() }),
  completions: defineTable({
    workId: v.string(),
    context: v.optional(v.any()),
    result: v.any(),
  }).index("by_workId", ["workId"]),
});
