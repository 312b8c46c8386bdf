/**
 * The pool's settings (the `config` singleton): reading them with defaults, and changing them — by
 * `config.update` or a client passing its options on enqueue/cancel/retry (the clients' values), and
 * by an operator's `setMaxParallelism` (the operator's maxParallelism, stored apart: while set, it is
 * the maxParallelism in force). Writes the row only when a value really changes, so enqueues do not
 * conflict with each other on it. A client's options must never write the operator's value, and
 * the operator's call must never write the clients'.
 */
import { v } from "convex/values";
import type { Doc } from "./_generated/dataModel.js";
import { mutation, type DatabaseReader, type MutationCtx } from "./_generated/server.js";
import { claimSegment } from "./api/kick.js";
import { unconfiguredLogLevel } from "./model/logging.js";
import {
  vConfigUpdate,
  type ConfigUpdate,
  type Fairness,
  type LogLevel,
} from "./model/validators.js";
import {
  validateFairness,
  validateKeyParallelism,
  validateMaxParallelism,
  validateRateLimit,
} from "./model/validate.js";

/** Jobs that may run at once when nobody said otherwise (the peer's default too). */
export const DEFAULT_MAX_PARALLELISM = 10;
/** Jobs of one key that may run at once when nobody said otherwise: one, so a key's jobs run in
 * order, one after another (what keys are most often asked for). */
export const DEFAULT_KEY_PARALLELISM = 1;

export type Config = {
  /** The maxParallelism in force: the operator's while set, else the clients'. */
  maxParallelism: number;
  /** The operator's maxParallelism (`setMaxParallelism`); null when unset. */
  operatorMaxParallelism: number | null;
  logLevel: LogLevel;
  keyParallelism: number;
  paused: boolean;
  rateLimit?: { starts: number; periodMs: number };
  /** How keys share a level's starts (section 13); "share" unless a client said "due". */
  fairness: Fairness;
  /** Every key's rate limit unless the key says otherwise (section 13). */
  keyRateLimit?: { starts: number; periodMs: number };
};

type ConfigRow = Omit<Doc<"config">, "_id" | "_creationTime">;

/** What a config row holds, without its system fields. */
function storedFields(row: Doc<"config"> | null): Partial<ConfigRow> {
  const fields: Partial<Doc<"config">> = { ...row };
  delete fields._id;
  delete fields._creationTime;
  return fields;
}

/** The stored settings, with defaults for what was never set. */
function withDefaults(row: Partial<ConfigRow> | null): Config {
  const operator = row?.operatorMaxParallelism ?? null;
  return {
    maxParallelism: operator ?? row?.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    operatorMaxParallelism: operator,
    logLevel: row?.logLevel ?? unconfiguredLogLevel(),
    keyParallelism: row?.keyParallelism ?? DEFAULT_KEY_PARALLELISM,
    paused: row?.paused ?? false,
    ...(row?.rateLimit ? { rateLimit: row.rateLimit } : {}),
    fairness: row?.fairness ?? "share",
    ...(row?.keyRateLimit ? { keyRateLimit: row.keyRateLimit } : {}),
  };
}

export async function readConfig(db: DatabaseReader): Promise<Config> {
  return withDefaults(await db.query("config").first());
}

/** Checks an update; throws naming the bad argument. */
export function validateConfigUpdate(update: ConfigUpdate, prefix = ""): void {
  if (update.maxParallelism !== undefined) {
    validateMaxParallelism(update.maxParallelism, `${prefix}maxParallelism`);
  }
  if (update.keyParallelism !== undefined) {
    validateKeyParallelism(update.keyParallelism, `${prefix}keyParallelism`);
  }
  if (update.rateLimit !== undefined && update.rateLimit !== null) {
    validateRateLimit(update.rateLimit, `${prefix}rateLimit`);
  }
  if (update.fairness !== undefined) validateFairness(update.fairness, `${prefix}fairness`);
  if (update.keyRateLimit !== undefined && update.keyRateLimit !== null) {
    validateRateLimit(update.keyRateLimit, `${prefix}keyRateLimit`);
  }
}

