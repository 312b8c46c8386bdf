/**
 * `convex-workpool/react`: an operator's dashboard for a pool, on the app's admin API
 * (`pool.adminApi`). `WorkpoolDashboard` and the hooks it is built from (WorkpoolDashboard.tsx, on
 * `convex/react`), and the views they render (views.tsx), which take data and callbacks so that
 * the same dashboard renders from any source. React is an optional peer dependency of the package:
 * only this entry point needs it.
 */
export {
  RefusalBoundary,
  WorkpoolDashboard,
  useDashboardActions,
  useGroupActions,
  useGroups,
  useJobs,
  useOverview,
  useScheduleActions,
  useSchedules,
  useWorkpoolDashboard,
  type DashboardOptions,
  type WorkpoolAdminApi,
} from "./WorkpoolDashboard.js";
export {
  DashboardFrame,
  DashboardView,
  JobsTable,
  KeysView,
  PoolControls,
  ThroughputView,
  TotalsView,
  UnauthorizedView,
  errorText,
  type DashboardActions,
  type DashboardViewProps,
  type JobsPage,
  type KeysPaging,
} from "./views.js";
export {
  SchedulesView,
  timingText,
  type ScheduleActions,
  type SchedulesPage,
} from "./SchedulesView.js";
export {
  GroupsView,
  finishedPercent,
  groupStateText,
  type GroupActions,
  type GroupsPanel,
  type WatchedGroup,
} from "./GroupsView.js";
export { formatCount, formatDuration, formatTime } from "./format.js";
export { DASHBOARD_CSS } from "./styles.js";
