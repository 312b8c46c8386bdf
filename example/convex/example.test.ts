// Tests of the example app, run on convex-test with the app's pools registered and a virtual clock.
/// <reference types="vite/client" />
import type { GenericDataModel, GenericMutationCtx } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { asAdmin, runFor, setup, useExampleApp, type T } from "./test.setup.js";
import apiSource from "./_generated/api.ts?raw";
import { api } from "./_generated/api.js";
import { attemptFails } from "./sim.js";

useExampleApp();

/**
 * A pool's maxParallelism as stored in its component's config table, read with convex-test's
 * `runInComponent` (it exists at run time but is not in convex-test's types).
 */
async function storedMaxParallelism(t: T, pool: string): Promise<number | undefined> {
  const withComponents = t as unknown as {
    runInComponent<R>(
      name: string,
      fn: (ctx: GenericMutationCtx<GenericDataModel>) => Promise<R>,
    ): Promise<R>;
  };
  return await withComponents.runInComponent(pool, async (ctx) => {
    const row = await ctx.db.query("config").first();
    return row?.maxParallelism as number | undefined;
  });
}

const sim = { ms: 100, failRate: 0, seed: 7 };

async function attemptsOf(t: T, key: string) {
  return await t.run(async (ctx) =>
    ctx.db
      .query("attempts")
      .withIndex("by_key", (q) => q.eq("key", key))
      .collect(),
  );
}

/** The most attempts (of keys matching `prefix`) that were running at the same moment. */
async function maxConcurrency(t: T, prefix: string, since = 0) {
  const rows = (await t.run(async (ctx) => ctx.db.query("attempts").collect())).filter(
    (row) => row.key.startsWith(prefix) && (row.endedAt ?? Infinity) > since,
  );
  const events = rows.flatMap((row) => [
    { at: Math.max(row.startedAt, since), d: 1 },
    { at: row.endedAt ?? Infinity, d: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  let running = 0;
  let max = 0;
  for (const e of events) max = Math.max(max, (running += e.d));
  return max;
}

/** A key whose first attempt fails and second succeeds under `seed` at `failRate`. */
function keyFailingOnce(seed: number, failRate: number) {
  for (let i = 0; ; i++) {
    const key = `retry-${i}`;
    if (attemptFails(seed, key, 1, failRate) && !attemptFails(seed, key, 2, failRate)) return key;
  }
}

describe("example app: emailPool (retries on)", () => {
  it("records a retried email's success in the outcomes table", async () => {
    const t = setup();
    const key = keyFailingOnce(3, 0.5);
    const [workId] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key, to: "ada@example.com" }],
      ms: 100,
      failRate: 0.5,
      seed: 3,
    });
    await runFor(3000);
    const attempts = await attemptsOf(t, key);
    expect(attempts.map((a) => [a.attempt, a.error !== undefined])).toEqual([
      [1, true],
      [2, false],
    ]);
    const { status, outcome } = await asAdmin(t).query(api.jobs.status, {
      pool: "emailPool",
      workId,
    });
    expect(status.state).toBe("finished");
    expect(outcome).toMatchObject({
      pool: "emailPool",
      key,
      kind: "success",
      returnValue: { messageId: `${key}@attempt-2` },
    });
    const outcomes = await asAdmin(t).query(api.jobs.listOutcomes, { pool: "emailPool" });
    expect(outcomes).toHaveLength(1);
  });

  it("gives up on an email after the default 5 attempts and records the failure", async () => {
    const t = setup();
    const [workId] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "doomed", to: "bob@example.com" }],
      ...sim,
      failRate: 1,
    });
    await runFor(10_000);
    expect(await attemptsOf(t, "doomed")).toHaveLength(5);
    const { outcome } = await asAdmin(t).query(api.jobs.status, { pool: "emailPool", workId });
    expect(outcome?.kind).toBe("failed");
    expect(outcome?.error).toContain("attempt 5");
  });

  it("does not retry a bounced address (NonRetryableError)", async () => {
    const t = setup();
    const [workId] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "bounce", to: "not-an-address" }],
      ...sim,
    });
    await runFor(3000);
    expect(await attemptsOf(t, "bounce")).toHaveLength(1);
    const { outcome } = await asAdmin(t).query(api.jobs.status, { pool: "emailPool", workId });
    expect(outcome).toMatchObject({ kind: "failed" });
    expect(outcome?.error).toContain("bounced");
  });
});

