/**
 * Fair share across keys (API-EXTENSIONS section 13): within a priority level, keys (and the jobs
 * without a key, as one more key of weight 1) take the free slots in turn, weighted; reserves are
 * served first and never hold a slot idle; a key's rate limit delays no other key; `fairness:
 * "due"` restores earlier-due-first; levels stay strict.
 */
import { anyApi } from "convex/server";
import { describe, expect, it, vi } from "vitest";
import { probe } from "./app/probe.js";
import {
  callPool,
  completions,
  enqueue,
  info,
  jobStates,
  keyStatus,
  runFor,
  runUntil,
  setup,
} from "./helpers.js";

/** Job labels of `group` (the pool key before ":") in the order their attempts started. */
function started(group: string): string[] {
  return probe.groupStarts.get(group) ?? [];
}

/** The pool keys of every first start, in start order (labels are "key:n"). */
function startKeys(): string[] {
  return [...probe.starts.entries()]
    .sort((a, b) => a[1][0] - b[1][0])
    .map(([label]) => label.split(":")[0]);
}

/** `n` jobs of `ms` labeled "key:i". */
function jobs(key: string, n: number, ms: number) {
  return Array.from({ length: n }, (_, i) => ({ key: `${key}:${i}`, ms }));
}

describe("fair share", () => {
  it("section 13's example: B's 10 jobs finish within 4 s of their enqueue, not after A's 1,000", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 10, keyParallelism: 10 };
    await enqueue(t, "action", jobs("A", 1000, 1000), {
      poolOptions,
      options: { key: "A" },
      batch: true,
    });
    await runFor(t, 1000);
    const ids = await enqueue(t, "action", jobs("B", 10, 1000), {
      poolOptions,
      options: { key: "B" },
      batch: true,
    });
    const enqueuedAt = Date.now();
    await runUntil(t, () => started("B").length === 10 && probe.groupRunning.get("B") === 0, 8000);
    for (const id of ids) {
      const job = await info(t, id);
      expect(job.finishedAt - enqueuedAt).toBeLessThanOrEqual(4000);
    }
    // A kept its turns too: it was not starved while B ran.
    expect(started("A").length).toBeGreaterThan(10);
  });

  it("splits 100 starts 3:1 between weights 3 and 1, within ±10 %", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1, keyParallelism: 1 };
    await callPool(t, "setKeyShare", ["heavy", { weight: 3 }], poolOptions);
    // A job holds the one slot while both backlogs arrive, so both are due together.
    await enqueue(t, "mutation", [{ key: "first:0" }], { poolOptions });
    await enqueue(t, "mutation", jobs("light", 100, 0), { poolOptions, options: { key: "light" } });
    await enqueue(t, "mutation", jobs("heavy", 100, 0), { poolOptions, options: { key: "heavy" } });
    await runUntil(t, () => started("heavy").length + started("light").length >= 120, 60_000);
    const window = startKeys()
      .filter((key) => key !== "first")
      .slice(0, 100);
    const heavy = window.filter((key) => key === "heavy").length;
    const light = window.filter((key) => key === "light").length;
    expect(heavy + light).toBe(100);
    // 75 against 25, within ±10 % (plus one).
    expect(heavy).toBeGreaterThanOrEqual(Math.floor(75 * 0.9) - 1);
    expect(heavy).toBeLessThanOrEqual(Math.ceil(75 * 1.1) + 1);
    expect(light).toBeGreaterThanOrEqual(Math.floor(25 * 0.9) - 1);
  });

  it("the jobs without a key take turns as one more key of weight 1", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1, keyParallelism: 1 };
    await enqueue(t, "mutation", [{ key: "first:0" }], { poolOptions });
    await enqueue(t, "mutation", jobs("k", 20, 0), { poolOptions, options: { key: "k" } });
    await enqueue(t, "mutation", jobs("none", 20, 0), { poolOptions });
    await runUntil(t, () => started("none").length + started("k").length === 40, 30_000);
    const order = startKeys()
      .filter((key) => key !== "first")
      .slice(0, 20);
    const unkeyed = order.filter((key) => key === "none").length;
    expect(unkeyed).toBeGreaterThanOrEqual(9);
    expect(unkeyed).toBeLessThanOrEqual(11);
  });

  it("serves a key below its reserve first, and lends its slots while it has no jobs", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 4, keyParallelism: 4 };
    await callPool(t, "setKeyShare", ["vip", { reserve: 2 }], poolOptions);
    // While vip has nothing due, the bulk key takes all four slots: none is held for the reserve.
    await enqueue(t, "action", jobs("bulk", 40, 500), { poolOptions, options: { key: "bulk" } });
    await runUntil(t, () => probe.groupRunning.get("bulk") === 4);
    await enqueue(t, "action", jobs("vip", 4, 500), { poolOptions, options: { key: "vip" } });
    // The next two slots that free go to vip (below its reserve of 2), before bulk's turn.
    await runUntil(t, () => started("vip").length >= 2, 5000);
    const firstVip = probe.starts.get("vip:0")![0];
    const bulkAfter = [...probe.starts.entries()].filter(
      ([label, [at]]) => label.startsWith("bulk:") && at > firstVip,
    );
    expect(probe.starts.get("vip:1")![0]).toBeLessThanOrEqual(firstVip + 10);
    expect(bulkAfter.length).toBeLessThanOrEqual(2);
    await runUntil(t, async () => (await completions(t)).length === 44, 20_000);
  });

  it("a key at its rate limit delays no other key, and the loop sleeps until it may start", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 5, keyParallelism: 5 };
    await callPool(t, "setKeyRateLimit", ["slow", { starts: 2, periodMs: 1000 }], poolOptions);
    await enqueue(t, "mutation", jobs("slow", 6, 0), { poolOptions, options: { key: "slow" } });
    await enqueue(t, "mutation", jobs("fast", 20, 0), { poolOptions, options: { key: "fast" } });
    await runUntil(t, () => started("fast").length === 20, 5000);
    // Every fast job started while slow waited for its windows.
    expect(started("slow").length).toBeLessThan(6);
    await runUntil(t, () => started("slow").length === 6, 5000);
    const slowStarts = started("slow").map((label) => probe.starts.get(label)![0]);
    for (let i = 2; i < slowStarts.length; i++) {
      expect(slowStarts[i] - slowStarts[i - 2]).toBeGreaterThanOrEqual(1000);
    }
    expect(await keyStatus(t, "slow")).toMatchObject({
      rateLimit: { starts: 2, periodMs: 1000 },
      weight: 1,
      reserve: 0,
    });
    // Slow's jobs are done: the loop goes quiet (no pass polls a key that has nothing due).
    const passes = await loopPasses(t);
    await runFor(t, 5000);
    expect(await loopPasses(t)).toBeLessThanOrEqual(passes + 2);
  });

  it("a key waiting for its rate limit holds back no lower level, and the loop sleeps until it may start", async () => {
    const t = setup();
    // One slot: each pass reads one listed key of a level, and the one there waits 5 s.
    const poolOptions = { maxParallelism: 1 };
    await callPool(t, "setKeyRateLimit", ["slow", { starts: 1, periodMs: 5000 }], poolOptions);
    await enqueue(t, "mutation", jobs("slow", 2, 0), {
      poolOptions,
      options: { key: "slow", priority: "high" },
    });
    await runUntil(t, () => started("slow").length === 1, 2000);
    await runFor(t, 500);
    const passes = await loopPasses(t);
    await enqueue(t, "mutation", [{ key: "n:0", ms: 0 }], { poolOptions });
    await runUntil(t, () => started("n").length === 1, 4000);
    // The normal job ran while slow waited for its window, in a pass or two, not pass after pass.
    expect(started("slow")).toEqual(["slow:0"]);
    expect(await loopPasses(t)).toBeLessThanOrEqual(passes + 4);
    await runUntil(t, () => started("slow").length === 2, 10_000);
    const [first, second] = started("slow").map((label) => probe.starts.get(label)![0]);
    expect(second - first).toBeGreaterThanOrEqual(5000);
  });

  it('fairness "due" starts the earliest due job first across keys, ignoring weights', async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1, keyParallelism: 1, fairness: "due" };
    await callPool(t, "setKeyShare", ["b", { weight: 100 }], poolOptions);
    await enqueue(t, "mutation", [{ key: "first:0" }], { poolOptions });
    await enqueue(t, "mutation", jobs("a", 5, 0), { poolOptions, options: { key: "a" } });
    await enqueue(t, "mutation", jobs("b", 5, 0), { poolOptions, options: { key: "b" } });
    await runUntil(t, () => started("a").length + started("b").length === 10, 10_000);
    expect(startKeys().filter((key) => key !== "first")).toEqual([
      ..."aaaaa".split(""),
      ..."bbbbb".split(""),
    ]);
  });

  it("levels stay strict: a heavy key's normal jobs wait for a light key's high ones", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 1, keyParallelism: 1 };
    await callPool(t, "setKeyShare", ["heavy", { weight: 100, reserve: 1 }], poolOptions);
    await enqueue(t, "mutation", [{ key: "first:0" }], { poolOptions });
    await enqueue(t, "mutation", jobs("heavy", 3, 0), { poolOptions, options: { key: "heavy" } });
    await enqueue(t, "mutation", jobs("light", 3, 0), {
      poolOptions,
      options: { key: "light", priority: "high" },
    });
    await runUntil(t, () => started("heavy").length + started("light").length === 6, 10_000);
    expect(startKeys().filter((key) => key !== "first")).toEqual([
      "light",
      "light",
      "light",
      "heavy",
      "heavy",
      "heavy",
    ]);
  });

  it("setKeyShare keeps a field left out, and null restores the defaults", async () => {
    const t = setup();
    await callPool(t, "setKeyShare", ["k", { weight: 4, reserve: 2 }]);
    await callPool(t, "setKeyShare", ["k", { reserve: 1 }]);
    expect(await keyStatus(t, "k")).toMatchObject({ weight: 4, reserve: 1, rateLimit: null });
    await callPool(t, "setKeyShare", ["k", null]);
    expect(await keyStatus(t, "k")).toMatchObject({ weight: 1, reserve: 0 });
  });

  it("keyRateLimit is every key's default; false exempts a key, null follows the default again", async () => {
    const t = setup();
    const poolOptions = { keyRateLimit: { starts: 3, periodMs: 1000 } };
    await enqueue(t, "mutation", [{ key: "k:0" }], { poolOptions, options: { key: "k" } });
    expect(await keyStatus(t, "k")).toMatchObject({ rateLimit: { starts: 3, periodMs: 1000 } });
    await callPool(t, "setKeyRateLimit", ["k", false], poolOptions);
    expect(await keyStatus(t, "k")).toMatchObject({ rateLimit: null });
    await callPool(t, "setKeyRateLimit", ["k", null], poolOptions);
    expect(await keyStatus(t, "k")).toMatchObject({ rateLimit: { starts: 3, periodMs: 1000 } });
  });
});

