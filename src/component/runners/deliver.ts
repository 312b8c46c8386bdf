/**
 * Delivering onComplete: every finished job's callback runs in a `deliver` transaction of its own,
 * never in the loop's. The loop only appends a `deliveries` row (the callbacks a pass finished,
 * with everything they need) and schedules `deliver` for it; `deliver` runs each handler in a
 * sub-transaction with a budget capped below the transaction's remaining headroom, so a heavy or
 * throwing handler cannot fail the delivery of the others, and deletes the row in the same commit,
 * which makes every callback happen exactly once. A delivery that dies anyway (the 1 s time limit
 * is not measurable inside a mutation) leaves its row; the loop's check (`checkDeliveries`) splits
 * it into one row per callback, and a callback that cannot commit even alone is recorded as failed.
 * Never changes a job's state; never decides anything about retries.
 */
import { v, type Infer } from "convex/values";
import type { FunctionHandle } from "convex/server";
import { internal } from "../_generated/api.js";
import type { Doc, Id } from "../_generated/dataModel.js";
import { internalMutation, type MutationCtx } from "../_generated/server.js";
import { readConfig } from "../config.js";
import { capErrorMessage, errorMessage } from "../model/errors.js";
import { valueSizeBytes } from "../model/valueMeasure.js";
import { createLogger, type Logger } from "../model/logging.js";
import { forgetDedupeKeys } from "../api/dedupe.js";
import { countSwept } from "../mainLoop/sweep.js";
import { keptForRetry, vResult, type RunResult } from "../model/validators.js";
import { takeWithinBudget, type Pass } from "../mainLoop/pass.js";
import { budgetRoom, budgetSpent, noteBudgetStop } from "../mainLoop/passBudget.js";

/** Callbacks one delivery transaction takes at most: a busy pass's finished callbacks in one call
 * (ordinary handlers, a write or two each, take milliseconds: 50 stay far inside the 1 s mutation
 * budget; heavier ones stop the batch on its metrics, DELIVERY_BATCH_FRACTION, and one that
 * outlasts its transaction is isolated by the loop's delivery check). 50 rather than 20 halved
 * delivery calls per job in the executor benchmark (0.085 to 0.047). */
export const DELIVERY_BATCH = 50;
/** Bytes of callbacks one delivery row holds at most (a row with one bigger callback holds only
 * it). Inline contexts, return values and error messages are each capped at a few KiB, so 256 KiB
 * keeps a row of DELIVERY_BATCH callbacks far below Convex's 1 MiB document limit. */
export const DELIVERY_ROW_BYTES = 256 * 1024;
/** A batch stops taking handlers once any metric passed this fraction of its limit; the rest go
 * on in a fresh transaction (half keeps room for one more heavy handler to finish its work). */
export const DELIVERY_BATCH_FRACTION = 0.5;
/** Headroom kept back from every handler for the delivery's own reads and writes (the row, large
 * payloads, the failure record, a continuation). */
export const DELIVERY_RESERVE = {
  documentsRead: 200,
  documentsWritten: 100,
  bytesRead: 3 * 1024 * 1024,
  bytesWritten: 2 * 1024 * 1024,
  databaseQueries: 50,
  functionsScheduled: DELIVERY_BATCH + 2,
  scheduledFunctionArgsBytes: 1024 * 1024,
} as const;
/** The loop looks at delivery rows older than this: a row still there so long after its deliverer
 * was scheduled belongs to a delivery that died, or one still queued behind a busy scheduler. */
export const DELIVERY_CHECK_MS = 5_000;
/** Transactions a callback with a transaction to itself gets before it counts as failed: a
 * transaction can fail for a passing reason (Convex gives up on one that keeps conflicting), and a
 * callback that fails every time (over a limit) costs three tries. */
export const SOLO_DELIVERY_ATTEMPTS = 3;
/** Delivery rows one loop check looks at (one system read each). */
export const DELIVERY_CHECK_BATCH = 50;

/** One callback to deliver, carrying everything it needs so that the job's row may be swept. */
export const vDeliveryItem = v.object({
  workId: v.id("work"),
  /** The onComplete mutation; undefined when only the large job's cleanup is due. */
  fnHandle: v.optional(v.string()),
  context: v.optional(v.any()),
  result: vResult,
  /** A large job's args and context: the context is read from here, then the row is deleted. */
  payloadId: v.optional(v.id("payloads")),
  /** A large return value, read for onComplete (kept for status until the sweep). */
  resultPayloadId: v.optional(v.id("payloads")),
  /** Set for large jobs: delivery drops their args and context, and ends `deliveryPending`. */
  cleanup: v.optional(v.boolean()),
});
export type DeliveryItem = Infer<typeof vDeliveryItem>;

