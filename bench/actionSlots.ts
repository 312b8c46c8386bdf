/**
 * A deployment's concurrent-action limit, simulated in convex-test, and the action time a run
 * holds. convex-test starts every scheduled action at once; a Convex deployment runs at most so many
 * actions at a time (16 on the smallest instance class) and queues the rest.
 *
 * How: convex-test runs each action inside `executionContextStorage.run(ctx, ...)` with a context
 * `{ componentPath, udfPath, udfType: "action", depth }` (see instrument.ts). The hook wraps
 * `AsyncLocalStorage.prototype.run` once more: an action of depth 1 (one the scheduler started: no
 * function called it) waits for one of `limit` slots before its body runs, and frees it when it
 * settles; waiting actions start in the order they arrived. Apps' and pools' actions alike: workers,
 * action runners, executor actions and the peer's batch workers. An action another action calls
 * (`ctx.runAction`, depth 2 and more: the job's own action under a worker, an action runner or the
 * peer's batch worker) runs inside its caller's slot, never waiting: counting it too would let
 * callers that hold every slot wait forever on their callees. The same rule for both pools: under
 * it, a runner's (or a batch worker's) jobs share its slot, which flatters both alike. So each
 * run is also measured under the second rule, counting, not blocking: every action execution,
 * nested ones included, counts against the limit (on a deployment each is an execution of its own),
 * and the peak of all executions at once is reported beside the peak of slots
 * (`maxExecutions` beside `maxRunning`). Blocking nested calls would deadlock (a caller holding a
 * slot waits on its callee), so the second rule counts only.
 * Queries and mutations are never held back.
 *
 * Measured per run (`startActionSlots`), on the virtual clock: every action's time from its start
 * (after its wait) to its end, apart for the scheduler's actions and for the ones actions called,
 * per function; the most actions in slots at once, the most waiting at once, and the time spent
 * waiting. Owns the hook (installed once) and the current run's figures; it never changes what a
 * function does or returns, and without a limit only measures.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { isExecutionContext } from "./instrument.js";

/** Action time, per kind of action. */
export type ActionTime = { count: number; ms: number };

/** What a run's actions held, on the virtual clock. */
export type ActionStats = {
  /** The concurrent-action limit simulated (undefined: none). */
  limit?: number;
  /** Actions the scheduler started (each held a slot). */
  topLevel: ActionTime;
  /** Actions that actions called (`ctx.runAction`), in their callers' slots. */
  nested: ActionTime;
  /** Per function, keyed `component:udfPath` (`app` for the app), both kinds. */
  byFunction: Record<string, ActionTime>;
  /** The most scheduler-started actions running at once (the blocking rule: nested calls run in
   * their caller's slot). */
  maxRunning: number;
  /** The most action executions running at once, nested ones included (the counting rule: each
   * execution counts against the limit, as on a deployment; never blocks). */
  maxExecutions: number;
  /** The most actions waiting for a slot at once, and their total wait (ms). */
  maxWaiting: number;
  waitedMs: number;
};

/** One run's slots and figures. */
class Slots {
  readonly stats: ActionStats;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Action executions running now, nested ones included (the counting rule). */
  private executing = 0;
  /** Actions not yet ended, with when they started (ended at `finish`). */
  private readonly open = new Map<object, { start: number; time: ActionTime[] }>();

  constructor(limit: number | undefined) {
    this.stats = {
      limit,
      topLevel: { count: 0, ms: 0 },
      nested: { count: 0, ms: 0 },
      byFunction: {},
      maxRunning: 0,
      maxExecutions: 0,
      maxWaiting: 0,
      waitedMs: 0,
    };
  }

  /** Waits for a slot (at once while fewer than `limit` run). */
  async acquire(): Promise<void> {
    const limit = this.stats.limit ?? Infinity;
    if (this.running < limit) {
      this.running++;
    } else {
      const since = Date.now();
      // The slot is handed over by `release`: `running` stays as it is.
      await new Promise<void>((resolve) => {
        this.waiting.push(resolve);
        this.stats.maxWaiting = Math.max(this.stats.maxWaiting, this.waiting.length);
      });
      this.stats.waitedMs += Date.now() - since;
    }
    this.stats.maxRunning = Math.max(this.stats.maxRunning, this.running);
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }

  /** Times `body` (an action's run) from now to when it settles. */
  timed<T>(key: string, topLevel: boolean, body: () => T): T {
    const s = this.stats;
    const time = [topLevel ? s.topLevel : s.nested, (s.byFunction[key] ??= { count: 0, ms: 0 })];
    const token = {};
    this.open.set(token, { start: Date.now(), time });
    for (const t of time) t.count++;
    this.executing++;
    s.maxExecutions = Math.max(s.maxExecutions, this.executing);
    const end = () => this.close(token);
    const result = body();
    if (result instanceof Promise) return result.finally(end) as T;
    end();
    return result;
  }

  private close(token: object): void {
    const entry = this.open.get(token);
    if (!entry) return;
    this.open.delete(token);
    this.executing--;
    for (const t of entry.time) t.ms += Date.now() - entry.start;
  }

  /** Ends the run's measurement: actions still running count up to now. */
  finish(): ActionStats {
    for (const token of [...this.open.keys()]) this.close(token);
    return this.stats;
  }
}

let installed = false;
let current: Slots | undefined;

/** Installs the hook (idempotent; after `installInstrumentation`, so that an action is counted as
 * a call when it starts, not while it waits). */
export function installActionSlots(): void {
  if (installed) return;
  installed = true;
  const proto = AsyncLocalStorage.prototype as any;
  const origRun = proto.run;
  proto.run = function (this: unknown, store: unknown, ...rest: unknown[]) {
    const slots = current;
    if (!slots || !isExecutionContext(store) || store.udfType !== "action")
      return origRun.call(this, store, ...rest);
    const key = `${store.componentPath || "app"}:${store.udfPath}`;
    const run = () => origRun.call(this, store, ...rest);
    if (store.depth !== 1) return slots.timed(key, false, run);
    return (async () => {
      await slots.acquire();
      try {
        return await slots.timed(key, true, run);
      } finally {
        slots.release();
      }
    })();
  };
}

/** Starts measuring a run's actions, holding them to `limit` at once when given. */
export function startActionSlots(limit?: number): void {
  current = new Slots(limit);
}

/** Stops: returns the run's figures (actions still running count up to now). Actions of this run
 * that are still waiting keep their place in its queue, apart from any later run's. */
export function stopActionSlots(): ActionStats {
  const slots = current;
  current = undefined;
  if (!slots) throw new Error("bench: stopActionSlots without startActionSlots");
  return slots.finish();
}
