// The admin module (admin.ts) as an admin page uses it, and GET /metrics (http.ts) as a Prometheus
// scraper reads it: convex-test with the app's pools registered, a fake clock stepped with
// vi.advanceTimersByTimeAsync (the clock stands still between steps, so a query and a fetch made
// one after the other see the same instant). /metrics is read back with parse-prometheus-text-format,
// someone else's reading of the format.
/// <reference types="vite/client" />
import { afterEach, describe, expect, it, vi } from "vitest";
// @ts-expect-error: the package ships no types; `parsePrometheus` below declares what it returns.
import parseUntyped from "parse-prometheus-text-format";
import type { FunctionArgs, FunctionReturnType } from "convex/server";
import type { Stats } from "convex-workpool";
import { asAdmin, runFor, setup, useExampleApp, type T } from "./test.setup.js";
import { api } from "./_generated/api.js";
import { attemptFails } from "./sim.js";

useExampleApp();

const sim = { ms: 100, failRate: 0, seed: 7 };
const firstPage = { numItems: 100, cursor: null };

/** One metric family as the parser returns it (values are the sample's text; TYPE upper-cased). */
type ParsedFamily = {
  name: string;
  help: string;
  type: string;
  metrics: Array<{ value: string; labels: Record<string, string> }>;
};
const parsePrometheus = parseUntyped as (text: string) => ParsedFamily[];

/** Each metric family's samples, by family name, as `{ "<label values>": value }`. */
function samplesByFamily(families: ParsedFamily[]): Record<string, Record<string, number>> {
  return Object.fromEntries(
    families.map((f) => [
      f.name,
      Object.fromEntries(
        f.metrics.map((m) => [Object.values(m.labels).join(","), Number(m.value)]),
      ),
    ]),
  );
}

/** What /metrics must say for these stats: every figure of each pool, in base units. */
function expectedSamples(byPool: Record<string, Stats>): Record<string, Record<string, number>> {
  const perPool = (figure: (stats: Stats) => number) =>
    Object.fromEntries(Object.entries(byPool).map(([pool, stats]) => [pool, figure(stats)]));
  const events = ["started", "succeeded", "failed", "canceled", "retried"] as const;
  return {
    workpool_pending_jobs: perPool((s) => s.pending),
    workpool_running_jobs: perPool((s) => s.running),
    workpool_max_parallelism: perPool((s) => s.maxParallelism),
    // Only pools whose operator set a maxParallelism have a sample.
    workpool_operator_max_parallelism: Object.fromEntries(
      Object.entries(byPool).flatMap(([pool, stats]) =>
        stats.operatorMaxParallelism === null ? [] : [[pool, stats.operatorMaxParallelism]],
      ),
    ),
    workpool_paused: perPool((s) => (s.paused ? 1 : 0)),
    workpool_oldest_pending_seconds: perPool((s) => s.oldestPendingMs / 1000),
    workpool_last_minute_events: Object.fromEntries(
      Object.entries(byPool).flatMap(([pool, stats]) =>
        events.map((event) => [`${pool},${event}`, stats.lastMinute[event]]),
      ),
    ),
    workpool_events_total: Object.fromEntries(
      Object.entries(byPool).flatMap(([pool, stats]) =>
        (["enqueued", ...events] as const).map((event) => [
          `${pool},${event}`,
          stats.totals[event],
        ]),
      ),
    ),
  };
}

/** A page url of `host` whose first fetch fails and second succeeds under `seed` at `failRate`. */
function urlFailingOnce(host: string, seed: number, failRate: number): string {
  for (let i = 0; ; i++) {
    const url = `https://${host}/p${i}`;
    const key = `fetch:${url}`;
    if (attemptFails(seed, key, 1, failRate) && !attemptFails(seed, key, 2, failRate)) return url;
  }
}

/** A page url of `host` whose first fetch succeeds under `seed` at `failRate`. */
function urlSucceeding(host: string, seed: number, failRate: number): string {
  for (let i = 0; ; i++) {
    const url = `https://${host}/p${i}`;
    if (!attemptFails(seed, `fetch:${url}`, 1, failRate)) return url;
  }
}

