/**
 * The dashboard's views: what an operator sees of a pool (totals, the last minute's throughput, the
 * oldest pending age, running and failed jobs, keys, the pool's pause and maxParallelism), drawn
 * from data and callbacks passed in. They never fetch, subscribe or hold the pool's data: the
 * wiring (WorkpoolDashboard.tsx on `convex/react`, or the demo's local source) does, so the same
 * views render anywhere. Local state is only what a form holds while it is typed.
 */
import { useState, type ReactNode } from "react";
import type {
  AdminOverview,
  KeyRow,
  ListedWorkInfo,
  SecondEvents,
  WorkId,
} from "../client/index.js";
import { formatCount, formatDuration, formatTime } from "./format.js";
import { DASHBOARD_CSS } from "./styles.js";
import { SchedulesView, type ScheduleActions, type SchedulesPage } from "./SchedulesView.js";

/** A list of jobs page by page, in the shape `usePaginatedQuery` returns. */
export type JobsPage = {
  results: ListedWorkInfo[];
  status: "LoadingFirstPage" | "CanLoadMore" | "LoadingMore" | "Exhausted";
  loadMore: (numItems: number) => void;
};

/** Moving through the pages of keys. */
export type KeysPaging = {
  hasPrevious: boolean;
  hasNext: boolean;
  previous: () => void;
  next: () => void;
};

/** What the dashboard can do to the pool: the admin API's mutations. Each may reject (the view
 * shows the error's message). */
export type DashboardActions = {
  retry: (id: WorkId) => Promise<unknown>;
  cancel: (id: WorkId) => Promise<unknown>;
  pause: (key?: string) => Promise<unknown>;
  resume: (key?: string) => Promise<unknown>;
  setKeyParallelism: (key: string, parallelism: number | null) => Promise<unknown>;
  /** A number sets the operator's maxParallelism; null clears it. */
  setMaxParallelism: (maxParallelism: number | null) => Promise<unknown>;
};

export type DashboardViewProps = {
  /** undefined while loading. */
  overview: AdminOverview | undefined;
  running: JobsPage;
  failed: JobsPage;
  keysPaging: KeysPaging;
  actions: DashboardActions;
  /** A heading, e.g. the pool's name. */
  title?: string;
  /** "light" or "dark" to force one; by default the viewer's system preference. */
  theme?: "light" | "dark";
  /** The pool's schedules and their actions; the panel is left out without them. */
  schedules?: SchedulesPage;
  scheduleActions?: ScheduleActions;
};

/** How many more jobs "Load more" asks for. */
const MORE_JOBS = 20;

/** The whole dashboard, from its data and callbacks. */
export function DashboardView(props: DashboardViewProps) {
  const { overview, actions } = props;
  const [message, setMessage] = useState<string | null>(null);
  /** Runs an action, showing its error (if any) instead of letting it go unseen. */
  const act = (run: () => Promise<unknown>) => {
    setMessage(null);
    run().catch((error: unknown) => setMessage(errorText(error)));
  };
  return (
    <DashboardFrame theme={props.theme}>
      <h2>{props.title ?? "Work pool"}</h2>
      {overview === undefined ? (
        <p className="wpd-sub" data-testid="loading">
          Loading…
        </p>
      ) : (
        <>
          <PoolControls stats={overview.stats} act={act} actions={actions} />
          {message !== null && (
            <p className="wpd-msg" role="alert" data-testid="action-error">
              {message}
            </p>
          )}
          <TotalsView stats={overview.stats} />
          <ThroughputView series={overview.series} />
          <h3>Running jobs</h3>
          <JobsTable page={props.running} kind="running" act={act} actions={actions} />
          <h3>Failed jobs</h3>
          <JobsTable page={props.failed} kind="failed" act={act} actions={actions} />
          <h3>Keys</h3>
          <KeysView
            keys={overview.keys.page}
            paging={props.keysPaging}
            act={act}
            actions={actions}
          />
          {props.schedules && props.scheduleActions && (
            <>
              <h3>Schedules</h3>
              <SchedulesView page={props.schedules} act={act} actions={props.scheduleActions} />
            </>
          )}
        </>
      )}
    </DashboardFrame>
  );
}

/** The dashboard's box and stylesheet, for the whole view or a message in its place. */
export function DashboardFrame(props: { theme?: "light" | "dark"; children: ReactNode }) {
  return (
    <div className="wpd" data-theme={props.theme}>
      <style>{DASHBOARD_CSS}</style>
      {props.children}
    </div>
  );
}

