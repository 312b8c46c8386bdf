/**
 * Rate limit (section 5 of the API extensions): at most `starts` attempts start in any interval of
 * `periodMs`, retries included, across loop restarts; the loop sleeps until the next start is
 * allowed. (The sustained rate, at least 90 % of the limit, is measured by `npm run bench`.)
 */
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import {
  busiestWindow,
  completions,
  enqueue,
  inComponent,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

/** The time of every attempt's start as the pool made it (its DEBUG "started" lines, logged by
 * the pass that starts the attempt): what the limit counts. The function itself begins when the
 * scheduler runs it, a little later. */
function listenForStarts(): number[] {
  const starts: number[] = [];
  vi.spyOn(console, "debug").mockImplementation((line: string) => {
    if (JSON.parse(line).event === "started") starts.push(Date.now());
  });
  vi.spyOn(console, "info").mockImplementation(() => {});
  return starts;
}

/** Loop passes, from the pass lines the loop logs at DEBUG. */
function countPasses(): { at: number[] } {
  const passes = { at: [] as number[] };
  vi.spyOn(console, "debug").mockImplementation((line: string) => {
    if (JSON.parse(line).event === "pass") passes.at.push(Date.now());
  });
  vi.spyOn(console, "info").mockImplementation(() => {});
  return passes;
}

describe("rate limit", () => {
  it("never starts more than `starts` attempts in any window, retries included", async () => {
    const t = setup();
    const starts = listenForStarts();
    const rateLimit = { starts: 5, periodMs: 1000 };
    const jobs = Array.from({ length: 30 }, (_, i) => ({
      key: `j${i}`,
      ms: 20,
      failTimes: i % 3 === 0 ? 1 : 0,
    }));
    await enqueue(t, "action", jobs, {
      batch: true,
      poolOptions: { maxParallelism: 50, rateLimit, logLevel: "DEBUG" },
      options: { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2 } },
    });
    await runUntil(t, async () => (await completions(t)).length === 30, 30_000);
    expect(starts).toHaveLength(40); // 30 first attempts and 10 retries
    expect(busiestWindow(starts, rateLimit.periodMs)).toBe(rateLimit.starts);
    // Not slower than the limit requires: 40 starts need 7 full windows after the first.
    expect(starts[starts.length - 1] - starts[0]).toBeLessThan(8 * rateLimit.periodMs);
  });

  it("keeps a period shorter than a segment, waking when its window frees", async () => {
    const t = setup();
    const starts = listenForStarts();
    const rateLimit = { starts: 3, periodMs: 150 };
    const jobs = Array.from({ length: 60 }, (_, i) => ({ key: `j${i}` }));
    await enqueue(t, "mutation", jobs, {
      batch: true,
      poolOptions: { maxParallelism: 50, rateLimit, logLevel: "DEBUG" },
    });
    await runUntil(t, async () => (await completions(t)).length === 60, 30_000);
    expect(busiestWindow(starts, rateLimit.periodMs)).toBe(rateLimit.starts);
    // 60 starts need 19 full windows after the first; waking on 100 ms segments would take 38.
    expect(starts[starts.length - 1] - starts[0]).toBeLessThan(22 * rateLimit.periodMs);
  });

  it("sleeps until the next start is allowed: no pass in between", async () => {
    const t = setup();
    const passes = countPasses();
    await enqueue(t, "mutation", [{ key: "a" }, { key: "b" }, { key: "c" }], {
      poolOptions: {
        maxParallelism: 10,
        rateLimit: { starts: 2, periodMs: 10_000 },
        logLevel: "DEBUG",
      },
    });
    const start = Date.now();
    await runFor(t, 1000);
    expect(probe.attempts.size).toBe(2);
    const quietFrom = passes.at.length;
    await runFor(t, 8500, 100);
    // At most the one pass that checks on outstanding deliveries (deliver.ts); a loop that polled
    // for the window would have run dozens.
    expect(passes.at.length - quietFrom).toBeLessThanOrEqual(1);
    await runUntil(t, () => probe.attempts.size === 3, 2000);
    expect(probe.starts.get("c")![0] - start).toBeGreaterThanOrEqual(10_000);
  });

  it("waits for its window without rescanning the backlog", async () => {
    const t = setup();
    const passes: number[] = [];
    vi.spyOn(console, "debug").mockImplementation((line: string) => {
      const parsed = JSON.parse(line);
      if (parsed.event === "pass") passes.push(parsed.documentsRead);
    });
    vi.spyOn(console, "info").mockImplementation(() => {});
    const jobs = Array.from({ length: 400 }, (_, i) => ({ key: `j${i}` }));
    await enqueue(t, "mutation", jobs, {
      batch: true,
      poolOptions: { rateLimit: { starts: 20, periodMs: 2000 }, logLevel: "DEBUG" },
    });
    await runFor(t, 20_000, 100);
    expect(probe.attempts.size).toBeGreaterThanOrEqual(200);
    // Each wake starts 20 and finishes them: a few dozen reads, never a scan of the 400 waiting.
    expect(Math.max(...passes)).toBeLessThan(150);
  });

  it("holds across a loop restart: the starts of the window are stored", async () => {
    const t = setup();
    vi.spyOn(console, "error").mockImplementation(() => {});
    const starts = listenForStarts();
    const rateLimit = { starts: 3, periodMs: 120_000 };
    const jobs = Array.from({ length: 5 }, (_, i) => ({ key: `j${i}`, ms: 200 }));
    await enqueue(t, "action", jobs, {
      poolOptions: { maxParallelism: 10, rateLimit, logLevel: "DEBUG" },
    });
    await runUntil(t, () => probe.attempts.size === 3);
    // The pass that processes the first completion throws: the loop dies, and the watchdog
    // restarts it about a minute later, well inside the window.
    vi.spyOn(Math, "random").mockImplementationOnce(() => {
      throw new Error("injected fault in main");
    });
    await runFor(t, 100_000, 500);
    expect(probe.attempts.size).toBe(3);
    await runFor(t, 30_000, 500);
    expect(probe.attempts.size).toBe(5);
    expect(busiestWindow(starts, rateLimit.periodMs)).toBe(3);
  });

  it("takes effect when changed, and `null` removes it", async () => {
    const t = setup();
    const jobs = Array.from({ length: 6 }, (_, i) => ({ key: `j${i}` }));
    await enqueue(t, "mutation", jobs.slice(0, 3), {
      poolOptions: { rateLimit: { starts: 1, periodMs: 60_000 } },
    });
    await runFor(t, 2000);
    expect(probe.attempts.size).toBe(1);
    const stored = await inComponent(t, async (ctx) => await ctx.db.query("config").first());
    expect(stored.rateLimit).toEqual({ starts: 1, periodMs: 60_000 });
    // A pool without the option leaves the stored limit alone...
    await enqueue(t, "mutation", jobs.slice(3, 4));
    await runFor(t, 2000);
    expect(probe.attempts.size).toBe(1);
    // ... and `null` removes it: everything waiting starts.
    await enqueue(t, "mutation", jobs.slice(4), { poolOptions: { rateLimit: null } });
    await runFor(t, 2000);
    expect(probe.attempts.size).toBe(6);
  });
});