/** The first page of `admin.listJobs` with these filters. */
const listJobs = (t: T, args: Omit<FunctionArgs<typeof api.admin.listJobs>, "paginationOpts">) =>
  asAdmin(t).query(api.admin.listJobs, { ...args, paginationOpts: firstPage });

/** The scraper's secret in these tests (http.ts reads METRICS_TOKEN). */
const METRICS_TOKEN = "scraper-secret-in-tests";

/** GET /metrics as the scraper asks for it: with the deployment's token. */
async function scrape(t: T): Promise<Response> {
  vi.stubEnv("METRICS_TOKEN", METRICS_TOKEN);
  return await t.fetch("/metrics", { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("GET /metrics", () => {
  it("answers 401, with no figures, without the token, with another one, or while none is set", async () => {
    const t = setup();
    vi.stubEnv("METRICS_TOKEN", METRICS_TOKEN);
    const asked: Array<Record<string, string>> = [
      {},
      { Authorization: "Bearer guess" },
      { Authorization: METRICS_TOKEN },
    ];
    for (const headers of asked) {
      const response = await t.fetch("/metrics", { headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(await response.text()).not.toContain("workpool_");
    }
    vi.stubEnv("METRICS_TOKEN", "");
    const unset = await t.fetch("/metrics", { headers: { Authorization: "Bearer " } });
    expect(unset.status).toBe(401);
  });

  it("serves every pool's stats in Prometheus' text format, as admin.stats reports them", async () => {
    const t = setup();
    // emailPool: a bounced address fails for good; two emails fail every attempt and are retried.
    await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "bounce", to: "not-an-address" }],
      ...sim,
    });
    await t.mutation(api.emails.sendEmails, {
      emails: [
        { key: "flaky-1", to: "a@example.com" },
        { key: "flaky-2", to: "b@example.com" },
      ],
      ...sim,
      failRate: 1,
    });
    await runFor(1000);
    await asAdmin(t).mutation(api.admin.pause, { pool: "emailPool" });
    // scrapePool: two slow fetches running, four waiting for a slot.
    const urls = ["a", "b", "c", "d", "e", "f"].map((h) => `https://${h}.example.com/`);
    await t.mutation(api.scrape.scrapeSite, { urls, ...sim, ms: 5000 });
    await runFor(700);

    const stats = await asAdmin(t).query(api.admin.stats, {});
    const response = await scrape(t);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const families = parsePrometheus(await response.text());

    expect(families.map((f) => [f.name, f.type])).toEqual([
      ["workpool_pending_jobs", "GAUGE"],
      ["workpool_running_jobs", "GAUGE"],
      ["workpool_max_parallelism", "GAUGE"],
      ["workpool_operator_max_parallelism", "GAUGE"],
      ["workpool_paused", "GAUGE"],
      ["workpool_oldest_pending_seconds", "GAUGE"],
      ["workpool_last_minute_events", "GAUGE"],
      ["workpool_events_total", "COUNTER"],
    ]);
    for (const f of families) expect(f.help, f.name).toMatch(/^[A-Z1].{10,}\.$/);
    expect(families.find((f) => f.name === "workpool_last_minute_events")?.help).toContain(
      "the current second and the 59 before it",
    );
    expect(samplesByFamily(families)).toEqual(expectedSamples(stats));

    // The state the jobs above put the pools in, so the comparison is of figures that moved.
    expect(stats.scrapePool).toMatchObject({ running: 2, pending: 4, maxParallelism: 2 });
    expect(stats.scrapePool.oldestPendingMs).toBeGreaterThan(0);
    expect(stats.scrapePool.lastMinute.started).toBe(2);
    expect(stats.emailPool).toMatchObject({ paused: true, running: 0, pending: 2 });
    expect(stats.emailPool.lastMinute.failed).toBe(1);
    expect(stats.emailPool.lastMinute.retried).toBeGreaterThanOrEqual(2);
    expect(stats.scrapePool.paused).toBe(false);
  });

  it("follows the pools: once every job is done, nothing is pending or running", async () => {
    const t = setup();
    await t.mutation(api.scrape.scrapeSite, { urls: ["https://a.example.com/"], ...sim });
    await runFor(10_000);
    const samples = samplesByFamily(parsePrometheus(await (await scrape(t)).text()));
    expect(samples.workpool_pending_jobs).toEqual({ emailPool: 0, scrapePool: 0, llmPool: 0 });
    expect(samples.workpool_running_jobs).toEqual({ emailPool: 0, scrapePool: 0, llmPool: 0 });
    expect(samples.workpool_oldest_pending_seconds).toEqual({
      emailPool: 0,
      scrapePool: 0,
      llmPool: 0,
    });
    // The fetch and the mutation job that stored its page finished within the last minute.
    expect(samples.workpool_last_minute_events["scrapePool,succeeded"]).toBe(2);
  });
});

describe("admin functions", () => {
  it("find a failed job (listJobs), read why (jobInfo), retry it (retryJob) and see it succeed", async () => {
    const t = setup();
    const seed = 7;
    const failRate = 0.5;
    const flaky = urlFailingOnce("flaky.example", seed, failRate);
    const fine = urlSucceeding("fine.example", seed, failRate);
    const [failedId, fineId] = await t.mutation(api.scrape.scrapeSite, {
      urls: [flaky, fine],
      ms: 100,
      failRate,
      seed,
    });
    await runFor(2000);

    const failed = await listJobs(t, { pool: "scrapePool", outcome: "failed" });
    expect(failed.isDone).toBe(true);
    expect(failed.page.map((job) => job.id)).toEqual([failedId]);
    expect(failed.page[0]).toMatchObject({
      state: "finished",
      key: "flaky.example",
      result: { kind: "failed", error: `HTTP 503 from ${flaky}` },
    });
    const why = await asAdmin(t).query(api.admin.jobInfo, { pool: "scrapePool", id: failedId });
    expect(why?.result).toEqual({ kind: "failed", error: `HTTP 503 from ${flaky}` });
    expect((await asAdmin(t).query(api.admin.stats, {})).scrapePool.lastMinute.failed).toBe(1);

    const retriedId = await asAdmin(t).mutation(api.admin.retryJob, {
      pool: "scrapePool",
      id: failedId,
    });
    expect(retriedId).not.toBe(failedId);
    const pending = await listJobs(t, { pool: "scrapePool", state: "pending" });
    expect(pending.page.map((job) => job.id)).toEqual([retriedId]);
    await runFor(2000);

    const retried = await asAdmin(t).query(api.admin.jobInfo, {
      pool: "scrapePool",
      id: retriedId,
    });
    expect(retried).toMatchObject({
      state: "finished",
      key: "flaky.example",
      result: { kind: "success", returnValue: { url: flaky } },
    });
    // The failed job stays failed (and keeps its one onComplete); the new one succeeded.
    expect(
      (await asAdmin(t).query(api.admin.jobInfo, { pool: "scrapePool", id: failedId }))?.result,
    ).toEqual({ kind: "failed", error: `HTTP 503 from ${flaky}` });
    const succeeded = await listJobs(t, {
      pool: "scrapePool",
      outcome: "success",
      key: "flaky.example",
    });
    expect(succeeded.page.map((job) => job.id)).toEqual([retriedId]);
    expect(
      (await listJobs(t, { pool: "scrapePool", outcome: "success", key: "fine.example" })).page.map(
        (job) => job.id,
      ),
    ).toEqual([fineId]);
    const pages = await t.run(async (ctx) => ctx.db.query("pages").collect());
    expect(pages.map((page) => page.url).sort()).toEqual([fine, flaky].sort());
    // The pool recovered: nothing waits or runs, and no job failed since the retry.
    const { scrapePool } = await asAdmin(t).query(api.admin.stats, {});
    expect(scrapePool).toMatchObject({ pending: 0, running: 0, oldestPendingMs: 0 });
    // Succeeded: both fetches and the two mutation jobs that stored their pages.
    expect(scrapePool.lastMinute).toMatchObject({ failed: 1, succeeded: 4 });

    await expect(
      asAdmin(t).mutation(api.admin.retryJob, { pool: "scrapePool", id: retriedId }),
    ).rejects.toThrow(/invalid id: only a job that failed or was canceled can be retried/);
  });

  it("pause holds a pool's jobs, as stats and listJobs show, until resume", async () => {
    const t = setup();
    await asAdmin(t).mutation(api.admin.pause, { pool: "emailPool" });
    const [id] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "held", to: "ada@example.com" }],
      ...sim,
    });
    await runFor(2000);
    expect((await asAdmin(t).query(api.admin.jobInfo, { pool: "emailPool", id }))?.state).toBe(
      "pending",
    );
    const paused = (await asAdmin(t).query(api.admin.stats, {})).emailPool;
    expect(paused).toMatchObject({ paused: true, pending: 1, running: 0 });
    expect(paused.oldestPendingMs).toBeGreaterThanOrEqual(1900);
    const waiting = await listJobs(t, { pool: "emailPool", state: "pending" });
    expect(waiting.page.map((job) => job.id)).toEqual([id]);

    await asAdmin(t).mutation(api.admin.resume, { pool: "emailPool" });
    await runFor(2000);
    expect(
      (await asAdmin(t).query(api.admin.jobInfo, { pool: "emailPool", id }))?.result?.kind,
    ).toBe("success");
    expect((await asAdmin(t).query(api.admin.stats, {})).emailPool).toMatchObject({
      paused: false,
      pending: 0,
      running: 0,
    });
  });

  it("pause with a key holds that key's jobs (keyStatus shows it) while other keys run", async () => {
    const t = setup();
    await asAdmin(t).mutation(api.admin.pause, { pool: "scrapePool", key: "a.example" });
    const [held, other] = await t.mutation(api.scrape.scrapeSite, {
      urls: ["https://a.example/p0", "https://b.example/p0"],
      ...sim,
    });
    await runFor(2000);
    const keyStatus = (key: string) =>
      asAdmin(t).query(api.admin.keyStatus, { pool: "scrapePool", key });
    expect(await keyStatus("a.example")).toMatchObject({ pending: 1, paused: true });
    expect(await keyStatus("b.example")).toMatchObject({ succeeded: 1, paused: false });
    const waiting = await listJobs(t, { pool: "scrapePool", key: "a.example", state: "pending" });
    expect(waiting.page.map((job) => job.id)).toEqual([held]);
    expect(
      (await asAdmin(t).query(api.admin.jobInfo, { pool: "scrapePool", id: other }))?.state,
    ).toBe("finished");

    await asAdmin(t).mutation(api.admin.resume, { pool: "scrapePool", key: "a.example" });
    await runFor(2000);
    expect(await keyStatus("a.example")).toMatchObject({ pending: 0, succeeded: 1, paused: false });
  });

  it("pages through a pool's jobs as usePaginatedQuery does, newest enqueued first", async () => {
    const t = setup();
    const urls = ["a", "b", "c", "d", "e"].map((h) => `https://${h}.example.com/`);
    await t.mutation(api.scrape.scrapeSite, { urls, ...sim });
    await runFor(3000);
    const seen: Array<{ id: string; enqueuedAt: number }> = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const result: FunctionReturnType<typeof api.admin.listJobs> = await asAdmin(t).query(
        api.admin.listJobs,
        {
          pool: "scrapePool",
          paginationOpts: { numItems: 3, cursor },
        },
      );
      expect(result.page.length).toBeLessThanOrEqual(3);
      seen.push(...result.page);
      if (result.isDone) break;
      cursor = result.continueCursor;
    }
    // Five fetches and the five mutation jobs that stored their pages, each once.
    const tracked = await t.run(async (ctx) => ctx.db.query("jobs").collect());
    expect(seen.map((job) => job.id).sort()).toEqual(tracked.map((job) => job.workId).sort());
    expect(seen).toHaveLength(10);
    const enqueuedAt = seen.map((job) => job.enqueuedAt);
    expect(enqueuedAt).toEqual([...enqueuedAt].sort((a, b) => b - a));
  });

  it("rejects an outcome filter with a state other than finished, naming state", async () => {
    const t = setup();
    await expect(
      listJobs(t, { pool: "emailPool", state: "pending", outcome: "failed" }),
    ).rejects.toThrow(/invalid state/);
  });
});
