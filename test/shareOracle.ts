/**
 * The model test's side of fair share (API-EXTENSIONS section 13), kept apart from
 * test/model.test.ts: the operations it draws (a key's weight and reserve, a key's rate limit),
 * what the model expects `keyStatus` to show of them, the rule its oracle checks once a program is
 * over (no key started more attempts in a window than a rate limit it held throughout), and the
 * start rules it checks look by look while the clock steps (StartRules: a reserve is never passed
 * over; no slot idle while a due job could start).
 */
import fc from "fast-check";
import { expect } from "vitest";
import { busiestWindow } from "./helpers.js";

type Share = { weight?: number; reserve?: number } | null;
type KeyRate = { starts: number; periodMs: number } | false | null;

/** A key's share or rate limit, as the model draws them. */
export type ShareOp =
  | { op: "setKeyShare"; key: string; share: Share }
  | { op: "setKeyRateLimit"; key: string; rateLimit: KeyRate };

/** The arbitraries of the share operations (each of weight `weight` among the program's). */
export function shareOps(poolKey: fc.Arbitrary<string>, weight = 1) {
  return [
    {
      weight,
      arbitrary: fc.record({
        op: fc.constant("setKeyShare" as const),
        key: poolKey,
        share: fc.option(
          fc.record(
            { weight: fc.integer({ min: 1, max: 5 }), reserve: fc.integer({ min: 0, max: 2 }) },
            { requiredKeys: [] },
          ),
          { nil: null },
        ),
      }),
    },
    {
      weight,
      arbitrary: fc.record({
        op: fc.constant("setKeyRateLimit" as const),
        key: poolKey,
        rateLimit: fc.oneof(
          fc.record({
            starts: fc.integer({ min: 1, max: 3 }),
            periodMs: fc.integer({ min: 200, max: 2000 }),
          }),
          fc.constant(false as const),
          fc.constant(null),
        ),
      }),
    },
  ];
}

/** A switch of the pool's `fairness` (section 13's opt-out): the start order turns from fair
 * share to due order, or back. */
export type FairnessOp = { op: "fairness"; fairness: "share" | "due" };

/** A program's switches of `fairness`, drawn after the rest of it (so the programs a seed drew
 * before this existed keep their other operations): none in most programs; in one of five, a
 * switch to "due" at a drawn place (an index taken modulo the operations' number plus one), and
 * half the time a switch back to "share" somewhere after it. Rows the loop placed in due order
 * carry no fair-share place, so the switch back is where a pass must read them anew. */
export const fairnessSwitchDraw: fc.Arbitrary<
  { at: number; back: number | undefined } | undefined
> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.record({
      at: fc.nat({ max: 11 }),
      back: fc.option(fc.nat({ max: 11 }), { nil: undefined, freq: 2 }),
    }),
  },
);

/** `ops` with the drawn switches of `fairness` in their places. */
export function withFairnessSwitch<O>(
  ops: O[],
  draw: { at: number; back: number | undefined } | undefined,
): O[] {
  if (draw === undefined) return ops;
  const toDue = draw.at % (ops.length + 1);
  const out: O[] = [...ops.slice(0, toDue), { op: "fairness", fairness: "due" } as O];
  const rest = ops.slice(toDue);
  if (draw.back === undefined) return [...out, ...rest];
  const back = draw.back % (rest.length + 1);
  return [
    ...out,
    ...rest.slice(0, back),
    { op: "fairness", fairness: "share" } as O,
    ...rest.slice(back),
  ];
}

/** A start as the loop logged it: when (the transaction's clock), and how many starts of any key
 * were logged before it. */
export type LoggedStart = { at: number; order: number };

/** What the model knows of each key's share and rate limit, and when each rate limit was set. */
export class KeyShares {
  private shares = new Map<string, { weight: number; reserve: number }>();
  private rates = new Map<string, Array<{ startsBefore: number; rateLimit: KeyRate }>>();