/** Whether a callback is worth a delivery: it has a handler to call or a payload to clean up. */
export function needsDelivery(item: DeliveryItem): boolean {
  return item.fnHandle !== undefined || item.cleanup !== undefined;
}

/** Loop stage: writes the pass's finished callbacks as delivery rows and schedules a deliverer for
 * each. Large jobs go alone (their payloads may be a megabyte each). */
export async function scheduleDeliveries(pass: Pass, items: DeliveryItem[]): Promise<void> {
  if (items.length === 0) return;
  const rows: DeliveryItem[][] = items.filter((item) => item.cleanup).map((item) => [item]);
  let row: DeliveryItem[] = [];
  let rowBytes = 0;
  for (const item of items.filter((item) => item.cleanup === undefined)) {
    const bytes = valueSizeBytes(item);
    if (
      row.length === DELIVERY_BATCH ||
      (row.length > 0 && rowBytes + bytes > DELIVERY_ROW_BYTES)
    ) {
      rows.push(row);
      row = [];
      rowBytes = 0;
    }
    row.push(item);
    rowBytes += bytes;
  }
  if (row.length > 0) rows.push(row);
  for (const [i, rowItems] of rows.entries()) {
    await insertDelivery(
      pass.ctx,
      `${pass.state.generation}.${i}`,
      rowItems,
      rowItems.length === 1,
    );
  }
  pass.state.deliveryCheckAt ??= pass.now + DELIVERY_CHECK_MS;
}

/** Schedules a deliverer and records its row (the token is unique: a loop generation, then the
 * row's place in its pass, then the suffixes of continuations and splits). A row of several
 * callbacks to one handler names it once (`fnHandle`), not in each item. */
async function insertDelivery(
  ctx: MutationCtx,
  token: string,
  items: DeliveryItem[],
  solo: boolean,
  { attempts, from }: { attempts?: number; from?: Doc<"deliveries"> } = {},
): Promise<void> {
  const scheduledId = await ctx.scheduler.runAfter(0, internal.runners.deliver.deliver, { token });
  const fnHandle = items[0]?.fnHandle;
  const shared =
    items.length > 1 && fnHandle !== undefined && items.every((item) => item.fnHandle === fnHandle);
  await ctx.db.insert("deliveries", {
    token,
    items: shared ? items.map((item) => ({ ...item, fnHandle: undefined })) : items,
    ...(shared ? { fnHandle } : {}),
    solo,
    scheduledId,
    attempts,
    ...(from === undefined ? {} : { since: from.since ?? from._creationTime }),
  });
}

/** A row's callbacks, each with its handler (the row's, when the row names one for all). */
function itemsOf(row: Doc<"deliveries">): DeliveryItem[] {
  if (row.fnHandle === undefined) return row.items;
  return row.items.map((item) => ({ ...item, fnHandle: item.fnHandle ?? row.fnHandle }));
}

type Usage = Awaited<ReturnType<MutationCtx["meta"]["getTransactionMetrics"]>>;
type Metric = keyof typeof DELIVERY_RESERVE;
const METRICS = Object.keys(DELIVERY_RESERVE) as Metric[];

/** What a handler may use: whatever the transaction has left, minus the delivery's reserve. */
function handlerLimits(usage: Usage): Record<Metric, number> {
  const limits = {} as Record<Metric, number>;
  for (const metric of METRICS) {
    limits[metric] = Math.max(1, usage[metric].remaining - DELIVERY_RESERVE[metric]);
  }
  return limits;
}

function batchBudgetSpent(usage: Usage): boolean {
  return METRICS.some((metric) => {
    const { used, remaining } = usage[metric];
    return used > DELIVERY_BATCH_FRACTION * (used + remaining);
  });
}

/** Convex's message for a transaction limit, e.g. "Read too much data in a single function
 * execution" or "Scanned too many documents ...". */
function isLimitError(error: unknown): boolean {
  return /single function execution|too many|too much|transaction limit/i.test(errorMessage(error));
}

type Outcome = "delivered" | "failed" | "isolate";