/** Shown in place of the dashboard when the admin API refused the viewer. */
export function UnauthorizedView(props: { theme?: "light" | "dark" }) {
  return (
    <DashboardFrame theme={props.theme}>
      <p className="wpd-msg" role="alert" data-testid="unauthorized">
        You are not allowed to operate this pool. Sign in as an operator, or ask an admin for
        access.
      </p>
    </DashboardFrame>
  );
}

type Stats = AdminOverview["stats"];
type Act = (run: () => Promise<unknown>) => void;

/** The pool's pause and maxParallelism (which value is in force: the operator's or the clients'),
 * with their controls. */
export function PoolControls(props: { stats: Stats; act: Act; actions: DashboardActions }) {
  const { stats, act, actions } = props;
  const [limit, setLimit] = useState("");
  const parsed = Number(limit);
  const valid = limit.trim() !== "" && Number.isInteger(parsed) && parsed >= 0;
  const operator = stats.operatorMaxParallelism ?? null;
  return (
    <>
      <div className="wpd-bar">
        <span data-testid="pool-state" className={stats.paused ? "wpd-warn" : "wpd-ok"}>
          {stats.paused ? "Paused: nothing new starts" : "Running"}
        </span>
        {stats.paused ? (
          <button data-testid="resume-pool" onClick={() => act(() => actions.resume())}>
            Resume pool
          </button>
        ) : (
          <button data-testid="pause-pool" onClick={() => act(() => actions.pause())}>
            Pause pool
          </button>
        )}
        <span>
          maxParallelism <b data-figure="maxParallelism">{formatCount(stats.maxParallelism)}</b>{" "}
          <span data-testid="max-parallelism-source">
            {operator === null ? "(the clients' value)" : "(set by an operator)"}
          </span>
        </span>
        <input
          aria-label="new maxParallelism"
          data-testid="max-parallelism-input"
          inputMode="numeric"
          value={limit}
          onChange={(event) => setLimit(event.target.value)}
        />
        <button
          data-testid="set-max-parallelism"
          disabled={!valid}
          onClick={() => act(async () => (await actions.setMaxParallelism(parsed), setLimit("")))}
        >
          Set
        </button>
        {operator !== null && (
          <button
            data-testid="clear-max-parallelism"
            onClick={() => act(() => actions.setMaxParallelism(null))}
          >
            Clear (back to the clients' value)
          </button>
        )}
      </div>
      <p className="wpd-note">
        A maxParallelism set here stays in force, whatever the clients' options say, until it is
        cleared. 0 starts nothing new without pausing: running jobs finish.
      </p>
    </>
  );
}

/** The pool now (pending, running, the oldest pending job's wait) and the figures that only grow
 * since it began. */
export function TotalsView(props: { stats: Stats }) {
  const { stats } = props;
  const card = (name: string, label: string, text: string, tone?: string) => (
    <div className="wpd-card" key={name}>
      <b className={tone} data-figure={name}>
        {text}
      </b>
      <span>{label}</span>
    </div>
  );
  const totals: Array<[keyof Stats["totals"], string, string?]> = [
    ["enqueued", "enqueued"],
    ["started", "attempts started"],
    ["succeeded", "succeeded", "wpd-ok"],
    ["failed", "failed", "wpd-bad"],
    ["canceled", "canceled"],
    ["retried", "retried", "wpd-warn"],
  ];
  return (
    <>
      <h3>Now</h3>
      <div className="wpd-cards">
        {card("pending", "pending", formatCount(stats.pending))}
        {card("running", "running", formatCount(stats.running))}
        {card("oldestPending", "oldest pending has waited", formatDuration(stats.oldestPendingMs))}
      </div>
      <h3>Since the pool began</h3>
      <div className="wpd-cards">
        {totals.map(([name, label, tone]) =>
          card(`totals.${name}`, label, formatCount(stats.totals[name]), tone),
        )}
      </div>
    </>
  );
}

const CHART_WIDTH_PX = 600;
const CHART_HEIGHT_PX = 110;

/** The last minute, second by second: finished jobs as stacked bars (succeeded, failed,
 * canceled) and attempts started as a line. */
export function ThroughputView(props: { series: SecondEvents[] }) {
  const { series } = props;
  const peak = Math.max(
    1,
    ...series.map((s) => Math.max(s.started, s.succeeded + s.failed + s.canceled)),
  );
  const slot = CHART_WIDTH_PX / Math.max(series.length, 1);
  const y = (n: number) => (n / peak) * (CHART_HEIGHT_PX - 10);
  const sum = (kind: "started" | "succeeded" | "failed") => series.reduce((n, s) => n + s[kind], 0);
  const line = series
    .map((s, i) => `${(i + 0.5) * slot},${CHART_HEIGHT_PX - y(s.started)}`)
    .join(" ");
  const last = series[series.length - 1];
  return (
    <>
      <h3>The last minute</h3>
      <svg
        className="wpd-chart"
        data-testid="throughput"
        viewBox={`0 0 ${CHART_WIDTH_PX} ${CHART_HEIGHT_PX}`}
        role="img"
        aria-label={`Last minute: ${sum("started")} attempts started, ${sum("succeeded")} succeeded, ${sum("failed")} failed`}
      >
        <line
          x1={0}
          x2={CHART_WIDTH_PX}
          y1={CHART_HEIGHT_PX - 0.5}
          y2={CHART_HEIGHT_PX - 0.5}
          stroke="var(--line)"
        />
        {series.map((s, i) => {
          let top = CHART_HEIGHT_PX;
          return (["succeeded", "failed", "canceled"] as const).map((kind) => {
            const h = y(s[kind]);
            top -= h;
            return h > 0 ? (
              <rect
                key={`${s.second}-${kind}`}
                x={i * slot + 1}
                y={top}
                width={Math.max(slot - 2, 1)}
                height={h}
                fill={`var(--${kind === "succeeded" ? "ok" : kind === "failed" ? "bad" : "gone"})`}
              />
            ) : null;
          });
        })}
        <polyline points={line} fill="none" stroke="var(--accent)" strokeWidth={1.5} />
      </svg>
      <div className="wpd-legend">
        <span>
          <i className="wpd-swatch" style={{ background: "var(--ok)" }} />
          succeeded <b data-figure="lastMinute.succeeded">{formatCount(sum("succeeded"))}</b>
        </span>
        <span>
          <i className="wpd-swatch" style={{ background: "var(--bad)" }} />
          failed <b data-figure="lastMinute.failed">{formatCount(sum("failed"))}</b>
        </span>
        <span>
          <i className="wpd-swatch" style={{ background: "var(--accent)" }} />
          attempts started <b data-figure="lastMinute.started">{formatCount(sum("started"))}</b>
        </span>
        {last !== undefined && <span>to {formatTime(last.second * 1000 + 999)} UTC</span>}
      </div>
    </>
  );
}

/** Running or failed jobs, page by page: a failed job's error and attempts, with retry; a running
 * job with cancel. */
export function JobsTable(props: {
  page: JobsPage;
  kind: "running" | "failed";
  act: Act;
  actions: DashboardActions;
}) {
  const { page, kind, act, actions } = props;
  if (page.status === "LoadingFirstPage") return <p className="wpd-sub">Loading…</p>;
  if (page.results.length === 0) {
    return (
      <p className="wpd-sub" data-testid={`${kind}-empty`}>
        {kind === "running" ? "No job is running." : "No failed job is retained."}
      </p>
    );
  }
  return (
    <>
      <table data-testid={`${kind}-jobs`}>
        <thead>
          <tr>
            <th>job</th>
            <th>key</th>
            <th>attempts</th>
            <th>{kind === "running" ? "started" : "finished"}</th>
            {kind === "failed" && <th>error</th>}
            <th />
          </tr>
        </thead>
        <tbody>
          {page.results.map((job) => (
            <tr key={job.id} data-job={job.id}>
              <td>
                {job.name}
                <div className="wpd-note">{job.id}</div>
              </td>
              <td>{job.key ?? "—"}</td>
              <td>{kind === "running" ? job.previousAttempts + 1 : job.previousAttempts}</td>
              <td>
                {kind === "running"
                  ? job.startedAt !== undefined && formatTime(job.startedAt)
                  : job.finishedAt !== undefined && formatTime(job.finishedAt)}
              </td>
              {kind === "failed" && (
                <td className="wpd-err">{job.result?.kind === "failed" ? job.result.error : ""}</td>
              )}
              <td>
                {kind === "running" ? (
                  <button data-action="cancel" onClick={() => act(() => actions.cancel(job.id))}>
                    Cancel
                  </button>
                ) : job.retriedAs !== undefined ? (
                  <span className="wpd-note" data-retried-as={job.retriedAs}>
                    retried
                  </span>
                ) : (
                  <button data-action="retry" onClick={() => act(() => actions.retry(job.id))}>
                    Retry
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {(page.status === "CanLoadMore" || page.status === "LoadingMore") && (
        <div className="wpd-bar">
          <button disabled={page.status === "LoadingMore"} onClick={() => page.loadMore(MORE_JOBS)}>
            Load more
          </button>
        </div>
      )}
    </>
  );
}

/** A page of keys: counts, share (weight, reserve, rate limit), parallelism, pause; pause/resume
 * and a key's parallelism. */
export function KeysView(props: {
  keys: KeyRow[];
  paging: KeysPaging;
  act: Act;
  actions: DashboardActions;
}) {
  const { keys, paging, act, actions } = props;
  if (keys.length === 0 && !paging.hasPrevious) {
    return <p className="wpd-sub">No key has jobs the pool has counted.</p>;
  }
  return (
    <>
      <table data-testid="keys">
        <thead>
          <tr>
            <th>key</th>
            <th>pending</th>
            <th>running</th>
            <th>succeeded</th>
            <th>failed</th>
            <th>canceled</th>
            <th>share</th>
            <th>parallelism</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.map((row) => (
            <KeyRowView key={row.key} row={row} act={act} actions={actions} />
          ))}
        </tbody>
      </table>
      <div className="wpd-bar">
        <button disabled={!paging.hasPrevious} onClick={paging.previous}>
          Previous keys
        </button>
        <button disabled={!paging.hasNext} onClick={paging.next}>
          Next keys
        </button>
      </div>
    </>
  );
}

function KeyRowView(props: { row: KeyRow; act: Act; actions: DashboardActions }) {
  const { row, act, actions } = props;
  const [limit, setLimit] = useState("");
  const parsed = Number(limit);
  const valid = limit.trim() === "" || (Number.isInteger(parsed) && parsed >= 1);
  return (
    <tr data-key={row.key}>
      <td>
        {row.key}
        {row.paused && <span className="wpd-warn"> (paused)</span>}
      </td>
      <td>{formatCount(row.pending)}</td>
      <td>{formatCount(row.running)}</td>
      <td className="wpd-ok">{formatCount(row.succeeded)}</td>
      <td className="wpd-bad">{formatCount(row.failed)}</td>
      <td>{formatCount(row.canceled)}</td>
      <td data-testid="key-share">{shareText(row)}</td>
      <td>
        {row.parallelism}{" "}
        <input
          aria-label={`parallelism of ${row.key}`}
          placeholder="default"
          value={limit}
          onChange={(event) => setLimit(event.target.value)}
        />{" "}
        <button
          disabled={!valid}
          onClick={() =>
            act(async () => {
              await actions.setKeyParallelism(row.key, limit.trim() === "" ? null : parsed);
              setLimit("");
            })
          }
        >
          Set
        </button>
      </td>
      <td>
        {row.paused ? (
          <button data-action="resume-key" onClick={() => act(() => actions.resume(row.key))}>
            Resume
          </button>
        ) : (
          <button data-action="pause-key" onClick={() => act(() => actions.pause(row.key))}>
            Pause
          </button>
        )}
      </td>
    </tr>
  );
}

/** A key's share as the keys view shows it, e.g. "weight 3 · reserve 1 · 5 per 1,000 ms". */
export function shareText(row: Pick<KeyRow, "weight" | "reserve" | "rateLimit">): string {
  const parts = [`weight ${row.weight}`];
  if (row.reserve > 0) parts.push(`reserve ${row.reserve}`);
  if (row.rateLimit !== null) {
    parts.push(
      `${formatCount(row.rateLimit.starts)} per ${formatCount(row.rateLimit.periodMs)} ms`,
    );
  }
  return parts.join(" · ");
}

/** The message of an error from an action: a ConvexError's `data.message` when it has one. */
export function errorText(error: unknown): string {
  const data = (error as { data?: unknown } | null)?.data;
  if (typeof data === "object" && data !== null && "message" in data) {
    return String((data as { message: unknown }).message);
  }
  return error instanceof Error ? error.message : String(error);
}
