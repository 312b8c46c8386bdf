// The live dashboard's page (`npm run demo -- --serve`): the views of convex-workpool/react
// (src/react/views.tsx), fed by polling the demo's server (serve.demo.ts) instead of convex/react:
// GET /api/state for the admin overview, the running and failed jobs, the schedules and the groups
// watched (the demo's import, and any id typed into the groups panel), POST
// /api/action for the admin API's mutations. Bundled by demo.mjs with esbuild; loads nothing but its own origin.
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import type {
  AdminOverview,
  GroupStatus,
  ListedWorkInfo,
  ScheduleInfo,
  WorkId,
} from "../../src/client/index.js";
import type { ScheduleActions } from "../../src/react/SchedulesView.js";
import type { GroupActions } from "../../src/react/GroupsView.js";
import { DashboardView, type DashboardActions, type JobsPage } from "../../src/react/views.js";

/** How often the page asks for the pool's state (real ms). */
const POLL_EVERY_MS = 250;
const FIRST_JOBS = 10;
const KEYS_PER_PAGE = 10;

type Page = { page: ListedWorkInfo[]; isDone: boolean };
type State = {
  overview: AdminOverview;
  running: Page;
  failed: Page;
  schedules: { page: ScheduleInfo[]; isDone: boolean };
  /** The demo's own group first, then those the page asked for; an error as its message. */
  groups: Array<{ id: string; status: GroupStatus | null | { error: string } }>;
};

async function post(name: string, args: object): Promise<unknown> {
  const response = await fetch("/api/action", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ name, args }),
  });
  const body = (await response.json()) as { error?: string; value?: unknown };
  if (body.error !== undefined) throw new Error(body.error);
  return body.value;
}

const actions: DashboardActions = {
  retry: (id: WorkId) => post("retry", { id }),
  cancel: (id: WorkId) => post("cancel", { id }),
  pause: (key?: string) => post("pause", key === undefined ? {} : { key }),
  resume: (key?: string) => post("resume", key === undefined ? {} : { key }),
  setKeyParallelism: (key, parallelism) => post("setKeyParallelism", { key, parallelism }),
  setMaxParallelism: (maxParallelism) => post("setMaxParallelism", { maxParallelism }),
};

const scheduleActions: ScheduleActions = {
  pauseSchedule: (name) => post("pauseSchedule", { name }),
  resumeSchedule: (name) => post("resumeSchedule", { name }),
  runScheduleNow: (name) => post("runScheduleNow", { name }),
};

const groupActions: GroupActions = { cancelGroup: (id) => post("cancelGroup", { id }) };

function LiveDemoDashboard() {
  const [state, setState] = useState<State | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [running, setRunning] = useState(FIRST_JOBS);
  const [failed, setFailed] = useState(FIRST_JOBS);
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1];
  // Groups typed into the panel (the demo's own come with every state) and those dropped.
  const [asked, setAsked] = useState<string[]>([]);
  const [dropped, setDropped] = useState<string[]>([]);
  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const query = new URLSearchParams({
          running: String(running),
          failed: String(failed),
          keys: String(KEYS_PER_PAGE),
          ...(cursor === null ? {} : { keysCursor: cursor }),
          ...(asked.length === 0 ? {} : { groups: asked.join(",") }),
        });
        const response = await fetch(`/api/state?${query}`);
        if (!stopped) setState((await response.json()) as State);
        if (!stopped) setError(undefined);
      } catch (e) {
        if (!stopped) setError(`The demo's server is not answering (${String(e)}).`);
      }
    };
    void poll();
    const timer = setInterval(poll, POLL_EVERY_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [running, failed, cursor, asked]);
  const page = (p: Page | undefined, more: (n: number) => void): JobsPage => ({
    results: p?.page ?? [],
    status: p === undefined ? "LoadingFirstPage" : p.isDone ? "Exhausted" : "CanLoadMore",
    loadMore: more,
  });
  const keys = state?.overview.keys;
  return (
    <>
      {error !== undefined && <p data-testid="server-error">{error}</p>}
      <DashboardView
        title="emailPool (demo, embedded backend)"
        overview={state?.overview}
        running={page(state?.running, (n) => setRunning((x) => x + n))}
        failed={page(state?.failed, (n) => setFailed((x) => x + n))}
        keysPaging={{
          hasPrevious: cursors.length > 1,
          hasNext: keys !== undefined && !keys.isDone,
          previous: () => setCursors((list) => (list.length > 1 ? list.slice(0, -1) : list)),
          next: () => keys && !keys.isDone && setCursors((l) => [...l, keys.continueCursor]),
        }}
        actions={actions}
        schedules={{
          results: state?.schedules.page ?? [],
          status: state === undefined ? "LoadingFirstPage" : "Exhausted",
          loadMore: () => {},
        }}
        scheduleActions={scheduleActions}
        groups={{
          watched: (state?.groups ?? [])
            .filter((group) => !dropped.includes(group.id))
            .map(({ id, status }) => ({
              id,
              status: status !== null && "error" in status ? new Error(status.error) : status,
            })),
          watch: (id) => {
            setDropped((list) => list.filter((other) => other !== id));
            setAsked((list) => (list.includes(id) ? list : [...list, id]));
          },
          unwatch: (id) => {
            setAsked((list) => list.filter((other) => other !== id));
            setDropped((list) => [...list, id]);
          },
        }}
        groupActions={groupActions}
      />
    </>
  );
}

createRoot(document.getElementById("root")!).render(<LiveDemoDashboard />);