/** Runs one callback (and a large job's cleanup). `solo` means it has the transaction to itself. */
async function deliverItem(
  ctx: MutationCtx,
  item: DeliveryItem,
  solo: boolean,
  log: Logger,
): Promise<{ outcome: Outcome; error?: string }> {
  let outcome: { outcome: Outcome; error?: string } = { outcome: "delivered" };
  if (item.fnHandle !== undefined) {
    const args = {
      workId: item.workId,
      context: item.payloadId
        ? (await ctx.db.get("payloads", item.payloadId))?.context
        : item.context,
      result: await fullResult(ctx, item),
    };
    try {
      await ctx.runMutation(item.fnHandle as FunctionHandle<"mutation">, args, {
        transactionLimits: handlerLimits(await ctx.meta.getTransactionMetrics()),
      });
    } catch (error) {
      if (!solo && isLimitError(error)) return { outcome: "isolate" };
      const message = errorMessage(error);
      log.error("onCompleteFailed", { workId: item.workId, error: message });
      outcome = { outcome: "failed", error: message };
    }
  }
  if (item.cleanup) await cleanUp(ctx, item);
  return outcome;
}

async function fullResult(ctx: MutationCtx, item: DeliveryItem): Promise<RunResult> {
  if (item.resultPayloadId && item.result.kind === "success") {
    const payload = await ctx.db.get("payloads", item.resultPayloadId);
    return { kind: "success", returnValue: payload?.returnValue ?? null };
  }
  return item.result;
}

/** A large job, once delivered: its args and context are dropped, and the sweeper may have it — or,
 * if it expired meanwhile (a short statusTtl), it is deleted here, as the sweeper passed it by. */
async function cleanUp(ctx: MutationCtx, item: DeliveryItem) {
  // A job that failed or was canceled keeps its args (and their payload) for `retry`: the sweeper
  // deletes the payload with the job.
  const keepArgs = keptForRetry(item.result);
  if (item.payloadId && !keepArgs) await ctx.db.delete("payloads", item.payloadId);
  const work = await ctx.db.get("work", item.workId);
  if (work === null) return;
  if (work.expiresAt !== undefined && work.expiresAt <= Date.now()) {
    if (work.resultPayloadId) await ctx.db.delete("payloads", work.resultPayloadId);
    await ctx.db.delete("work", work._id);
    await countSwept(ctx, [work]);
    await forgetDedupeKeys(ctx, [work]);
    return;
  }
  await ctx.db.patch("work", item.workId, {
    ...(keepArgs ? {} : { payloadId: undefined }),
    deliveryPending: undefined,
  });
}

/** Counts callbacks that could not be delivered (the `deliveryStats` singleton). */
export async function recordDeliveryFailures(
  ctx: MutationCtx,
  failures: Array<{ workId: Id<"work">; error: string }>,
): Promise<void> {
  if (failures.length === 0) return;
  const last = failures[failures.length - 1];
  const lastFailure = { workId: last.workId, error: last.error.slice(0, 1000), at: Date.now() };
  const row = await ctx.db.query("deliveryStats").first();
  if (row) {
    await ctx.db.patch("deliveryStats", row._id, {
      failures: row.failures + failures.length,
      lastFailure,
    });
  } else {
    await ctx.db.insert("deliveryStats", { failures: failures.length, lastFailure });
  }
}

/** Delivers the callbacks of one `deliveries` row; a missing row was delivered (or split) already. */
export const deliver = internalMutation({
  args: { token: v.string() },
  returns: v.null(),
  handler: async (ctx, { token }) => {
    const row = await ctx.db
      .query("deliveries")
      .withIndex("by_token", (q) => q.eq("token", token))
      .first();
    if (row === null) return null;
    await ctx.db.delete("deliveries", row._id);
    const log = createLogger((await readConfig(ctx.db)).logLevel);
    const failures: Array<{ workId: Id<"work">; error: string }> = [];
    const isolate: DeliveryItem[] = [];
    const items = itemsOf(row);
    for (const [i, item] of items.entries()) {
      if (i > 0 && batchBudgetSpent(await ctx.meta.getTransactionMetrics())) {
        await insertDelivery(ctx, `${token}+`, items.slice(i), false, { from: row });
        break;
      }
      const { outcome, error } = await deliverItem(ctx, item, row.solo, log);
      if (outcome === "isolate") isolate.push(item);
      if (outcome === "failed") failures.push({ workId: item.workId, error: error ?? "" });
    }
    for (const [i, item] of isolate.entries()) {
      await insertDelivery(ctx, `${token}/${i}`, [item], true, { from: row });
    }
    await recordDeliveryFailures(ctx, failures);
    return null;
  },
});

/**
 * Loop stage: looks at delivery rows older than DELIVERY_CHECK_MS. A row whose deliverer failed or
 * vanished is split into one row per callback (each with a whole transaction); a single callback
 * whose own delivery failed is recorded as failed (ERROR line and counter), keeping its cleanup.
 * Reads from a cursor so that the tombstones of delivered rows are not walked again.
 */