/**
 * Applies the set fields of `update` (and `paused`, for pause/resume), writing the row only when a
 * value changes; returns true when a change may let waiting work start (a limit rose or changed,
 * or the pool resumed), so the caller wakes the loop. Callers validate first (so that a bad value is
 * rejected before anything else is written). A field nobody set stays unset: it keeps following
 * its default.
 */
export async function applyConfig(
  ctx: MutationCtx,
  update: ConfigUpdate & { paused?: boolean },
): Promise<boolean> {
  const set = Object.fromEntries(
    Object.entries(update).filter(([, value]) => value !== undefined),
  ) as Partial<ConfigRow> & {
    rateLimit?: ConfigRow["rateLimit"] | null;
    keyRateLimit?: ConfigRow["keyRateLimit"] | null;
  };
  if (Object.keys(set).length === 0) return false;
  const row = await ctx.db.query("config").first();
  const current = withDefaults(row);
  const next = {
    ...storedFields(row),
    maxParallelism: row?.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    ...set,
  };
  // `rateLimit: null` removes the limit (a stored field cannot be null).
  if (next.rateLimit === null) delete next.rateLimit;
  if (next.keyRateLimit === null) delete next.keyRateLimit;
  const same = (k: keyof ConfigRow) =>
    JSON.stringify(row?.[k] ?? null) === JSON.stringify(next[k] ?? null);
  if (row && (Object.keys(set) as Array<keyof ConfigRow>).every(same)) return false;
  const stored = next as ConfigRow;
  if (row) await ctx.db.replace("config", row._id, stored);
  else await ctx.db.insert("config", stored);
  const after = withDefaults(stored);
  return (
    after.maxParallelism !== current.maxParallelism ||
    after.keyParallelism !== current.keyParallelism ||
    JSON.stringify(after.rateLimit) !== JSON.stringify(current.rateLimit) ||
    JSON.stringify(after.keyRateLimit) !== JSON.stringify(current.keyRateLimit) ||
    after.fairness !== current.fairness ||
    (current.paused && !after.paused)
  );
}

/**
 * Sets the operator's maxParallelism (a whole number ≥ 0), or clears it with null: while set it is
 * the pool's maxParallelism, whatever the clients pass; cleared, the clients' value is in force at
 * once. Wakes the loop when the value in force changed (a rise may let waiting work start).
 */
export const setMaxParallelism = mutation({
  args: { maxParallelism: v.union(v.number(), v.null()) },
  returns: v.null(),
  handler: async (ctx, { maxParallelism }) => {
    if (maxParallelism !== null) validateMaxParallelism(maxParallelism);
    const row = await ctx.db.query("config").first();
    if ((row?.operatorMaxParallelism ?? null) === maxParallelism) return null;
    const before = withDefaults(row).maxParallelism;
    const stored: ConfigRow = {
      ...storedFields(row),
      maxParallelism: row?.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    };
    if (maxParallelism === null) delete stored.operatorMaxParallelism;
    else stored.operatorMaxParallelism = maxParallelism;
    if (row) await ctx.db.replace("config", row._id, stored);
    else await ctx.db.insert("config", stored);
    if (withDefaults(stored).maxParallelism !== before) await claimSegment(ctx);
    return null;
  },
});

/**
 * Changes the pool's settings at run time (the clients' values: an operator's maxParallelism, while
 * set, stays in force), e.g. `npx convex run --component workpool config:update
 * '{"maxParallelism": 0}'` to pause starting new work, and a larger number to resume.
 */
export const update = mutation({
  args: vConfigUpdate,
  returns: v.null(),
  handler: async (ctx, args) => {
    validateConfigUpdate(args);
    const parallelismChanged = await applyConfig(ctx, args);
    if (parallelismChanged) await claimSegment(ctx);
    return null;
  },
});
