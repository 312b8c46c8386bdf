// The example app's tables. The pools keep their own tables inside their components; these are what
// the app itself records about its jobs.
import { defineSchema, defineTable } from "convex/server";
import { v } from "convex/values";

/** Which installed pool a job went to. Work ids are unique per pool only, so rows carry both. */
export const vPoolName = v.union(
  v.literal("emailPool"),
  v.literal("scrapePool"),
  v.literal("llmPool"),
);
/** What a job does: an email (emailPool), a page fetch or a page store (scrapePool), a page's
 * summary (llmPool, a task of the executor llm.run). */
export const vJobKind = v.union(
  v.literal("email"),
  v.literal("fetch"),
  v.literal("store"),
  v.literal("summary"),
);
/** A job's priority in its pool (the pool's `priority` enqueue option). */
export const vPriority = v.union(v.literal("high"), v.literal("normal"), v.literal("low"));

export default defineSchema({
  /**
   * One row per enqueued job: what the app asked for and when. `key` is the app's own name of the
   * job (its attempts and outcome carry it too); `poolKey`, when set, is the pool's `key` option the
   * job was enqueued with (a page's host, or an email's queue): jobs sharing it run one at a time.
   */
  jobs: defineTable({
    pool: vPoolName,
    workId: v.string(),
    key: v.string(),
    kind: vJobKind,
    poolKey: v.optional(v.string()),
    /** The job's priority, when the app gave one (emails.sendEmails). */
    priority: v.optional(vPriority),
    enqueuedAt: v.number(),
  })
    .index("by_pool_workId", ["pool", "workId"])
    .index("by_key", ["key"]),
  /** One row per attempt of an action, written by the action itself when it starts and ends.
   * (llmPool's tasks log none: many run at once in one executor action, and a task that wrote two
   * rows per attempt would spend the calls an executor saves.) */
  attempts: defineTable({
    key: v.string(),
    attempt: v.number(),
    startedAt: v.number(),
    endedAt: v.optional(v.number()),
    error: v.optional(v.string()),
  }).index("by_key", ["key", "attempt"]),
  /** One row per finished job, written by the pools' onComplete (exactly once per job). */
  outcomes: defineTable({
    pool: vPoolName,
    workId: v.string(),
    key: v.string(),
    kind: v.union(v.literal("success"), v.literal("failed"), v.literal("canceled")),
    error: v.optional(v.string()),
    returnValue: v.optional(v.any()),
    finishedAt: v.number(),
  })
    .index("by_pool_workId", ["pool", "workId"])
    .index("by_pool_finishedAt", ["pool", "finishedAt"])
    .index("by_key", ["key"]),
  /** What the scrape pipeline's mutation job stores. */
  pages: defineTable({ url: v.string(), bytes: v.number() }).index("by_url", ["url"]),
  /** Emails handed to the (fake) provider, whose job waits for the provider's webhook
   * (deliveries.ts): the job's id is stored here, beside the app's own row, for the webhook. */
  deliveries: defineTable({
    to: v.string(),
    workId: v.optional(v.string()),
    /** What the provider's webhook said last; "sending" until it calls. */
    status: v.union(v.literal("sending"), v.literal("delivered"), v.literal("bounced")),
    /** The provider's id for the message, once it accepted it. */
    messageId: v.optional(v.string()),
  }),
  /** An import of many rows (imports.ts): one emailPool group, whose onComplete fills `finished`. */
  imports: defineTable({
    name: v.string(),
    startedAt: v.number(),
    /** The import's group (a GroupId), set in the transaction that inserts the row. */
    groupId: v.optional(v.string()),
    /** Set once, by the group's onComplete, with its counts. */
    finished: v.optional(
      v.object({
        counts: v.object({ succeeded: v.number(), failed: v.number(), canceled: v.number() }),
        at: v.number(),
      }),
    ),
  }),
});
