// @vitest-environment node
/**
 * `convex-workpool/react`: the views rendered to HTML with react-dom/server from data and
 * callbacks (no backend), and the `convex/react` wiring against a stubbed Convex client that
 * answers each admin query from a table and records each mutation.
 */
import { describe, expect, it } from "vitest";
import { renderToStaticMarkup } from "react-dom/server";
import { ConvexError } from "convex/values";
import { ConvexProvider, type ConvexReactClient } from "convex/react";
import { getFunctionName, type FunctionReference } from "convex/server";
import type { AdminOverview, ListedWorkInfo, WorkId } from "../client/index.js";
import { api } from "../../test/app/_generated/api.js";
import {
  DashboardView,
  WorkpoolDashboard,
  formatCount,
  formatDuration,
  useDashboardActions,
  useScheduleActions,
  SchedulesView,
  type DashboardActions,
  type ScheduleActions,
  type JobsPage,
  type WorkpoolAdminApi,
} from "./index.js";

// The test app's admin module is what `pool.adminApi` exports: the dashboard takes it as it is.
const adminApi: WorkpoolAdminApi = api.admin;

const NOW_SECOND = 1_800_000_000;

function overview(over: Partial<AdminOverview["stats"]> = {}): AdminOverview {
  return {
    stats: {
      pending: 12,
      running: 3,
      maxParallelism: 10,
      operatorMaxParallelism: null,
      paused: false,
      oldestPendingMs: 4250,
      lastMinute: { started: 9, succeeded: 6, failed: 2, canceled: 0, retried: 1 },
      totals: {
        enqueued: 1234,
        started: 1300,
        succeeded: 1180,
        failed: 24,
        canceled: 15,
        retried: 66,
      },
      ...over,
    },
    series: Array.from({ length: 60 }, (_, i) => ({
      second: NOW_SECOND - 59 + i,
      started: i === 59 ? 9 : 0,
      succeeded: i === 59 ? 6 : 0,
      failed: i === 58 ? 2 : 0,
      canceled: 0,
      retried: i === 59 ? 1 : 0,
    })),
    keys: {
      page: [
        {
          key: "tenant-a",
          pending: 4,
          running: 1,
          succeeded: 40,
          failed: 2,
          canceled: 0,
          paused: true,
          parallelism: 2,
          weight: 3,
          reserve: 1,
          rateLimit: { starts: 5, periodMs: 1000 },
        },
      ],
      isDone: true,
      continueCursor: "end",
    },
  };
}

const failedJob: ListedWorkInfo = {
  id: "w1" as WorkId,
  name: "emails:send",
  fnType: "action",
  key: "tenant-a",
  priority: "normal",
  state: "finished",
  previousAttempts: 5,
  enqueuedAt: NOW_SECOND * 1000 - 60_000,
  startedAt: NOW_SECOND * 1000 - 2000,
  finishedAt: NOW_SECOND * 1000 - 1000,
  result: { kind: "failed", error: "smtp 451 <b>busy</b>" },
};
const runningJob: ListedWorkInfo = {
  id: "w2" as WorkId,
  name: "emails:send",
  fnType: "action",
  priority: "normal",
  state: "running",
  previousAttempts: 0,
  enqueuedAt: NOW_SECOND * 1000 - 5000,
  startedAt: NOW_SECOND * 1000 - 500,
};

const page = (results: ListedWorkInfo[], status: JobsPage["status"] = "Exhausted"): JobsPage => ({
  results,
  status,
  loadMore: () => {},
});

const noActions: DashboardActions = {
  retry: async () => null,
  cancel: async () => null,
  pause: async () => null,
  resume: async () => null,
  setKeyParallelism: async () => null,
  setMaxParallelism: async () => null,
};

const paging = { hasPrevious: false, hasNext: true, previous: () => {}, next: () => {} };

/** The text of every `data-figure` element of the markup, by name. */
function figures(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/data-figure="([^"]+)"[^>]*>([^<]*)</g)].map((m) => [m[1], m[2]]),
  );
}

