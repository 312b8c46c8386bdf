/**
 * `pool.adminApi({ authorize })`: the public queries and mutations an operator's page calls
 * (overview, jobs, job, retry, cancel, pause, resume, setKeyParallelism, setKeyShare,
 * setKeyRateLimit, setMaxParallelism, and the
 * schedules' schedules, pauseSchedule, resumeSchedule, runScheduleNow), for an app to export from one
 * module. Owns the guard: every function calls `authorize` first and, when
 * it refuses (false) or throws, fails with `workpool/Unauthorized` before reading or writing
 * anything; a guard that throws is logged with its reason (the caller learns only that it was
 * refused). Each function is one pool method (control.ts) or one component call; it never touches
 * the component's tables and holds no state besides the pool it was made from. It must never write
 * the options of that pool (maxParallelism, keyParallelism, rateLimit, keyRateLimit, fairness,
 * logLevel): `retry` and
 * `cancel` call the component without them, so an operator's settings stay as the operator left
 * them.
 */
import {
  mutationGeneric,
  paginationOptsValidator,
  paginationResultValidator,
  queryGeneric,
  type GenericDataModel,
  type GenericQueryCtx,
  type PaginationOptions,
} from "convex/server";
import { v, type Infer } from "convex/values";
import { unauthorized } from "../component/model/errors.js";
import { createLogger, DEFAULT_LOG_LEVEL } from "../component/model/logging.js";
import {
  vGroupStatus,
  vKeyRow,
  vKeyShare,
  vOverview,
  vRateLimit,
  vSecondEvents,
} from "../component/model/validators.js";
import type { WorkpoolControl } from "./control.js";
import { vScheduleInfo } from "./schedules.js";
import {
  vListedWorkInfo,
  vListFilter,
  vWorkId,
  vWorkInfo,
  type GroupId,
  type ListArgs,
  type WorkId,
} from "./types.js";

/** How many keys `overview` lists when the caller does not say: a screenful. */
export const DEFAULT_KEYS_PER_PAGE = 20;

/** Validator of what the admin `overview` returns: the component's `overview` result (`stats`,
 * totals included; `series`, the last minute second by second, oldest first; `keys`, a page of
 * keys with their `keyStatus`). */
export const vAdminOverview = vOverview;
/** What the admin `overview` returns. */
export type AdminOverview = Infer<typeof vAdminOverview>;
/** A key's row in `overview`: its name and `keyStatus`. */
export type KeyRow = Infer<typeof vKeyRow>;
/** One second of `overview.series`. */
export type SecondEvents = Infer<typeof vSecondEvents>;

/** The arguments of each admin function, by name. */
export type AdminArgs = {
  overview: { keysPaginationOpts?: PaginationOptions };
  jobs: ListArgs;
  job: { id: WorkId };
  retry: { id: WorkId };
  cancel: { id: WorkId };
  pause: { key?: string };
  resume: { key?: string };
  setKeyParallelism: { key: string; parallelism: number | null };
  setKeyShare: { key: string; share: { weight?: number; reserve?: number } | null };
  setKeyRateLimit: { key: string; rateLimit: { starts: number; periodMs: number } | false | null };
  setMaxParallelism: { maxParallelism: number | null };
  group: { id: string };
  cancelGroup: { id: string };
  schedules: { paginationOpts: PaginationOptions };
  pauseSchedule: { name: string };
  resumeSchedule: { name: string };
  runScheduleNow: { name: string };
};
/** The name of an admin function. */
export type AdminOperation = keyof AdminArgs;
/** What `authorize` is asked: an operation and the (validated) arguments it was called with. */
export type AdminRequest = {
  [Operation in AdminOperation]: { operation: Operation; args: AdminArgs[Operation] };
}[AdminOperation];

/**
 * Decides whether the caller may make this request: true to let it run. Called first in every
 * admin function, with the query's or mutation's ctx (`ctx.auth.getUserIdentity()`, `ctx.db`).
 * Returning false or throwing fails the call with `workpool/Unauthorized`; a throw is also logged
 * (one ERROR line, `authorizeThrew`, with the operation and the error's message), never sent.
 *
 * Typed by the app's data model when the pool's `adminApi<DataModel>` is given it; without it,
 * `ctx.db` reads untyped documents, and an app can annotate `ctx` as its own `QueryCtx` (from
 * `./_generated/server`) to read its tables typed.
 */