  /** Applies a drawn operation, as the pool method does, once `startsBefore` starts had been
   * logged: the rules of a rate limit hold from the next start on. (An order, not a time: a
   * transaction's clock runs ahead of the test's when many commit within one virtual millisecond,
   * so a pass that ran before the change may log its starts a millisecond after the test's
   * `Date.now()` of the change, seed 1962014433.) */
  apply(step: ShareOp, startsBefore: number): void {
    if (step.op === "setKeyShare") {
      const before = this.shares.get(step.key) ?? { weight: 1, reserve: 0 };
      this.shares.set(
        step.key,
        step.share === null
          ? { weight: 1, reserve: 0 }
          : {
              weight: step.share.weight ?? before.weight,
              reserve: step.share.reserve ?? before.reserve,
            },
      );
    } else {
      this.rates.set(step.key, [
        ...(this.rates.get(step.key) ?? []),
        { startsBefore, rateLimit: step.rateLimit },
      ]);
    }
  }

  /** The key's reserve as set (before the caps of its parallelism and the pool's). */
  reserveOf(key: string): number {
    return this.shares.get(key)?.reserve ?? 0;
  }

  /** Whether the key ever held a rate limit of its own in this program. */
  hasRateLimit(key: string): boolean {
    return (this.rates.get(key) ?? []).some((entry) => Boolean(entry.rateLimit));
  }

  /** The share fields `keyStatus` shows for `key` (the pool has no keyRateLimit in the model). */
  status(key: string) {
    const share = this.shares.get(key) ?? { weight: 1, reserve: 0 };
    const history = this.rates.get(key) ?? [];
    const last = history[history.length - 1]?.rateLimit ?? null;
    return { ...share, rateLimit: last === false ? null : last };
  }

  /**
   * Each key's starts (`startsOf(key)`: when the loop started each of its attempts, and where each
   * is in the order of all starts logged) held to a rate limit the key had throughout: the starts
   * after the last change of its limit, when that set a limit, never more than `starts` in any
   * window of `periodMs`.
   */
  check(keys: Iterable<string>, startsOf: (key: string) => LoggedStart[]): void {
    for (const key of keys) {
      const history = this.rates.get(key) ?? [];
      const last = history[history.length - 1];
      if (last === undefined || !last.rateLimit) continue;
      const { starts, periodMs } = last.rateLimit;
      const after = startsOf(key)
        .filter((start) => start.order >= last.startsBefore)
        .map((start) => start.at);
      expect(busiestWindow(after, periodMs), `starts of ${key} in one window`).toBeLessThanOrEqual(
        starts,
      );
    }
  }
}

/** How long past its due time a job must have been due before the start rules below hold the loop
 * to it (a segment, the loop's wake-up and a pass, with room to spare on a plain backend). */
export const CLEARLY_DUE_MS = 500;
/** How long a due job may wait beside a free slot, looked at throughout, before that is a
 * violation: a few passes (a pass takes at most START_BATCH rows, so a bulk drains over several). */
export const IDLE_SLOT_LIMIT_MS = 1_500;
/** The longest step between two looks that still counts as looking throughout: the model's
 * coarsest step of the clock in plain programs is 500 ms. */
export const MAX_LOOK_GAP_MS = 600;

/** A work row as the start rules read it. */
export type RuleRow = {
  _id: string;
  key?: string;
  priority?: "high" | "low";
  attempts: number;
  snoozes?: number;
  state: {
    kind: "pending" | "running" | "finished";
    startedAt?: number;
    /** A running task's executor. */
    executorId?: string;
  };
};

/** A job as the model knows it: when it was due, and whether a cancel of it was asked for. */
export type RuleJob = {
  id: string;
  kind: string;
  dueAt: number;
  canceled: boolean;
  cancelAt?: number;
};

/** What the pool may do at one look, as the model knows it. */
export type PoolView = {
  now: number;
  rows: RuleRow[];
  /** maxParallelism in force. */
  maxParallelism: number;
  paused: boolean;
  /** The program has a pool rate limit (the idle-slot rule does not apply: the limit holds slots). */
  rateLimited: boolean;
  pausedKeys: ReadonlySet<string>;
  /** The start order in force: reserves are section 13's fair share, so "due" has none to keep. */
  fairness: "share" | "due";
  keyLimit: (key: string) => number;
  /** Every "started" line of the loop so far, in order (append-only). */
  started: ReadonlyArray<{ at: number; workId?: string }>;
};

type Look = { at: number; rows: Map<string, RuleRow>; startedSeen: number };

