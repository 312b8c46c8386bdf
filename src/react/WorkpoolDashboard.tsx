/**
 * The dashboard on `convex/react`: `useWorkpoolDashboard(api)` subscribes to the app's admin API
 * (`pool.adminApi`, exported from one module: `api.workpoolAdmin`) with `useQuery`,
 * `useQueries` (`useQuery` that hands back errors), `usePaginatedQuery` and `useMutation`, and `<WorkpoolDashboard api={api.workpoolAdmin} />` renders
 * the views (views.tsx) from it, showing a message instead when the API refuses the viewer. Owns
 * only the wiring and the key pages' cursors; never draws anything itself beyond that message.
 */
import { Component, useState, type ReactNode } from "react";
import { useConvex, useMutation, usePaginatedQuery, useQueries } from "convex/react";
import type {
  DefaultFunctionArgs,
  FunctionReference,
  PaginationOptions,
  PaginationResult,
} from "convex/server";
import type {
  AdminOverview,
  GroupStatus,
  ListArgs,
  ListedWorkInfo,
  ScheduleInfo,
  WorkId,
  WorkInfo,
} from "../client/index.js";
import type { ScheduleActions, SchedulesPage } from "./SchedulesView.js";
import type { GroupActions, GroupsPanel } from "./GroupsView.js";
import { isUnauthorizedError } from "../component/model/errors.js";
import {
  DashboardView,
  UnauthorizedView,
  type DashboardActions,
  type DashboardViewProps,
  type JobsPage,
  type KeysPaging,
} from "./views.js";

type Query<Args extends DefaultFunctionArgs, Returns> = FunctionReference<
  "query",
  "public",
  Args,
  Returns
>;
type Mutation<Args extends DefaultFunctionArgs, Returns> = FunctionReference<
  "mutation",
  "public",
  Args,
  Returns
>;

/** The admin API as the app's `api` names it (`api.workpoolAdmin`): what `pool.adminApi` returns,
 * exported from one module. */
export type WorkpoolAdminApi = {
  overview: Query<{ keysPaginationOpts?: PaginationOptions }, AdminOverview>;
  jobs: Query<ListArgs, PaginationResult<ListedWorkInfo>>;
  job: Query<{ id: WorkId }, WorkInfo | null>;
  retry: Mutation<{ id: WorkId }, WorkId>;
  cancel: Mutation<{ id: WorkId }, null>;
  pause: Mutation<{ key?: string }, null>;
  resume: Mutation<{ key?: string }, null>;
  setKeyParallelism: Mutation<{ key: string; parallelism: number | null }, null>;
  setMaxParallelism: Mutation<{ maxParallelism: number | null }, null>;
  /** The schedule functions (`pool.adminApi` returns them; an app that exports none of them gets
   * a dashboard without the schedules panel). */
  schedules?: Query<{ paginationOpts: PaginationOptions }, PaginationResult<ScheduleInfo>>;
  pauseSchedule?: Mutation<{ name: string }, boolean>;
  resumeSchedule?: Mutation<{ name: string }, boolean>;
  runScheduleNow?: Mutation<{ name: string }, WorkId | null>;
  /** The group functions (`pool.adminApi` returns them; without `group` the dashboard has no
   * groups panel, and without `cancelGroup` the panel shows progress only). */
  group?: Query<{ id: string }, GroupStatus | null>;
  cancelGroup?: Mutation<{ id: string }, null>;
};

/** Keys a page, and jobs before "Load more", unless told. */
const DEFAULT_PAGE = 20;

export type DashboardOptions = {
  /** Keys a page (1 to 100; default 20). */
  keysPerPage?: number;
  /** Running and failed jobs shown before "Load more" (default 20). */
  jobsPerPage?: number;
  /** Group ids whose progress the groups panel shows from the start (e.g. the import a page is
   * about); the operator can watch more by id. */
  groups?: string[];
};

/** The dashboard's data and actions, live from the admin API. Throws (into the nearest error
 * boundary, as `useQuery` does) when a query fails, `workpool/Unauthorized` included; see
 * `useOverview` for an overview that reports a refusal instead. */
