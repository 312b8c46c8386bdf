// The report's only source of figures (report.ts): reads a pool through its own client — `stats`,
// every page of `list`, each key's `keyStatus` — in convex-test inline queries, the same calls an
// app's admin query would make. No bookkeeping of its own.
import type { TestConvex } from "convex-test";
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