describe("DashboardView", () => {
  it("shows the totals, the oldest pending age and the last minute from the overview", () => {
    const html = renderToStaticMarkup(
      <DashboardView
        overview={overview()}
        running={page([runningJob])}
        failed={page([failedJob])}
        keysPaging={paging}
        actions={noActions}
        title="emailPool"
      />,
    );
    expect(figures(html)).toEqual({
      maxParallelism: "10",
      pending: "12",
      running: "3",
      "totals.enqueued": "1,234",
      "totals.started": "1,300",
      "totals.succeeded": "1,180",
      "totals.failed": "24",
      "totals.canceled": "15",
      "totals.retried": "66",
      oldestPending: "4.3 s",
      // The chart's sums are the series'.
      "lastMinute.succeeded": "6",
      "lastMinute.failed": "2",
      "lastMinute.started": "9",
    });
    expect(html).toContain("<h2>emailPool</h2>");
    // One bar per second with finished jobs (two such seconds), and the started line.
    expect(html.match(/<rect /g)).toHaveLength(2);
    expect(html).toContain("<polyline");
    expect(html).toContain("stays in force, whatever the clients&#x27; options say, until it is");
  });

  it("says which maxParallelism is in force, and offers to clear the operator's", () => {
    const render = (stats: Partial<AdminOverview["stats"]>) =>
      renderToStaticMarkup(
        <DashboardView
          overview={overview(stats)}
          running={page([])}
          failed={page([])}
          keysPaging={paging}
          actions={noActions}
        />,
      );
    const clients = render({ maxParallelism: 10, operatorMaxParallelism: null });
    expect(clients).toMatch(/data-testid="max-parallelism-source">\(the clients&#x27; value\)/);
    expect(clients).not.toContain('data-testid="clear-max-parallelism"');
    const operators = render({ maxParallelism: 0, operatorMaxParallelism: 0 });
    expect(figures(operators).maxParallelism).toBe("0");
    expect(operators).toContain('data-testid="max-parallelism-source">(set by an operator)');
    expect(operators).toContain('data-testid="clear-max-parallelism"');
  });

  it("lists failed jobs with their error (escaped) and attempts, and running ones with cancel", () => {
    const html = renderToStaticMarkup(
      <DashboardView
        overview={overview()}
        running={page([runningJob])}
        failed={page([failedJob, { ...failedJob, id: "w3" as WorkId, retriedAs: "w9" as WorkId }])}
        keysPaging={paging}
        actions={noActions}
      />,
    );
    expect(html).toContain("smtp 451 &lt;b&gt;busy&lt;/b&gt;");
    const failedTable = html.slice(html.indexOf('data-testid="failed-jobs"'));
    expect(failedTable).toMatch(/data-job="w1".*?<td>5<\/td>.*?data-action="retry"/);
    // A job already retried shows that, not a second retry button.
    expect(failedTable).toMatch(/data-job="w3".*?data-retried-as="w9"/);
    expect(failedTable.match(/data-action="retry"/g)).toHaveLength(1);
    const runningTable = html.slice(
      html.indexOf('data-testid="running-jobs"'),
      html.indexOf('data-testid="failed-jobs"'),
    );
    expect(runningTable).toMatch(/data-job="w2".*?data-action="cancel"/);
  });

  it("shows keys with their counts, pause state and parallelism, and the pool's pause", () => {
    const paused = renderToStaticMarkup(
      <DashboardView
        overview={overview({ paused: true })}
        running={page([])}
        failed={page([])}
        keysPaging={paging}
        actions={noActions}
      />,
    );
    expect(paused).toContain('data-testid="resume-pool"');
    expect(paused).not.toContain('data-testid="pause-pool"');
    expect(paused).toMatch(/data-key="tenant-a".*\(paused\).*data-action="resume-key"/);
    // Each key's share (API-EXTENSIONS section 13): weight, reserve and rate limit in force.
    expect(paused).toMatch(
      /data-key="tenant-a".*data-testid="key-share">weight 3 · reserve 1 · 5 per 1,000 ms</,
    );
    expect(paused).toContain('data-testid="running-empty"');
    expect(paused).toContain('data-testid="failed-empty"');
    const running = renderToStaticMarkup(
      <DashboardView
        overview={overview()}
        running={page([], "LoadingFirstPage")}
        failed={page([failedJob], "CanLoadMore")}
        keysPaging={paging}
        actions={noActions}
      />,
    );
    expect(running).toContain('data-testid="pause-pool"');
    expect(running).toContain("Load more");
    expect(running).toContain("Next keys");
  });

  it("says it is loading until the overview comes", () => {
    const html = renderToStaticMarkup(
      <DashboardView
        overview={undefined}
        running={page([], "LoadingFirstPage")}
        failed={page([], "LoadingFirstPage")}
        keysPaging={paging}
        actions={noActions}
      />,
    );
    expect(html).toContain('data-testid="loading"');
    expect(html).not.toContain("data-figure");
  });

  it("carries its own styles, light and dark, and loads nothing", () => {
    const html = renderToStaticMarkup(
      <DashboardView
        overview={overview()}
        running={page([])}
        failed={page([])}
        keysPaging={paging}
        actions={noActions}
        theme="dark"
      />,
    );
    expect(html).toContain('data-theme="dark"');
    expect(html).toContain("prefers-color-scheme:dark");
    expect(html).not.toMatch(/\b(https?:|url\(|@import|<link|<script)/);
  });
});

describe("format", () => {
  it("writes counts and durations the same everywhere", () => {
    expect([formatCount(0), formatCount(999), formatCount(1234567)]).toEqual([
      "0",
      "999",
      "1,234,567",
    ]);
    expect([850, 4250, 185_000, 7_800_000].map(formatDuration)).toEqual([
      "850 ms",
      "4.3 s",
      "3 min 05 s",
      "2 h 10 min",
    ]);
  });
});

/** A stand-in for ConvexReactClient: answers each query by its function's name from `answers`
 * (an Error is thrown as the query's error) and records each mutation. */
type Args = Record<string, unknown>;
function stubClient(answers: Record<string, (args: Args) => unknown>) {
  const mutations: Array<{ name: string; args: unknown }> = [];
  const queries: Array<{ name: string; args: Args }> = [];
  const client = {
    watchQuery(query: FunctionReference<"query">, args: Args) {
      const name = getFunctionName(query);
      queries.push({ name, args });
      return {
        localQueryResult: () => {
          const answer = answers[name]?.(args);
          if (answer instanceof Error) throw answer;
          return answer;
        },
        onUpdate: () => () => {},
        journal: () => undefined,
      };
    },
    mutation: async (mutation: FunctionReference<"mutation">, args: unknown) => {
      mutations.push({ name: getFunctionName(mutation), args });
      return null;
    },
    // What ConvexProvider and the hooks may ask of a client besides.
    connectionState: () => ({}),
  } as unknown as ConvexReactClient;
  return { client, mutations, queries };
}

describe("WorkpoolDashboard on convex/react", () => {
  it("renders the overview and the running and failed jobs its queries return", () => {
    const { client, queries } = stubClient({
      "admin:overview": () => overview(),
      "admin:jobs": (args) => ({
        page: args.state === "running" ? [runningJob] : [failedJob],
        isDone: true,
        continueCursor: "end",
      }),
    });
    const html = renderToStaticMarkup(
      <ConvexProvider client={client}>
        <WorkpoolDashboard api={adminApi} title="emailPool" keysPerPage={5} jobsPerPage={7} />
      </ConvexProvider>,
    );
    expect(figures(html)["totals.enqueued"]).toBe("1,234");
    expect(html).toContain('data-job="w1"');
    expect(html).toContain('data-job="w2"');
    const asked = queries.map((q) => [q.name, q.args]);
    expect(asked).toContainEqual([
      "admin:overview",
      { keysPaginationOpts: { numItems: 5, cursor: null } },
    ]);
    expect(asked).toContainEqual([
      "admin:jobs",
      expect.objectContaining({
        state: "running",
        paginationOpts: expect.objectContaining({ numItems: 7 }),
      }),
    ]);
    expect(asked).toContainEqual(["admin:jobs", expect.objectContaining({ outcome: "failed" })]);
  });

  it("shows a message, not a crash, when the admin API refuses the viewer", () => {
    const refused = new ConvexError({
      kind: "workpool/Unauthorized",
      operation: "overview",
      message: "workpool: not authorized to call overview",
    });
    const { client } = stubClient({
      "admin:overview": () => refused,
      "admin:jobs": () => refused,
    });
    const html = renderToStaticMarkup(
      <ConvexProvider client={client}>
        <WorkpoolDashboard api={adminApi} />
      </ConvexProvider>,
    );
    expect(html).toContain('data-testid="unauthorized"');
    expect(html).not.toContain("data-figure");
  });

  it("lets any other error through to the app's own boundary", () => {
    const { client } = stubClient({
      "admin:overview": () => new Error("network down"),
      "admin:jobs": () => ({ page: [], isDone: true, continueCursor: "end" }),
    });
    expect(() =>
      renderToStaticMarkup(
        <ConvexProvider client={client}>
          <WorkpoolDashboard api={adminApi} />
        </ConvexProvider>,
      ),
    ).toThrow(/network down/);
  });

  it("sends each action as the admin API's mutation of that name", async () => {
    const { client, mutations } = stubClient({});
    let actions: DashboardActions | undefined;
    function Capture() {
      actions = useDashboardActions(adminApi);
      return null;
    }
    renderToStaticMarkup(
      <ConvexProvider client={client}>
        <Capture />
      </ConvexProvider>,
    );
    await actions!.retry("w1" as WorkId);
    await actions!.cancel("w2" as WorkId);
    await actions!.pause();
    await actions!.pause("tenant-a");
    await actions!.resume("tenant-a");
    await actions!.setKeyParallelism("tenant-a", null);
    await actions!.setMaxParallelism(4);
    await actions!.setMaxParallelism(null);
    expect(mutations).toEqual([
      { name: "admin:retry", args: { id: "w1" } },
      { name: "admin:cancel", args: { id: "w2" } },
      { name: "admin:pause", args: {} },
      { name: "admin:pause", args: { key: "tenant-a" } },
      { name: "admin:resume", args: { key: "tenant-a" } },
      { name: "admin:setKeyParallelism", args: { key: "tenant-a", parallelism: null } },
      { name: "admin:setMaxParallelism", args: { maxParallelism: 4 } },
      { name: "admin:setMaxParallelism", args: { maxParallelism: null } },
    ]);
  });
});

describe("the schedules panel", () => {
  const nightly = {
    id: "s1",
    name: "nightly",
    fnName: "reports:build",
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    overlap: "skip" as const,
    catchupWindowMs: 60_000,
    jitterMs: 0,
    paused: false,
    nextRunAt: Date.UTC(2026, 0, 2, 2, 0, 0),
    lastRun: {
      workId: "w9",
      scheduledFor: Date.UTC(2026, 0, 1, 2, 0, 0),
      state: "finished" as const,
      outcome: "failed" as const,
    },
    counts: { enqueued: 1200, skipped: 3, missed: 1 },
  };
  const sweep = { ...nightly, id: "s2", name: "sweep", cron: undefined, timezone: undefined };
  const paused = { ...sweep, name: "sweep", everyMs: 300_000, paused: true, nextRunAt: null };

  it("lists schedules with their timing, next time, last outcome and counts", () => {
    const noop = async () => null;
    const html = renderToStaticMarkup(
      <SchedulesView
        page={{ results: [nightly, paused], status: "Exhausted", loadMore: () => {} }}
        act={() => {}}
        actions={{ pauseSchedule: noop, resumeSchedule: noop, runScheduleNow: noop }}
      />,
    );
    expect(html).toContain('data-schedule="nightly"');
    expect(html).toContain("0 3 * * * (Europe/Berlin)");
    expect(html).toContain("02:00:00"); // next time, UTC
    expect(html).toContain("failed (02:00:00)");
    expect(html).toContain("1,200");
    expect(html).toContain("every 300 s");
    expect(html).toContain("(paused)");
    expect(html).toContain('data-action="pause-schedule"');
    expect(html).toContain('data-action="resume-schedule"');
    expect(html.match(/data-action="run-schedule"/g)).toHaveLength(2);
  });

  it("is left out, and its query not made, for an admin API without schedule functions", () => {
    const { client, queries } = stubClient({
      "admin:overview": () => overview(),
      "admin:jobs": () => ({ page: [], isDone: true, continueCursor: "end" }),
      "admin:schedules": () => ({ page: [nightly], isDone: true, continueCursor: "end" }),
    });
    const render = (api: WorkpoolAdminApi) =>
      renderToStaticMarkup(
        <ConvexProvider client={client}>
          <WorkpoolDashboard api={api} />
        </ConvexProvider>,
      );
    expect(render(adminApi)).toContain('data-schedule="nightly"');
    const asked = queries.length;
    // (`api.admin` is a proxy: its functions are named one by one.)
    const { overview: o, jobs, job, retry, cancel, pause, resume } = adminApi;
    const { setKeyParallelism, setMaxParallelism } = adminApi;
    const before = { overview: o, jobs, job, retry, cancel, pause, resume };
    const html = render({ ...before, setKeyParallelism, setMaxParallelism });
    expect(html).not.toContain("Schedules");
    expect(queries.slice(asked).map((q) => q.name)).not.toContain("admin:schedules");
  });

  it("sends pause, resume and run now as the admin API's schedule mutations", async () => {
    const { client, mutations } = stubClient({});
    let actions: ScheduleActions | undefined;
    let without: ScheduleActions | undefined | null = null;
    function Capture() {
      actions = useScheduleActions(adminApi);
      // An admin API from before schedules: no panel, nothing to call.
      without = useScheduleActions({});
      return null;
    }
    renderToStaticMarkup(
      <ConvexProvider client={client}>
        <Capture />
      </ConvexProvider>,
    );
    await actions!.pauseSchedule("nightly");
    await actions!.resumeSchedule("nightly");
    await actions!.runScheduleNow("nightly");
    expect(mutations).toEqual([
      { name: "admin:pauseSchedule", args: { name: "nightly" } },
      { name: "admin:resumeSchedule", args: { name: "nightly" } },
      { name: "admin:runScheduleNow", args: { name: "nightly" } },
    ]);
    expect(without).toBeUndefined();
  });
});