/** The loop's generation: one more per pass. */
async function loopPasses(t: any): Promise<number> {
  return await t.runInComponent("workpool", async (ctx: any) => {
    return (await ctx.db.query("loopState").first())?.generation ?? 0;
  });
}

describe("fair share after many keys are resumed at once", () => {
  it("starts the jobs of 300 keys resumed together in a few dozen passes, not one pass each", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 50, logLevel: "DEBUG" };
    const passes: string[] = [];
    vi.spyOn(console, "debug").mockImplementation((line: string) => {
      if (JSON.parse(line).event === "pass") passes.push(line);
    });
    vi.spyOn(console, "info").mockImplementation(() => {});
    const keys = { prefix: "k", from: 0, to: 300 };
    await t.mutation(anyApi.chaos.pauseKeys, { ...keys, resume: false });
    // One job a key, each due while its key is paused.
    const ids: string[] = await t.mutation(anyApi.chaos.enqueueSpread, {
      kind: "mutation",
      n: 300,
      prefix: "j",
      firstDelayMs: 0,
      spacingMs: 0,
      poolOptions,
      poolKeyPrefix: "k",
    });
    await runFor(t, 2_000);
    expect(await jobStates(t)).toEqual({ pending: 300, running: 0, finished: 0 });
    // `resume` lists each key as a hint, without a place in the fair-share order.
    await t.mutation(anyApi.chaos.pauseKeys, { ...keys, resume: true });
    const before = passes.length;
    await runUntil(t, async () => (await jobStates(t)).finished === 300, 60_000);
    expect(ids).toHaveLength(300);
    for (const id of ids) expect((await info(t, id)).result.kind).toBe("success");
    // 300 starts at up to 50 a pass, after the hints are placed 100 a pass: a pass that took one
    // turn while a hint was left unread needed 300.
    expect(passes.length - before).toBeLessThan(40);
  });
});