export type Authorize<DataModel extends GenericDataModel = GenericDataModel> = (
  ctx: GenericQueryCtx<DataModel>,
  request: AdminRequest,
) => boolean | Promise<boolean>;

export type AdminApiOptions<DataModel extends GenericDataModel> = {
  /** Required: there is no default, so that no page is ever open to anyone by accident. */
  authorize: Authorize<DataModel>;
};

/** Runs `authorize`; refuses (throws Unauthorized) unless it returned exactly true. A throw is
 * logged at ERROR (whatever the pool's logLevel: a broken guard locks operators out). */
async function check<DataModel extends GenericDataModel>(
  authorize: Authorize<DataModel>,
  ctx: GenericQueryCtx<DataModel>,
  request: AdminRequest,
  logLevel: WorkpoolControl["options"]["logLevel"],
): Promise<void> {
  let allowed: unknown;
  try {
    allowed = await authorize(ctx, request);
  } catch (error) {
    // The reason stays on the server: logged here, while the caller learns only that it was refused.
    createLogger(logLevel ?? DEFAULT_LOG_LEVEL).error("authorizeThrew", {
      operation: request.operation,
      error: error instanceof Error ? error.message : String(error),
    });
    unauthorized(request.operation);
  }
  if (allowed !== true) unauthorized(request.operation);
}