describe("example app: scrapePool (maxParallelism 2, no retries)", () => {
  it("runs at most 2 fetches at once and stores each page with a mutation job", async () => {
    const t = setup();
    // Six hosts: pages of one host are fetched one at a time (see the keys tests below).
    const urls = ["a", "b", "c", "d", "e", "f"].map((h) => `https://${h}.example.com/index`);
    await t.mutation(api.scrape.scrapeSite, { urls, ...sim });
    await runFor(2000);
    expect(await maxConcurrency(t, "fetch:")).toBe(2);
    const pages = await t.run(async (ctx) => ctx.db.query("pages").collect());
    expect(pages.map((p) => p.url).sort()).toEqual(urls);
    const outcomes = await asAdmin(t).query(api.jobs.listOutcomes, { pool: "scrapePool" });
    expect(outcomes.filter((o) => o.key.startsWith("fetch:") && o.kind === "success")).toHaveLength(
      6,
    );
    expect(outcomes.filter((o) => o.key.startsWith("store:") && o.kind === "success")).toHaveLength(
      6,
    );
  });

  it("records a failed fetch once, without retrying it or storing a page", async () => {
    const t = setup();
    const [workId] = await t.mutation(api.scrape.scrapeSite, {
      urls: ["https://example.com/down"],
      ...sim,
      failRate: 1,
    });
    await runFor(2000);
    expect(await attemptsOf(t, "fetch:https://example.com/down")).toHaveLength(1);
    const { outcome } = await asAdmin(t).query(api.jobs.status, { pool: "scrapePool", workId });
    expect(outcome).toMatchObject({
      kind: "failed",
      error: "HTTP 503 from https://example.com/down",
    });
    expect(await t.run(async (ctx) => ctx.db.query("pages").collect())).toEqual([]);
  });
});