const levelOf = (row: RuleRow) => (row.priority === "high" ? 0 : row.priority === "low" ? 2 : 1);
const firstStartPending = (row: RuleRow | undefined) =>
  row !== undefined && row.state.kind === "pending" && row.attempts === 0 && !row.snoozes;
/** Whether a job of `key` waits holding its slot (pending after an attempt or a snooze). */
const hasHolderWaiting = (key: string, rows: Map<string, RuleRow>) =>
  [...rows.values()].some((r) => r.key === key && r.state.kind === "pending" && holdsSlot(r));
const holdsSlot = (row: RuleRow) =>
  row.state.kind === "running" ||
  (row.state.kind === "pending" && (row.attempts > 0 || (row.snoozes ?? 0) > 0));

/**
 * Section 13's two start rules that no count after the fact can show, checked look by look while
 * the clock steps (plain programs: the chaos backend delays passes by design):
 * - **a reserve is never passed over** (under fair share, not in due order): while a key runs
 *   fewer attempts than its reserve in effect
 *   and has a job clearly due that it may start (not paused, under its parallelism, no rate limit
 *   of its own), no job of a key at or above its own reserve, nor one without a key, takes a
 *   first start at the same level or a lower one before that key gets one;
 * - **no slot idle while a due job could start**: with the pool not paused and no rate limit, a
 *   job clearly due, whose key may start, never waits while fewer than maxParallelism run,
 *   throughout IDLE_SLOT_LIMIT_MS.
 * Only first starts are judged (a retry or a snooze holds its key's slot and follows its own
 * rule; a key with one waiting is at that job's level, its next in order, and is not judged),
 * and only jobs the model enqueued itself and knows the due time of; executor tasks are
 * left out of the idle rule (an executor's own capacity may hold a task back).
 */
export class StartRules {
  private last: Look | undefined;
  private idleSince = new Map<string, number>();
  /** What the rules had to judge (evidence they were reached): looks, first starts weighed, windows
   * with a key waiting below its reserve, looks with a slot free, and due jobs seen beside one
   * past CLEARLY_DUE_MS (each such look a step towards IDLE_SLOT_LIMIT_MS). */
  readonly counts = {
    looks: 0,
    startsJudged: 0,
    reservesWaiting: 0,
    freeSlotLooks: 0,
    idleJudged: 0,
  };

  constructor(
    private shares: KeyShares,
    private jobs: () => Iterable<RuleJob>,
  ) {}

  /** Forgets the last look: an operation changes what the pool may do, so no window spans one. */
  reset(): void {
    this.last = undefined;
    this.idleSince.clear();
  }

  /** Takes a look; returns the rules broken since the last one (empty when none). */
  look(view: PoolView): string[] {
    this.counts.looks++;
    const rows = new Map(view.rows.map((row) => [row._id, row]));
    const prev = this.last;
    const chained = prev !== undefined && view.now - prev.at <= MAX_LOOK_GAP_MS;
    const broken = chained
      ? [...this.reserveRule(prev, rows, view), ...this.idleRule(rows, view)]
      : [];
    if (!chained) this.idleSince.clear();
    this.last = { at: view.now, rows, startedSeen: view.started.length };
    return broken;
  }

  /** Jobs clearly due at `at`, never started, not canceled, pending at both looks, by key. */
  private dueJobs(at: number, before: Map<string, RuleRow>, now: Map<string, RuleRow>) {
    const due: Array<{ job: RuleJob; row: RuleRow }> = [];
    for (const job of this.jobs()) {
      if (job.canceled || job.cancelAt !== undefined || job.dueAt + CLEARLY_DUE_MS > at) continue;
      const row = now.get(job.id);
      if (!firstStartPending(before.get(job.id)) || !firstStartPending(row)) continue;
      due.push({ job, row: row! });
    }
    return due;
  }

  /** Whether `key`'s jobs may start, as far as its own settings go. */
  private keyMayStart(key: string, rows: Iterable<RuleRow>, view: PoolView): boolean {
    if (view.pausedKeys.has(key) || this.shares.hasRateLimit(key)) return false;
    let holding = 0;
    for (const row of rows) if (row.key === key && holdsSlot(row)) holding++;
    return holding < view.keyLimit(key);
  }