/** The loop's read cursors (schema.ts `loopState.cursors`). */
async function cursors(t: any): Promise<Record<string, number | undefined>> {
  return await t.runInComponent("workpool", async (ctx: any) => {
    return (await ctx.db.query("loopState").first())?.cursors ?? {};
  });
}

/** Whether every given job finished with a success. */
async function allSucceeded(t: any, ids: string[]): Promise<boolean> {
  for (const id of ids) if ((await info(t, id))?.result?.kind !== "success") return false;
  return true;
}

describe("fair share's reads of hints", () => {
  it("reads hints from past the ones it placed, and still starts a key resumed later", async () => {
    const t = setup();
    const poolOptions = { maxParallelism: 50 };
    const keys = { prefix: "k", from: 0, to: 100 };
    await t.mutation(anyApi.chaos.pauseKeys, { ...keys, resume: false });
    await t.mutation(anyApi.chaos.enqueueSpread, {
      kind: "mutation",
      n: 100,
      prefix: "j",
      firstDelayMs: 0,
      spacingMs: 0,
      poolOptions,
      poolKeyPrefix: "k",
    });
    await callPool(t, "pause", [{ key: "late" }], poolOptions);
    const [late] = await enqueue(t, "mutation", [{ key: "late:0" }], {
      poolOptions,
      options: { key: "late" },
    });
    await runFor(t, 2_000);
    await t.mutation(anyApi.chaos.pauseKeys, { ...keys, resume: true });
    await runUntil(t, async () => (await jobStates(t)).finished === 100, 30_000);
    // The 100 hints were placed: the next read starts at the last one's segment (less a margin).
    const resumedAt = Date.now();
    const { hints } = await cursors(t);
    expect(hints).toBeGreaterThanOrEqual(Math.floor((resumedAt - 30_000) / 100));
    // A hint written after the cursor moved is read from it: its key starts.
    await runFor(t, 5_000);
    await callPool(t, "resume", [{ key: "late" }], poolOptions);
    await runUntil(t, () => allSucceeded(t, [late]), 10_000);
    expect((await cursors(t)).hints).toBeGreaterThan(hints as number);
  });

  it("starts a key listed in due order once the pool returns to fair share, however old its row", async () => {
    const t = setup();
    // One start per key in 6 s: X's second job waits listed for its key's rate limit.
    const share = {
      maxParallelism: 5,
      keyRateLimit: { starts: 1, periodMs: 6_000 },
      fairness: "share",
    };
    const due = { ...share, fairness: "due" };
    const xs = await enqueue(t, "mutation", [{ key: "X:0" }, { key: "X:1" }], {
      poolOptions: share,
      options: { key: "X" },
    });
    await callPool(t, "pause", [{ key: "Z" }], share);
    const [z] = await enqueue(t, "mutation", [{ key: "Z:0" }], {
      poolOptions: share,
      options: { key: "Z" },
    });
    await runFor(t, 1_500);
    // Z's hint, written well after X's row, moves the hint cursor past that row.
    await callPool(t, "resume", [{ key: "Z" }], share);
    await runUntil(t, () => allSucceeded(t, [z]), 500);
    expect((await cursors(t)).hints).toBeGreaterThan(0);
    // In due order a new job of X places X's row again, without a turn...
    const more = await enqueue(t, "mutation", [{ key: "X:2" }], {
      poolOptions: due,
      options: { key: "X" },
    });
    await runFor(t, 500);
    expect((await cursors(t)).hints).toBeUndefined();
    // ...and back under fair share that old row is read as a hint: X's jobs start as its limit
    // allows.
    await enqueue(t, "mutation", [{ key: "u:0" }], { poolOptions: share });
    await runUntil(t, () => allSucceeded(t, [...xs, ...more]), 15_000);
    expect(started("X")).toEqual(["X:0", "X:1", "X:2"]);
  });
});