describe("example app: status, cancel and run-time config", () => {
  it("status follows a job from pending to running to finished", async () => {
    const t = setup();
    const urls = ["one", "two", "three"].map((h) => `https://${h}.example.com/`);
    const ids = await t.mutation(api.scrape.scrapeSite, { urls, ...sim, ms: 500 });
    await runFor(200);
    const third = () => asAdmin(t).query(api.jobs.status, { pool: "scrapePool", workId: ids[2] });
    expect((await third()).status).toEqual({ state: "pending", previousAttempts: 0 });
    expect((await third()).outcome).toBeNull();
    await runFor(600);
    expect((await third()).status).toEqual({ state: "running", previousAttempts: 0 });
    await runFor(1500);
    const done = await third();
    expect(done.status.state).toBe("finished");
    expect(done.outcome?.kind).toBe("success");
  });

  it("cancels a pending job: it never runs and its outcome is recorded as canceled", async () => {
    const t = setup();
    const urls = ["x", "y", "z"].map((p) => `https://example.com/${p}`);
    const ids = await t.mutation(api.scrape.scrapeSite, { urls, ...sim, ms: 500 });
    await runFor(100);
    await asAdmin(t).mutation(api.jobs.cancel, { pool: "scrapePool", workId: ids[2] });
    await runFor(2000);
    const { status, outcome } = await asAdmin(t).query(api.jobs.status, {
      pool: "scrapePool",
      workId: ids[2],
    });
    expect(status.state).toBe("finished");
    expect(outcome?.kind).toBe("canceled");
    expect(await attemptsOf(t, "fetch:https://example.com/z")).toEqual([]);
    const pages = await t.run(async (ctx) => ctx.db.query("pages").collect());
    expect(pages.map((p) => p.url).sort()).toEqual(urls.slice(0, 2));
  });

  it("raises scrapePool's parallelism at run time, until its client writes 2 back", async () => {
    const t = setup();
    // scrapePool's stored config (convex-test's runInComponent, untyped, reads a component's tables).
    const config = () => storedMaxParallelism(t, "scrapePool");
    const urls = Array.from({ length: 10 }, (_, i) => `https://site${i}.example.com/`);
    await t.mutation(api.scrape.scrapeSite, { urls, ...sim, ms: 1000 });
    await runFor(500);
    expect(await maxConcurrency(t, "fetch:")).toBe(2);
    await asAdmin(t).mutation(api.jobs.setMaxParallelism, {
      pool: "scrapePool",
      maxParallelism: 4,
    });
    expect(await config()).toBe(4);
    const changedAt = Date.now();
    await runFor(1000);
    expect(await maxConcurrency(t, "fetch:", changedAt)).toBe(4);
    // The scrapePool client is built with maxParallelism: 2 and writes it to the config on every
    // enqueue and cancel through it, here the store jobs onComplete enqueued after the first fetches.
    expect(await config()).toBe(2);
  });

  it("pauses emailPool with maxParallelism 0 and resumes it", async () => {
    const t = setup();
    await asAdmin(t).mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: 0 });
    const [workId] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "paused", to: "cy@example.com" }],
      ...sim,
    });
    await runFor(2000);
    expect(await attemptsOf(t, "paused")).toEqual([]);
    expect(
      (await asAdmin(t).query(api.jobs.status, { pool: "emailPool", workId })).status.state,
    ).toBe("pending");
    await asAdmin(t).mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: 3 });
    await runFor(1000);
    expect(
      (await asAdmin(t).query(api.jobs.status, { pool: "emailPool", workId })).outcome?.kind,
    ).toBe("success");
  });

  it("rejects a negative maxParallelism", async () => {
    const t = setup();
    await expect(
      asAdmin(t).mutation(api.jobs.setMaxParallelism, { pool: "scrapePool", maxParallelism: -1 }),
    ).rejects.toThrow(/maxParallelism/);
  });
});