  private reserveInEffect(key: string | undefined, view: PoolView): number {
    if (key === undefined) return 0;
    return Math.max(
      0,
      Math.min(this.shares.reserveOf(key), view.keyLimit(key), view.maxParallelism),
    );
  }

  private reserveRule(prev: Look, rows: Map<string, RuleRow>, view: PoolView): string[] {
    if (view.paused || view.fairness === "due") return [];
    const window = view.started.slice(prev.startedSeen);
    if (window.length === 0) return [];
    const startedKeys = new Set(
      window.map((e) => (e.workId === undefined ? undefined : rows.get(e.workId)?.key)),
    );
    const running = (key: string, of: Map<string, RuleRow>) =>
      [...of.values()].filter((r) => r.key === key && r.state.kind === "running");
    // Keys below their reserve at the last look, with a job clearly due then that they may start,
    // and no start in the window: their best level.
    const waiting = new Map<string, { level: number; id: string; running: number }>();
    const due = this.dueJobs(prev.at, prev.rows, rows);
    for (const { job, row } of due) {
      const key = row.key;
      if (key === undefined || job.kind === "task" || startedKeys.has(key)) continue;
      // A key whose next job in order is one holding its slot (a retry or a snooze, first in its
      // queue) is at that job's level, under the holder rule: not judged here.
      if (hasHolderWaiting(key, prev.rows)) continue;
      const reserve = this.reserveInEffect(key, view);
      const runningNow = running(key, prev.rows).length;
      if (runningNow >= reserve || !this.keyMayStart(key, prev.rows.values(), view)) continue;
      const best = waiting.get(key);
      if (best === undefined || levelOf(row) < best.level) {
        waiting.set(key, { level: levelOf(row), id: job.id, running: runningNow });
      }
    }
    if (waiting.size > 0) this.counts.reservesWaiting++;
    const broken: string[] = [];
    for (const event of window) {
      const row = event.workId === undefined ? undefined : rows.get(event.workId);
      if (row === undefined) continue;
      const before = prev.rows.get(row._id);
      if (before !== undefined && !firstStartPending(before)) continue;
      this.counts.startsJudged++;
      // The starter's key was at or above its reserve throughout: as many of its attempts ran at
      // both looks (the same attempt, still running: a finished row keeps its last start's time,
      // and an attempt that ended between the looks may have freed the key's slot before this
      // start) as its reserve.
      const reserve = this.reserveInEffect(row.key, view);
      if (reserve > 0) {
        const still = running(row.key!, prev.rows).filter((r) => {
          const now = rows.get(r._id)?.state;
          return now?.kind === "running" && now.startedAt === r.state.startedAt;
        }).length;
        if (still < reserve) continue;
      }
      for (const [key, w] of waiting) {
        if (key === row.key || w.level > levelOf(row)) continue;
        broken.push(
          `${key} ran ${w.running} of its reserve ${this.reserveInEffect(key, view)} with ` +
            `${w.id} due, but ${row._id} of ${row.key ?? "no key"} started first (at ${event.at})`,
        );
      }
    }
    return broken;
  }

  private idleRule(rows: Map<string, RuleRow>, view: PoolView): string[] {
    const runningNow = [...rows.values()].filter((r) => r.state.kind === "running").length;
    if (view.paused || view.rateLimited || runningNow >= view.maxParallelism) {
      this.idleSince.clear();
      return [];
    }
    this.counts.freeSlotLooks++;
    const broken: string[] = [];
    const candidates = new Set<string>();
    for (const { job, row } of this.dueJobs(view.now, rows, rows)) {
      if (job.kind === "task") continue;
      if (row.key !== undefined && !this.keyMayStart(row.key, rows.values(), view)) continue;
      candidates.add(job.id);
      this.counts.idleJudged++;
      const since = this.idleSince.get(job.id) ?? view.now;
      this.idleSince.set(job.id, since);
      if (view.now - since >= IDLE_SLOT_LIMIT_MS) {
        broken.push(
          `${job.id} (due at ${job.dueAt}${row.key ? `, key ${row.key}` : ""}) waited ` +
            `${view.now - since} ms with ${runningNow} of ${view.maxParallelism} slots taken`,
        );
      }
    }
    for (const id of [...this.idleSince.keys()]) if (!candidates.has(id)) this.idleSince.delete(id);
    return broken;
  }
}