export async function checkDeliveries(pass: Pass): Promise<void> {
  const { ctx, state } = pass;
  if (state.deliveryCheckAt === undefined || pass.now < state.deliveryCheckAt) return;
  const cutoff = pass.now - DELIVERY_CHECK_MS;
  const { rows, full: fullPage } = await takeWithinBudget(
    ctx.db
      .query("deliveries")
      .withIndex("by_creation_time", (q) =>
        q.gte("_creationTime", state.deliveryCursor ?? 0).lt("_creationTime", cutoff),
      ),
    DELIVERY_CHECK_BATCH,
  );
  const failures: Array<{ workId: Id<"work">; error: string }> = [];
  let oldestWaiting: number | undefined;
  // Where the budget stopped the check: that row (or the rest of it) waits for the next pass.
  let stoppedAt: number | undefined;
  for (const row of rows) {
    // Each row costs a schedule per callback it splits into (a solo row: one): the check stops
    // within the pass's budget of schedules (passBudget.ts), and may split part of a row.
    const room = await budgetRoom(pass, "deliveryCheck", "functionsScheduled");
    if (room === 0 || (await budgetSpent(pass, "deliveryCheck"))) {
      stoppedAt = row._creationTime;
      break;
    }
    const job = await ctx.db.system.get(row.scheduledId);
    if (job !== null && (job.state.kind === "pending" || job.state.kind === "inProgress")) {
      oldestWaiting ??= row._creationTime;
      continue;
    }
    const why = capErrorMessage(job === null ? "its deliverer vanished" : deliveryError(job.state));
    if (!row.solo) {
      // The rest stays as it is stored (its row keeps the handler it names for all).
      const split = itemsOf(row).slice(0, room);
      const rest = row.items.slice(split.length);
      pass.log.warn("deliveryIsolated", { token: row.token, items: split.length, why });
      // A row split in part keeps the rest (its deliverer is over): the next pass splits on.
      const offset = row.splitFrom ?? 0;
      if (rest.length === 0) await ctx.db.delete("deliveries", row._id);
      else await ctx.db.patch("deliveries", row._id, { items: rest, splitFrom: offset + room });
      for (const [i, item] of split.entries()) {
        await insertDelivery(ctx, `${row.token}/${offset + i}`, [item], true, { from: row });
      }
      if (rest.length > 0) {
        noteBudgetStop(pass, "deliveryCheck", "functionsScheduled");
        stoppedAt = row._creationTime;
        break;
      }
      continue;
    }
    await ctx.db.delete("deliveries", row._id);
    const [item] = itemsOf(row);
    const attempts = row.attempts ?? 1;
    if (attempts < SOLO_DELIVERY_ATTEMPTS) {
      // Its own transaction failed: that may pass (Convex gives up on a transaction that keeps
      // meeting others), so it is tried again before the callback counts as failed.
      pass.log.warn("deliveryRetried", { workId: item.workId, attempt: attempts, why });
      await insertDelivery(ctx, `${row.token}+`, [item], true, {
        attempts: attempts + 1,
        from: row,
      });
      continue;
    }
    if (item.fnHandle !== undefined) {
      pass.log.error("onCompleteFailed", { workId: item.workId, error: why });
      failures.push({ workId: item.workId, error: why });
    }
    if (item.cleanup) {
      await insertDelivery(ctx, `${row.token}!`, [{ ...item, fnHandle: undefined }], true, {
        from: row,
      });
    }
  }
  await recordDeliveryFailures(ctx, failures);
  // Rows below the cursor are gone (or were just split into newer rows): later checks start there.
  const waitingFrom =
    stoppedAt === undefined
      ? oldestWaiting
      : Math.min(stoppedAt, oldestWaiting ?? Number.POSITIVE_INFINITY);
  const more = fullPage || stoppedAt !== undefined;
  const cursor = waitingFrom ?? (fullPage ? rows[rows.length - 1]._creationTime : cutoff);
  state.deliveryCursor = cursor;
  if (more) {
    state.deliveryCheckAt = pass.now; // more to look at: again on the next pass
    return;
  }
  const left = await ctx.db
    .query("deliveries")
    .withIndex("by_creation_time", (q) => q.gte("_creationTime", cursor))
    .first();
  state.deliveryCheckAt = left === null ? undefined : pass.now + DELIVERY_CHECK_MS;
}

function deliveryError(state: { kind: string; error?: string }): string {
  switch (state.kind) {
    case "failed":
      return `its delivery transaction failed: ${state.error}`;
    case "canceled":
      return "its delivery was canceled";
    default:
      return `its delivery ended as ${state.kind}`;
  }
}