describe("example app: keys (scrapePool by host, emailPool by poolKey)", () => {
  /** The attempts of jobs whose app key starts with `prefix`, in the order they started. */
  async function attemptsInStartOrder(t: T, prefix: string) {
    const rows = await t.run(async (ctx) => ctx.db.query("attempts").collect());
    return rows
      .filter((row) => row.key.startsWith(prefix))
      .sort((a, b) => a.startedAt - b.startedAt || a.attempt - b.attempt);
  }

  /** True when each attempt starts at or after the previous one ended: one at a time. */
  function oneAtATime(rows: Array<{ startedAt: number; endedAt?: number }>) {
    return rows.every((row, i) => i === 0 || row.startedAt >= (rows[i - 1].endedAt ?? Infinity));
  }

  const progress = (t: T, pool: "emailPool" | "scrapePool", key: string) =>
    asAdmin(t).query(api.jobs.keyProgress, { pool, key });

  const pagesOf = (host: string, n: number) =>
    Array.from({ length: n }, (_, p) => `https://${host}/p${p}`);
  const hosts = ["a.example", "b.example", "c.example"];
  /** Four pages of each host, a host's pages one after another (without keys, the pool's 2 slots
   * would fetch a/p0 and a/p1 together). */
  const byHost = hosts.flatMap((host) => pagesOf(host, 4));

  it("fetches one page of a host at a time, in the order asked for, while hosts overlap", async () => {
    const t = setup();
    await t.mutation(api.scrape.scrapeSite, { urls: byHost, ...sim });
    await runFor(5000);
    for (const host of hosts) {
      const rows = await attemptsInStartOrder(t, `fetch:https://${host}/`);
      expect(rows.map((row) => row.key)).toEqual(pagesOf(host, 4).map((url) => `fetch:${url}`));
      expect(oneAtATime(rows)).toBe(true);
    }
    expect(await maxConcurrency(t, "fetch:")).toBe(2);
    const pages = await t.run(async (ctx) => ctx.db.query("pages").collect());
    expect(pages.map((p) => p.url).sort()).toEqual([...byHost].sort());
  });

  it("keyProgress counts a host's pages as they wait, run and finish, as the outcomes table does", async () => {
    const t = setup();
    const seed = 7;
    const failRate = 0.5;
    const urls = pagesOf("a.example", 6);
    const failing = urls.filter((url) => attemptFails(seed, `fetch:${url}`, 1, failRate));
    expect(failing.length, "the seed fails some pages, not all").toBeGreaterThan(0);
    expect(failing.length).toBeLessThan(urls.length);
    await t.mutation(api.scrape.scrapeSite, {
      urls: [...urls, "https://b.example/p0"],
      ms: 500,
      failRate,
      seed,
    });
    // The share in force (weight, reserve, rate limit): the defaults, as no host has its own.
    const share = { weight: 1, reserve: 0, rateLimit: null };
    const idle = { running: 0, succeeded: 0, failed: 0, canceled: 0, paused: false, ...share };
    expect(await progress(t, "scrapePool", "a.example")).toEqual({
      ...idle,
      pending: 6,
      parallelism: 1,
    });
    await runFor(200);
    expect(await progress(t, "scrapePool", "a.example")).toMatchObject({ pending: 5, running: 1 });
    await runFor(10_000);
    expect(await progress(t, "scrapePool", "a.example")).toEqual({
      ...idle,
      pending: 0,
      succeeded: urls.length - failing.length,
      failed: failing.length,
      parallelism: 1,
    });
    const outcomes = (await asAdmin(t).query(api.jobs.listOutcomes, { pool: "scrapePool" })).filter(
      (o) => o.key.startsWith("fetch:https://a.example/"),
    );
    expect(outcomes.filter((o) => o.kind === "success")).toHaveLength(urls.length - failing.length);
    expect(
      outcomes
        .filter((o) => o.kind === "failed")
        .map((o) => o.key)
        .sort(),
    ).toEqual(failing.map((url) => `fetch:${url}`).sort());
    const b = await progress(t, "scrapePool", "b.example");
    expect(b.succeeded + b.failed).toBe(1);
    expect(await progress(t, "scrapePool", "never-used.example")).toEqual({
      ...idle,
      pending: 0,
      parallelism: 1,
    });
  });

  it("pauseKey lets a host's running fetch finish and holds the rest until resumeKey, while other hosts go on", async () => {
    const t = setup();
    const a = pagesOf("a.example", 3);
    const b = pagesOf("b.example", 3);
    await t.mutation(api.scrape.scrapeSite, { urls: [...a, ...b], ...sim, ms: 500 });
    await runFor(200);
    await asAdmin(t).mutation(api.jobs.pauseKey, { pool: "scrapePool", key: "a.example" });
    await runFor(3000);
    expect((await attemptsInStartOrder(t, "fetch:https://a.example/")).map((r) => r.key)).toEqual([
      `fetch:${a[0]}`,
    ]);
    expect(await attemptsInStartOrder(t, "fetch:https://b.example/")).toHaveLength(3);
    expect(await progress(t, "scrapePool", "a.example")).toMatchObject({
      pending: 2,
      running: 0,
      succeeded: 1,
      paused: true,
    });
    await asAdmin(t).mutation(api.jobs.resumeKey, { pool: "scrapePool", key: "a.example" });
    await runFor(3000);
    const rows = await attemptsInStartOrder(t, "fetch:https://a.example/");
    expect(rows.map((row) => row.key)).toEqual(a.map((url) => `fetch:${url}`));
    expect(oneAtATime(rows)).toBe(true);
    expect(await progress(t, "scrapePool", "a.example")).toMatchObject({
      pending: 0,
      succeeded: 3,
      paused: false,
    });
  });

  it("cancelKey cancels a host's waiting fetches, lets its running one finish, and leaves other hosts alone", async () => {
    const t = setup();
    const a = pagesOf("a.example", 4);
    const b = pagesOf("b.example", 2);
    await t.mutation(api.scrape.scrapeSite, { urls: [...a, ...b], ...sim, ms: 500 });
    await runFor(200);
    await asAdmin(t).mutation(api.jobs.cancelKey, { pool: "scrapePool", key: "a.example" });
    await runFor(3000);
    expect((await attemptsInStartOrder(t, "fetch:https://a.example/")).map((r) => r.key)).toEqual([
      `fetch:${a[0]}`,
    ]);
    expect(await progress(t, "scrapePool", "a.example")).toMatchObject({
      pending: 0,
      running: 0,
      succeeded: 1,
      canceled: 3,
    });
    expect(await progress(t, "scrapePool", "b.example")).toMatchObject({
      pending: 0,
      succeeded: 2,
      canceled: 0,
    });
    const pages = await t.run(async (ctx) => ctx.db.query("pages").collect());
    expect(pages.map((p) => p.url).sort()).toEqual([a[0], ...b].sort());
  });

  it("setKeyParallelism lets one host take 2 fetches at once, and null returns it to 1", async () => {
    const t = setup();
    await asAdmin(t).mutation(api.jobs.setKeyParallelism, {
      pool: "scrapePool",
      key: "a.example",
      parallelism: 2,
    });
    await t.mutation(api.scrape.scrapeSite, { urls: pagesOf("a.example", 4), ...sim });
    expect((await progress(t, "scrapePool", "a.example")).parallelism).toBe(2);
    await runFor(2000);
    expect(await maxConcurrency(t, "fetch:https://a.example/")).toBe(2);
    await asAdmin(t).mutation(api.jobs.setKeyParallelism, {
      pool: "scrapePool",
      key: "a.example",
      parallelism: null,
    });
    expect((await progress(t, "scrapePool", "a.example")).parallelism).toBe(1);
  });

  it("rejects a url without a host, naming it, and enqueues none of the batch", async () => {
    const t = setup();
    await expect(
      t.mutation(api.scrape.scrapeSite, { urls: ["https://a.example/p0", "mailto:x@y.z"], ...sim }),
    ).rejects.toThrow(/not an absolute url with a host: "mailto:x@y.z"/);
    expect(await progress(t, "scrapePool", "a.example")).toMatchObject({ pending: 0 });
  });

  it("sends emails sharing a poolKey one at a time, in order, a retry keeping its place", async () => {
    const t = setup();
    const seed = 3;
    const failRate = 0.5;
    /** `n` email keys with `prefix` whose first attempt succeeds. */
    const succeedingKeys = (prefix: string, n: number) =>
      Array.from({ length: 100 }, (_, i) => `${prefix}${i}`)
        .filter((key) => !attemptFails(seed, key, 1, failRate))
        .slice(0, n);
    // ada's first email fails once and is retried; her second and third must wait for it.
    const ada = [keyFailingOnce(seed, failRate), ...succeedingKeys("ada-", 2)];
    const bob = succeedingKeys("bob-", 3);
    const unkeyed = succeedingKeys("solo-", 2);
    await t.mutation(api.emails.sendEmails, {
      emails: [
        ...ada.map((key) => ({ key, to: "ada@example.com", poolKey: "ada" })),
        ...bob.map((key) => ({ key, to: "bob@example.com", poolKey: "bob" })),
        ...unkeyed.map((key) => ({ key, to: "cy@example.com" })),
      ],
      ms: 100,
      failRate,
      seed,
    });
    await runFor(5000);
    const rows = await t.run(async (ctx) => ctx.db.query("attempts").collect());
    const inStartOrder = (keys: string[]) =>
      rows
        .filter((row) => keys.includes(row.key))
        .sort((x, y) => x.startedAt - y.startedAt || x.attempt - y.attempt);
    expect(inStartOrder(ada).map((row) => row.key)).toEqual([ada[0], ada[0], ada[1], ada[2]]);
    expect(oneAtATime(inStartOrder(ada))).toBe(true);
    expect(inStartOrder(bob).map((row) => row.key)).toEqual(bob);
    expect(oneAtATime(inStartOrder(bob))).toBe(true);
    // ada's and bob's queues and the two unkeyed emails all ran at once at first.
    expect(await maxConcurrency(t, "")).toBe(4);
    expect(await progress(t, "emailPool", "ada")).toMatchObject({
      pending: 0,
      running: 0,
      succeeded: 3,
      failed: 0,
      parallelism: 1,
    });
    const jobRows = await t.run(async (ctx) => ctx.db.query("jobs").collect());
    expect(jobRows.filter((j) => j.poolKey === "ada").map((j) => j.key)).toEqual(ada);
    expect(jobRows.filter((j) => j.poolKey === undefined).map((j) => j.key)).toEqual(unkeyed);
  });
});

