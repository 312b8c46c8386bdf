// The report's only source of figures (report.ts): reads a pool through its own client — `stats`,
// every page of `list`, each key's `keyStatus` — in convex-test inline queries, the same calls an
// app's admin query would make; and what the pool's component scheduled, from its
// `_scheduled_functions` (what the dashboard's schedules view of the component lists). No
// bookkeeping of its own.
import type { TestConvex } from "convex-test";
import type { GenericDataModel, GenericMutationCtx } from "convex/server";
import type { KeyStatus, ListedWorkInfo, Stats, Workpool } from "convex-workpool";
import type schema from "../example/convex/schema.js";

type Backend = TestConvex<typeof schema>;

/** Jobs per `list` page: the most the pool allows, so a run's history takes few queries. */
const LIST_PAGE_SIZE = 1000;

/** The pool's `stats` now. */
export async function readStats(t: Backend, pool: Workpool): Promise<Stats> {
  return await t.query(async (ctx) => await pool.stats(ctx));
}

/** Every job the pool retains, through `list`'s pages (newest enqueued first). */
export async function listAllJobs(t: Backend, pool: Workpool): Promise<ListedWorkInfo[]> {
  const jobs: ListedWorkInfo[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await t.query(
      async (ctx) => await pool.list(ctx, { paginationOpts: { numItems: LIST_PAGE_SIZE, cursor } }),
    );
    jobs.push(...page.page);
    if (page.isDone) return jobs;
    cursor = page.continueCursor;
  }
}

/** Each key's `keyStatus`, in the order given. */
export async function readKeys(
  t: Backend,
  pool: Workpool,
  keys: string[],
): Promise<Array<{ key: string; status: KeyStatus }>> {
  const rows = [];
  for (const key of keys) {
    rows.push({ key, status: await t.query(async (ctx) => await pool.keyStatus(ctx, key)) });
  }
  return rows;
}

/**
 * How many functions the component installed as `component` scheduled, by the name its scheduler
 * records (e.g. "runners/worker:runAction", or an app function it was handed such as "llm:run"),
 * whatever their state. Read with convex-test's `runInComponent`, which exists at run time but is
 * not in convex-test's types.
 */
export async function readScheduled(
  t: Backend,
  component: string,
): Promise<Record<string, number>> {
  const withComponents = t as unknown as {
    runInComponent<R>(
      name: string,
      fn: (ctx: GenericMutationCtx<GenericDataModel>) => Promise<R>,
    ): Promise<R>;
  };
  const names = await withComponents.runInComponent(component, async (ctx) =>
    (await ctx.db.system.query("_scheduled_functions").collect()).map((row) => row.name),
  );
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}