/** The `keyReady` rows of keys waiting for their rate limit. */
async function waitingRows(t: any): Promise<unknown[]> {
  return await t.runInComponent("workpool", async (ctx: any) => {
    const rows = await ctx.db.query("keyReady").collect();
    return rows.filter((row: { tier?: number }) => row.tier === 2);
  });
}

/** The lower bounds on `pass` of every read of the "normal" level's waiting keys
 * (`keyReady.by_share`, tier 2), in order, taken from convex-test's query syscall for the rest of
 * the test. */
function recordWaitingReads(): number[] {
  const bounds: number[] = [];
  const convex = (globalThis as any).Convex;
  const getter = Object.getOwnPropertyDescriptor(convex, "syscall")!.get!;
  vi.spyOn(convex, "syscall", "get").mockImplementation(() => (op: string, jsonArgs: string) => {
    const syscall = getter.call(convex);
    if (op === "1.0/queryStream") {
      const source = JSON.parse(jsonArgs).query?.source;
      const range: any[] = source?.range ?? [];
      const eq = (field: string) =>
        range.find((bound) => bound.fieldPath === field && bound.type === "Eq");
      const level = eq("priority")?.value;
      const normal = level !== "high" && level !== "low";
      if (source?.indexName === "keyReady.by_share" && eq("tier")?.value === 2 && normal) {
        const from = range.find((bound) => bound.fieldPath === "pass" && bound.type === "Gte");
        bounds.push(from?.value ?? Number.NEGATIVE_INFINITY);
      }
    }
    return syscall(op, jsonArgs);
  });
  return bounds;
}

