/**
 * The pool's settings (the `config` singleton): reading them with defaults, and changing them — by an
 * operator through `config.update`, or by the client passing its options on enqueue/cancel. Writes the
 * row only when a value really changes, so enqueues do not conflict with each other on it.
 */
import { v } from "convex/values";
import { mutation, type DatabaseReader, type MutationCtx } from "./_generated/server.js";
import { claimSegment } from "./kick.js";
import { unconfiguredLogLevel } from "./logging.js";
import { vConfigUpdate, type ConfigUpdate, type LogLevel } from "./model.js";
import { validateMaxParallelism } from "./validate.js";

/** Jobs that may run at once when nobody said otherwise (the peer's default too). */
export const DEFAULT_MAX_PARALLELISM = 10;

export type Config = { maxParallelism: number; logLevel: LogLevel };

/** The stored settings, with defaults for what was never set. */
function withDefaults(row: Partial<Config> | null): Config {
  return {
    maxParallelism: row?.maxParallelism ?? DEFAULT_MAX_PARALLELISM,
    logLevel: row?.logLevel ?? unconfiguredLogLevel(),
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
}

/**
 * Applies the set fields of `update`, writing the row only when a value changes; returns true when
 * maxParallelism changed (the loop may have to start work). Callers validate first (so that a bad
 * value is rejected before anything else is written).
 */
export async function applyConfig(ctx: MutationCtx, update: ConfigUpdate): Promise<boolean> {
  if (update.maxParallelism === undefined && update.logLevel === undefined) return false;
  const row = await ctx.db.query("config").first();
  const current = withDefaults(row);
  // A level nobody set stays unset, so it keeps following the default.
  const logLevel = update.logLevel ?? row?.logLevel;
  const next = {
    maxParallelism: update.maxParallelism ?? current.maxParallelism,
    ...(logLevel !== undefined ? { logLevel } : {}),
  };
  if (row && next.maxParallelism === row.maxParallelism && next.logLevel === row.logLevel) {
    return false;
  }
  if (row) await ctx.db.patch("config", row._id, next);
  else await ctx.db.insert("config", next);
  return next.maxParallelism !== current.maxParallelism;
}

/**
 * Changes the pool's settings at run time, e.g. `npx convex run --component workpool config:update
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