export function useWorkpoolDashboard(
  api: WorkpoolAdminApi,
  options: DashboardOptions = {},
): Omit<DashboardViewProps, "title" | "theme"> {
  const { overview, refused, keysPaging } = useOverview(api, options.keysPerPage);
  if (refused) throw refused;
  return { overview, keysPaging, ...useJobsAndActions(api, options) };
}

/** The admin `overview`, live, a page of keys at a time. A refusal (`workpool/Unauthorized`) is
 * returned as `refused` rather than thrown; any other error is thrown. */
export function useOverview(
  api: Pick<WorkpoolAdminApi, "overview">,
  keysPerPage = DEFAULT_PAGE,
): { overview: AdminOverview | undefined; refused: Error | undefined; keysPaging: KeysPaging } {
  const keys = useKeyPages();
  const { overview } = useQueries({
    overview: {
      query: api.overview,
      args: { keysPaginationOpts: { numItems: keysPerPage, cursor: keys.cursor } },
    },
  });
  if (overview instanceof Error && !isUnauthorizedError(overview)) throw overview;
  const refused = overview instanceof Error ? overview : undefined;
  const value = overview instanceof Error ? undefined : (overview as AdminOverview | undefined);
  return { overview: value, refused, keysPaging: keys.paging(value?.keys) };
}

/** Running and failed jobs, page by page, the schedules, the groups watched, and the actions. */
function useJobsAndActions(api: WorkpoolAdminApi, options: DashboardOptions) {
  const jobsPerPage = options.jobsPerPage ?? DEFAULT_PAGE;
  return {
    running: useJobs(api, { state: "running" }, jobsPerPage),
    failed: useJobs(api, { outcome: "failed" }, jobsPerPage),
    actions: useDashboardActions(api),
    schedules: useSchedules(api, jobsPerPage),
    scheduleActions: useScheduleActions(api),
    groups: useGroups(api, options.groups),
    groupActions: useGroupActions(api),
  };
}

/** The groups the operator watches (starting with `initial`), each one's status live from the
 * admin `group` query (one subscription per group: a constant number of reads each, however large
 * the group); undefined when the app's admin API exports no `group`. */
export function useGroups(
  api: Pick<WorkpoolAdminApi, "group">,
  initial: string[] = [],
): GroupsPanel | undefined {
  const [ids, setIds] = useState<string[]>(() => [...new Set(initial)]);
  const queries: Record<
    string,
    { query: NonNullable<WorkpoolAdminApi["group"]>; args: { id: string } }
  > = {};
  if (api.group) for (const id of ids) queries[id] = { query: api.group, args: { id } };
  const results = useQueries(queries);
  if (!api.group) return undefined;
  return {
    watched: ids.map((id) => ({
      id,
      status: results[id] as GroupStatus | null | undefined | Error,
    })),
    watch: (id) => setIds((list) => (list.includes(id) ? list : [...list, id])),
    unwatch: (id) => setIds((list) => list.filter((other) => other !== id)),
  };
}

/** The admin API's `cancelGroup`, as the groups panel calls it; undefined when not exported. */
export function useGroupActions(
  api: Pick<WorkpoolAdminApi, "cancelGroup">,
): GroupActions | undefined {
  const convex = useConvex();
  const { cancelGroup } = api;
  if (!cancelGroup) return undefined;
  return { cancelGroup: (id) => convex.mutation(cancelGroup, { id }) };
}

/** A stand-in reference for a query that is skipped (never subscribed to). */
const SKIPPED = "skipped:schedules" as unknown as NonNullable<WorkpoolAdminApi["schedules"]>;

/** The pool's schedules, page by page (`usePaginatedQuery` of the admin `schedules`); undefined
 * when the app's admin API exports no `schedules`. */
export function useSchedules(
  api: Pick<WorkpoolAdminApi, "schedules">,
  initialNumItems: number,
): SchedulesPage | undefined {
  const { results, status, loadMore } = usePaginatedQuery(
    api.schedules ?? SKIPPED,
    api.schedules ? {} : "skip",
    { initialNumItems },
  );
  return api.schedules ? { results, status, loadMore } : undefined;
}

/** The admin API's schedule mutations, as the schedules panel calls them; undefined when the
 * app's admin API does not export all three. */