describe("fair share's reads of keys waiting for their rate limit", () => {
  it("reads them from past the ones it placed again, and still starts a key that waits later", async () => {
    const t = setup();
    // One start per key a second: each key's second job waits in the waiting tier.
    const poolOptions = { maxParallelism: 20, keyRateLimit: { starts: 1, periodMs: 1000 } };
    const reads = recordWaitingReads();
    const enqueuedAt = Date.now();
    const ids: string[] = [];
    for (let k = 0; k < 10; k++) {
      const key = `w${k}`;
      ids.push(
        ...(await enqueue(t, "mutation", jobs(key, 2, 0), { poolOptions, options: { key } })),
      );
    }
    await runUntil(t, () => allSucceeded(t, ids), 5_000);
    const { waiting } = await cursors(t);
    // Every waiting row (each waited till a second after the enqueue) was read once its time
    // came, and placed again: none is left below the cursor.
    expect(waiting).toBeGreaterThanOrEqual(enqueuedAt + 1000);
    expect(await waitingRows(t)).toEqual([]);
    // Each read starts where the one before left the cursor, not at the front of the tier (where
    // the rows it moved left their entries).
    expect(reads.length).toBeGreaterThan(1);
    expect(reads).toEqual([...reads].sort((a, b) => a - b));
    expect(reads.at(-1)).toBeGreaterThanOrEqual(enqueuedAt + 1000);
    // A key that waits after the cursor moved is read from it: its second job starts a second on.
    const late = await enqueue(t, "mutation", jobs("late", 2, 0), {
      poolOptions,
      options: { key: "late" },
    });
    await runUntil(t, () => allSucceeded(t, late), 5_000);
    const [first, second] = started("late").map((label) => probe.starts.get(label)![0]);
    expect(second - first).toBeGreaterThanOrEqual(1000);
    expect((await cursors(t)).waiting).toBeGreaterThan(waiting as number);
  });

  it("places a waiting key again when its time comes in a pass that gives it no turn", async () => {
    const t = setup();
    // Two slots, and a key below its reserve of two takes every turn while it has jobs: its jobs
    // end in pairs, so the passes that read w's row have room for two and find one waiting key.
    const poolOptions = {
      maxParallelism: 2,
      keyParallelism: 2,
      keyRateLimit: { starts: 1, periodMs: 1000 },
    };
    await callPool(t, "setKeyShare", ["r", { reserve: 2 }], poolOptions);
    await callPool(t, "setKeyRateLimit", ["r", false], poolOptions);
    const ws = await enqueue(t, "mutation", jobs("w", 2, 0), {
      poolOptions,
      options: { key: "w" },
    });
    await runUntil(t, () => started("w").length === 1, 1000);
    const rs = await enqueue(t, "action", jobs("r", 30, 100), {
      poolOptions,
      options: { key: "r" },
    });
    // w's window ends while r runs: the passes that read w's row give the slot to r.
    await runUntil(t, () => allSucceeded(t, rs), 10_000);
    expect(started("w")).toEqual(["w:0"]);
    expect(await waitingRows(t)).toEqual([]);
    // w's row left the waiting tier for its turn, so w starts once r has no job left.
    await runUntil(t, () => allSucceeded(t, ws), 2_000);
    expect(probe.starts.get("w:1")![0]).toBeGreaterThan(probe.starts.get("r:29")![0]);
  });
});