/** The admin functions of `pool`; see `Workpool.adminApi`. */
export function defineAdminApi<DataModel extends GenericDataModel>(
  pool: WorkpoolControl,
  options: AdminApiOptions<DataModel>,
) {
  const authorize = options?.authorize;
  if (typeof authorize !== "function") {
    throw new Error(
      "workpool: adminApi needs `authorize(ctx, { operation, args })`, a function that returns true for a caller allowed to operate the pool",
    );
  }
  const guard = (ctx: unknown, request: AdminRequest) =>
    check(authorize, ctx as GenericQueryCtx<DataModel>, request, pool.options.logLevel);
  const vKeyArg = { key: v.optional(v.string()) };
  return {
    /** Stats (totals included), the last minute second by second, and a page of keys. */
    overview: queryGeneric({
      args: { keysPaginationOpts: v.optional(paginationOptsValidator) },
      returns: vAdminOverview,
      handler: async (ctx, args): Promise<AdminOverview> => {
        await guard(ctx, { operation: "overview", args });
        const keysPaginationOpts = args.keysPaginationOpts ?? {
          numItems: DEFAULT_KEYS_PER_PAGE,
          cursor: null,
        };
        return await ctx.runQuery(pool.component.inspect.overview, { keysPaginationOpts });
      },
    }),
    /** A page of jobs, as `pool.list` returns it (for `usePaginatedQuery`). */
    jobs: queryGeneric({
      args: { ...vListFilter, paginationOpts: paginationOptsValidator },
      returns: paginationResultValidator(vListedWorkInfo),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "jobs", args });
        return await pool.list(ctx, args);
      },
    }),
    /** A job, as `pool.info` returns it (null once no longer retained). */
    job: queryGeneric({
      args: { id: vWorkId },
      returns: v.union(vWorkInfo, v.null()),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "job", args });
        return await pool.info(ctx, args.id);
      },
    }),
    /** Runs a failed or canceled job again (as `pool.retry`, without the pool's options: no
     * setting changes); returns the new job's id. */
    retry: mutationGeneric({
      args: { id: vWorkId },
      returns: vWorkId,
      handler: async (ctx, args): Promise<WorkId> => {
        await guard(ctx, { operation: "retry", args });
        return (await ctx.runMutation(pool.component.lib.retry, { id: args.id })) as WorkId;
      },
    }),
    /** Cancels a job (as `pool.cancel`, without the pool's options: no setting changes). */
    cancel: mutationGeneric({
      args: { id: vWorkId },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "cancel", args });
        await ctx.runMutation(pool.component.lib.cancel, { id: args.id });
        return null;
      },
    }),
    /** Pauses the pool, or one key (`pool.pause`). */
    pause: mutationGeneric({
      args: vKeyArg,
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "pause", args });
        await pool.pause(ctx, args);
        return null;
      },
    }),
    /** Ends a pause of the pool, or of one key (`pool.resume`). */
    resume: mutationGeneric({
      args: vKeyArg,
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "resume", args });
        await pool.resume(ctx, args);
        return null;
      },
    }),
    /** Sets one key's parallelism; null returns it to the pool's (`pool.setKeyParallelism`). */
    setKeyParallelism: mutationGeneric({
      args: { key: v.string(), parallelism: v.union(v.number(), v.null()) },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "setKeyParallelism", args });
        await pool.setKeyParallelism(ctx, args.key, args.parallelism);
        return null;
      },
    }),
    /** Sets one key's weight and reserve; null restores the defaults (`pool.setKeyShare`). */
    setKeyShare: mutationGeneric({
      args: { key: v.string(), share: v.union(vKeyShare, v.null()) },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "setKeyShare", args });
        await pool.setKeyShare(ctx, args.key, args.share);
        return null;
      },
    }),
    /** Sets one key's rate limit; false exempts it, null follows the pool's keyRateLimit again
     * (`pool.setKeyRateLimit`). */
    setKeyRateLimit: mutationGeneric({
      args: { key: v.string(), rateLimit: v.union(vRateLimit, v.literal(false), v.null()) },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "setKeyRateLimit", args });
        await pool.setKeyRateLimit(ctx, args.key, args.rateLimit);
        return null;
      },
    }),
    /**
     * Sets the operator's maxParallelism (`pool.setMaxParallelism`): in force, whatever clients
     * pass, until set again; null clears it and the clients' value is in force again.
     */
    setMaxParallelism: mutationGeneric({
      args: { maxParallelism: v.union(v.number(), v.null()) },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "setMaxParallelism", args });
        await pool.setMaxParallelism(ctx, args.maxParallelism);
        return null;
      },
    }),
    /** A group's progress (`pool.groupStatus`), or null for a group the pool does not know. */
    group: queryGeneric({
      args: { id: v.string() },
      returns: v.union(vGroupStatus, v.null()),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "group", args });
        return await pool.groupStatus(ctx, args.id as GroupId);
      },
    }),
    /** Closes a group and cancels its unfinished jobs (`pool.cancelGroup`), a page at a time. */
    cancelGroup: mutationGeneric({
      args: { id: v.string() },
      returns: v.null(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "cancelGroup", args });
        await pool.cancelGroup(ctx, args.id as GroupId);
        return null;
      },
    }),
    /** A page of the pool's schedules by name, as `pool.listSchedules` returns it. */
    schedules: queryGeneric({
      args: { paginationOpts: paginationOptsValidator },
      returns: paginationResultValidator(vScheduleInfo),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "schedules", args });
        return await pool.listSchedules(ctx, args);
      },
    }),
    /** Pauses a schedule's times (`pool.pauseSchedule`); false for an unknown name. */
    pauseSchedule: mutationGeneric({
      args: { name: v.string() },
      returns: v.boolean(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "pauseSchedule", args });
        return await pool.pauseSchedule(ctx, args.name);
      },
    }),
    /** Ends a schedule's pause (`pool.resumeSchedule`); false for an unknown name. */
    resumeSchedule: mutationGeneric({
      args: { name: v.string() },
      returns: v.boolean(),
      handler: async (ctx, args) => {
        await guard(ctx, { operation: "resumeSchedule", args });
        return await pool.resumeSchedule(ctx, args.name);
      },
    }),
    /** Enqueues one run of a schedule now (`pool.runScheduleNow`); null when `overlap` enqueued
     * nothing. */
    runScheduleNow: mutationGeneric({
      args: { name: v.string() },
      returns: v.union(vWorkId, v.null()),
      handler: async (ctx, args): Promise<WorkId | null> => {
        await guard(ctx, { operation: "runScheduleNow", args });
        return await pool.runScheduleNow(ctx, args.name);
      },
    }),
  };
}

/** The functions `adminApi` returns, for typing what an app exports. */
export type AdminApi = ReturnType<typeof defineAdminApi>;
