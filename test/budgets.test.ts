/**
 * Size budgets: every stored string a user controls is capped, and every batch a loop pass or a
 * delivery reads stops on bytes as well as rows, so no input can push a pool transaction past
 * Convex's limits (16 MiB read per transaction, 1 MiB per document). Driven end to end through the
 * test app's client calls on a virtual clock (helpers.ts), with convex-test's transaction limits on.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import { SEGMENT_MS } from "../src/component/model/segments.js";
import { capErrorMessage, MAX_ERROR_MESSAGE_BYTES } from "../src/component/model/errors.js";
import { valueSizeBytes } from "../src/component/model/valueMeasure.js";
import { completions, enqueue, info, runFor, runUntil, setup } from "./helpers.js";
import { count, scaled } from "./scale.js";

/** Jobs one mutation enqueues, due a second apart (the review's 1,200 at full scale; 400 is
 * already four times the 100 schedules an old-style enqueue would have used). */
const REMINDERS = scaled(400, 1_200);
/** Jobs due 50 ms apart. */
const SPREAD = scaled(100, 300);

/** The virtual clock's start (virtualClock.ts): where `runAfter` counts from. */
const START = new Date("2026-01-01T00:00:00Z").getTime();

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe("error messages", () => {
  it("are cut to 8 KiB, keeping the start and saying how much was cut", () => {
    const long = "HTTP 502: " + "<html>".repeat(50_000);
    const cut = capErrorMessage(long);
    expect(bytes(cut)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(cut.startsWith("HTTP 502: <html>")).toBe(true);
    const [, cutBytes, total] = cut.match(/\[workpool: (\d+) of (\d+) bytes cut\]$/)!;
    expect(Number(total)).toBe(bytes(long));
    expect(bytes(cut.slice(0, cut.lastIndexOf(" … [workpool:"))) + Number(cutBytes)).toBe(
      bytes(long),
    );
    expect(capErrorMessage("short")).toBe("short");
  });

  it("are cut on a character boundary", () => {
    const cut = capErrorMessage("é".repeat(10_000));
    expect(cut).not.toContain("\uFFFD");
    expect(bytes(cut)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
  });

  it("of 300 KB from 40 failing jobs stop nothing: every onComplete arrives, and later jobs run", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const failing = Array.from({ length: 40 }, (_, i) => ({
      key: `big${i}`,
      failTimes: 1,
      errorBytes: 300_000,
    }));
    const ids = await enqueue(t, "action", failing, { poolOptions: { maxParallelism: 50 } });
    await runUntil(t, async () => (await completions(t)).length === 40, 30_000);
    const done = await completions(t);
    expect(new Set(done.map((c) => c.workId))).toEqual(new Set(ids));
    for (const { result } of done) {
      expect(result.kind).toBe("failed");
      expect(result.error).toMatch(
        /^job big\d+ failed attempt 1\.+ … \[workpool: \d+ of 300000 bytes cut\]$/,
      );
      expect(bytes(result.error)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    }
    const kept = await info(t, ids[0]);
    expect(bytes(kept.result.error)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(valueSizeBytes(kept)).toBeLessThan(2 * MAX_ERROR_MESSAGE_BYTES);
    const [later] = await enqueue(t, "action", [{ key: "later", value: 1 }]);
    await runUntil(t, async () => (await completions(t)).some((c) => c.workId === later));
  });
});

describe("scheduled functions per transaction", () => {
  /** Counts the functions scheduled while `run` runs (convex-test runs one transaction at a time). */
  async function schedulesDuring(run: () => Promise<unknown>): Promise<number> {
    let count = 0;
    const convex = (globalThis as any).Convex;
    const real = Object.getOwnPropertyDescriptor(convex, "asyncSyscall")!.get!;
    const spy = vi.spyOn(convex, "asyncSyscall", "get").mockImplementation(() => {
      const asyncSyscall = real.call(convex);
      return async (op: string, args: string) => {
        if (op === "1.0/schedule") count++;
        return await asyncSyscall(op, args);
      };
    });
    try {
      await run();
    } finally {
      spy.mockRestore();
    }
    return count;
  }

  const reminders = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `r${i}` }));

  it(`one mutation enqueueing ${count(REMINDERS)} jobs due a second apart schedules at most 100 functions`, async () => {
    const t = setup();
    let ids: string[] = [];
    const scheduled = await schedulesDuring(async () => {
      ids = await t.mutation(anyApi.pool.enqueue, {
        kind: "mutation",
        argsList: reminders(REMINDERS),
        spreadMs: 1_000,
      });
    });
    expect(ids).toHaveLength(REMINDERS);
    expect(scheduled).toBeLessThanOrEqual(100);
    // The first reminders start on time: never early, at most two segments late.
    await runFor(t, 10_500, 100);
    for (let i = 0; i <= 10; i++) {
      const [started] = probe.starts.get(`r${i}`)!;
      expect(started - START).toBeGreaterThanOrEqual(i * 1_000);
      expect(started - START).toBeLessThanOrEqual(i * 1_000 + 2 * SEGMENT_MS);
    }
    expect(probe.starts.has("r11")).toBe(false);
  });

  it(`${count(SPREAD)} jobs due 50 ms apart start in due order, each on time, each reported once`, async () => {
    const t = setup();
    await t.mutation(anyApi.pool.enqueue, {
      kind: "mutation",
      argsList: reminders(SPREAD),
      spreadMs: 50,
      onComplete: "onComplete",
    });
    await runFor(t, SPREAD * 50 + 500, 50);
    expect(await completions(t)).toHaveLength(SPREAD);
    const starts = Array.from({ length: SPREAD }, (_, i) => probe.starts.get(`r${i}`)![0] - START);
    starts.forEach((at, i) => {
      expect(at).toBeGreaterThanOrEqual(i * 50);
      expect(at).toBeLessThanOrEqual(i * 50 + 2 * SEGMENT_MS);
    });
  });
});