describe("example app: the clock patterns of convex-test's docs", () => {
  /** Every console line the pools print. */
  function poolLines() {
    const lines: string[] = [];
    for (const level of ["debug", "info", "warn", "error"] as const) {
      vi.spyOn(console, level).mockImplementation((line: unknown) => {
        if (String(line).includes('"component":"workpool"')) lines.push(String(line));
      });
    }
    return lines;
  }

  const emails = Array.from({ length: 20 }, (_, i) => ({ key: `p${i}`, to: `p${i}@example.com` }));

  it("finishAllScheduledFunctions(vi.runAllTimers) runs every job, retries included, silently", async () => {
    const t = setup();
    const lines = poolLines();
    await t.mutation(api.emails.sendEmails, { emails, ms: 1000, failRate: 0.3, seed: 5 });
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    const outcomes = await asAdmin(t).query(api.jobs.listOutcomes, { pool: "emailPool" });
    expect(outcomes.map((o) => o.key).sort()).toEqual(emails.map((e) => e.key).sort());
    const attempts = await t.run(async (ctx) => await ctx.db.query("attempts").collect());
    expect(attempts.some((a) => a.attempt > 1)).toBe(true);
    expect(lines).toEqual([]);
  });

  it("one vi.advanceTimersByTimeAsync step runs every job, retries included, silently", async () => {
    const t = setup();
    const lines = poolLines();
    await t.mutation(api.emails.sendEmails, { emails, ms: 1000, failRate: 0.3, seed: 5 });
    await vi.advanceTimersByTimeAsync(120_000);
    const outcomes = await asAdmin(t).query(api.jobs.listOutcomes, { pool: "emailPool" });
    expect(outcomes.map((o) => o.key).sort()).toEqual(emails.map((e) => e.key).sort());
    const attempts = await t.run(async (ctx) => await ctx.db.query("attempts").collect());
    expect(attempts.some((a) => a.attempt > 1)).toBe(true);
    expect(lines).toEqual([]);
  });
});

describe("example app: hand-written _generated/api.ts", () => {
  it("lists exactly the modules `npx convex codegen` would find in example/convex", () => {
    // convex's entry point rules: .ts files outside _generated, except schema.ts and names with more
    // than one dot (convex.config.ts, *.test.ts).
    const onDisk = Object.keys(import.meta.glob("./**/*.ts"))
      .map((path) => path.replace(/^\.\//, "").replace(/\.ts$/, ""))
      .filter((path) => !path.startsWith("_generated/") && path !== "schema" && !path.includes("."))
      .sort();
    const imported = [...apiSource.matchAll(/^import type \* as (\w+) from "\.\.\/(.+)\.js";$/gm)];
    const listed = [...apiSource.matchAll(/^ {2}"?([\w/]+)"?: typeof (\w+);$/gm)].map((m) => m[1]);
    expect(imported.map((m) => m[2]).sort()).toEqual(onDisk);
    expect(listed.sort()).toEqual(onDisk);
    expect(onDisk).toContain("emails");
  });
});