export function useScheduleActions(
  api: Pick<WorkpoolAdminApi, "pauseSchedule" | "resumeSchedule" | "runScheduleNow">,
): ScheduleActions | undefined {
  const convex = useConvex();
  const { pauseSchedule, resumeSchedule, runScheduleNow } = api;
  if (!pauseSchedule || !resumeSchedule || !runScheduleNow) return undefined;
  return {
    pauseSchedule: (name) => convex.mutation(pauseSchedule, { name }),
    resumeSchedule: (name) => convex.mutation(resumeSchedule, { name }),
    runScheduleNow: (name) => convex.mutation(runScheduleNow, { name }),
  };
}

/** A list of jobs, page by page (`usePaginatedQuery` of the admin `jobs`). */
export function useJobs(
  api: Pick<WorkpoolAdminApi, "jobs">,
  filter: Omit<ListArgs, "paginationOpts">,
  initialNumItems: number,
): JobsPage {
  const { results, status, loadMore } = usePaginatedQuery(api.jobs, filter, { initialNumItems });
  return { results, status, loadMore };
}

/** The admin API's mutations, as the views call them. */
export function useDashboardActions(api: WorkpoolAdminApi): DashboardActions {
  const retry = useMutation(api.retry);
  const cancel = useMutation(api.cancel);
  const pause = useMutation(api.pause);
  const resume = useMutation(api.resume);
  const setKeyParallelism = useMutation(api.setKeyParallelism);
  const setMaxParallelism = useMutation(api.setMaxParallelism);
  return {
    retry: (id) => retry({ id }),
    cancel: (id) => cancel({ id }),
    pause: (key) => pause(key === undefined ? {} : { key }),
    resume: (key) => resume(key === undefined ? {} : { key }),
    setKeyParallelism: (key, parallelism) => setKeyParallelism({ key, parallelism }),
    setMaxParallelism: (maxParallelism) => setMaxParallelism({ maxParallelism }),
  };
}

/** The cursors of the key pages seen, so that "previous" goes back to the page before. */
function useKeyPages() {
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1];
  return {
    cursor,
    paging: (page: AdminOverview["keys"] | undefined): KeysPaging => ({
      hasPrevious: cursors.length > 1,
      hasNext: page !== undefined && !page.isDone,
      previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
      next: () => {
        if (page !== undefined && !page.isDone) {
          setCursors((list) => [...list, page.continueCursor]);
        }
      },
    }),
  };
}

/**
 * The operator's dashboard of a pool, live: `<WorkpoolDashboard api={api.workpoolAdmin} />` inside
 * your `ConvexProvider`. A viewer the admin API refuses sees a message, not a crash.
 */
export function WorkpoolDashboard(
  props: { api: WorkpoolAdminApi; title?: string; theme?: "light" | "dark" } & DashboardOptions,
) {
  return (
    <RefusalBoundary theme={props.theme}>
      <LiveDashboard {...props} />
    </RefusalBoundary>
  );
}

function LiveDashboard(
  props: { api: WorkpoolAdminApi; title?: string; theme?: "light" | "dark" } & DashboardOptions,
) {
  const { overview, refused, keysPaging } = useOverview(props.api, props.keysPerPage);
  // Refused the overview: the jobs' queries would be refused too, so they are not even made.
  if (refused) return <UnauthorizedView theme={props.theme} />;
  return <LiveJobs {...props} overview={overview} keysPaging={keysPaging} />;
}

function LiveJobs(
  props: {
    api: WorkpoolAdminApi;
    title?: string;
    theme?: "light" | "dark";
    overview: AdminOverview | undefined;
    keysPaging: KeysPaging;
  } & DashboardOptions,
) {
  const rest = useJobsAndActions(props.api, props);
  return (
    <DashboardView
      {...rest}
      overview={props.overview}
      keysPaging={props.keysPaging}
      title={props.title}
      theme={props.theme}
    />
  );
}

/** Shows UnauthorizedView when a query below throws `workpool/Unauthorized`; any other error goes
 * on up to the app's own boundary. */
export class RefusalBoundary extends Component<
  { theme?: "light" | "dark"; children: ReactNode },
  { refused: boolean }
> {
  state = { refused: false };

  static getDerivedStateFromError(error: unknown): { refused: boolean } {
    if (isUnauthorizedError(error)) return { refused: true };
    throw error;
  }

  render() {
    return this.state.refused ? <UnauthorizedView theme={this.props.theme} /> : this.props.children;
  }
}
