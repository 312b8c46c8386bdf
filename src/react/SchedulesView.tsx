/**
 * The dashboard's schedules panel (API-EXTENSIONS §10): each schedule's timing, next time, last run
 * and counts, with pause / resume and "run now", drawn from a page of the admin `schedules` query and
 * the admin API's schedule mutations passed in. Never fetches or subscribes (the wiring does, as for
 * the other views); holds no state.
 */
import type { ScheduleInfo, WorkId } from "../client/index.js";
import { formatCount, formatTime } from "./format.js";

/** A list of schedules page by page, in the shape `usePaginatedQuery` returns. */
export type SchedulesPage = {
  results: ScheduleInfo[];
  status: "LoadingFirstPage" | "CanLoadMore" | "LoadingMore" | "Exhausted";
  loadMore: (numItems: number) => void;
};

/** What the panel can do to a schedule: the admin API's schedule mutations. Each may reject. */
export type ScheduleActions = {
  pauseSchedule: (name: string) => Promise<unknown>;
  resumeSchedule: (name: string) => Promise<unknown>;
  runScheduleNow: (name: string) => Promise<WorkId | null | unknown>;
};

/** How many more schedules "Load more" asks for. */
const MORE_SCHEDULES = 20;

/** A schedule's timing as a person reads it: its cron and zone, or its interval. */
export function timingText(schedule: ScheduleInfo): string {
  if (schedule.cron !== undefined) return `${schedule.cron} (${schedule.timezone ?? "UTC"})`;
  return `every ${formatCount((schedule.everyMs ?? 0) / 1000)} s`;
}

/** The last run's state or outcome. */
function lastRunText(schedule: ScheduleInfo): string {
  const run = schedule.lastRun;
  if (run === undefined) return "—";
  return `${run.outcome ?? run.state} (${formatTime(run.scheduledFor)})`;
}

/** The schedules table, with its actions. */
export function SchedulesView(props: {
  page: SchedulesPage;
  act: (run: () => Promise<unknown>) => void;
  actions: ScheduleActions;
}) {
  const { page, act, actions } = props;
  if (page.status === "LoadingFirstPage") return <p className="wpd-sub">Loading…</p>;
  if (page.results.length === 0) return <p className="wpd-sub">No schedules.</p>;
  return (
    <>
      <table data-testid="schedules">
        <thead>
          <tr>
            <th>schedule</th>
            <th>timing</th>
            <th>next</th>
            <th>last run</th>
            <th>enqueued</th>
            <th>skipped</th>
            <th>missed</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {page.results.map((schedule) => (
            <tr key={schedule.name} data-schedule={schedule.name}>
              <td>
                {schedule.name}
                {schedule.paused && <span className="wpd-warn"> (paused)</span>}
              </td>
              <td>{timingText(schedule)}</td>
              <td>{schedule.nextRunAt === null ? "—" : formatTime(schedule.nextRunAt)}</td>
              <td className={schedule.lastRun?.outcome === "failed" ? "wpd-bad" : undefined}>
                {lastRunText(schedule)}
              </td>
              <td>{formatCount(schedule.counts.enqueued)}</td>
              <td>{formatCount(schedule.counts.skipped)}</td>
              <td>{formatCount(schedule.counts.missed)}</td>
              <td>
                {schedule.paused ? (
                  <button
                    data-action="resume-schedule"
                    onClick={() => act(() => actions.resumeSchedule(schedule.name))}
                  >
                    Resume
                  </button>
                ) : (
                  <button
                    data-action="pause-schedule"
                    onClick={() => act(() => actions.pauseSchedule(schedule.name))}
                  >
                    Pause
                  </button>
                )}{" "}
                <button
                  data-action="run-schedule"
                  onClick={() => act(() => actions.runScheduleNow(schedule.name))}
                >
                  Run now
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {page.status !== "Exhausted" && (
        <div className="wpd-bar">
          <button
            disabled={page.status !== "CanLoadMore"}
            onClick={() => page.loadMore(MORE_SCHEDULES)}
          >
            Load more
          </button>
        </div>
      )}
    </>
  );
}
