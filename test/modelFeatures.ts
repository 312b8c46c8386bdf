/**
 * The model test's draws and oracle for three features (test/model.test.ts, plain and chaos
 * programs): recurring schedules (API-EXTENSIONS §10), jobs that wait for a completion (§11,
 * `manualCompletion`) and groups (§12). Owns their operations, what the model knows of them and
 * the checks that follow; model.test.ts calls in through a few hooks (an operation, an enqueue
 * joining a group, a cancel of all, a step's check, the stop before quiescence and the final
 * check) and never reads this module's state. Must never drive the clock beyond what an operation
 * asks for (a program's cost stays what it was), nor touch the jobs the model owns except to mark
 * those a group cancel canceled.
 *
 * - **Schedules**: up to three per program (`everyMs` or a cron of seconds; a drawn `overlap`,
 *   `catchupWindowMs`, `jitterMs`; runs that are mutations, or actions of up to 3 s), replaced by
 *   scheduling again under a name, paused, resumed, unscheduled, run now. Oracle, per schedule:
 *   no time runs twice; every run's time is one of the schedule's, it is enqueued at or after its
 *   time and within `catchupWindowMs`, and no run starts before its time; every time that came
 *   due (clearly, FIRE_LATE_MS before the schedule was paused, replaced or stopped) and has no run
 *   has an excuse — a later time passed before its fire could have run (catch-up), a catch-up
 *   window shorter than a fire may be late, or (`skip`, `bufferOne`) a run of the schedule
 *   unfinished at that time; `counts` add up to the times that came due, `enqueued` to the runs;
 *   under `skip` a run is enqueued only after the one before finished, under `bufferOne` it starts
 *   only after the one before finished and a third waits for the first to finish.
 * - **Waiting jobs**: actions or mutations with `manualCompletion` (timeouts of 1 to 10 s), keyed
 *   or not, retried or not, completed early (while the function runs), on time, late (after the
 *   timeout), twice, naming a wrong attempt, or never; canceled while waiting; `complete` on a job
 *   that does not wait. Oracle: `complete` never throws, returns true at most once per attempt,
 *   true whenever the attempt is running, not canceled, before its deadline and not yet
 *   completed, false once it is over; each job ends once, as the completions that returned true
 *   (and the timeouts of the attempts that got none) decide under its retry policy, with one run
 *   of its function per attempt. Its slot and key slot are held while it waits: the model's
 *   running and key-limit checks count it.
 * - **Groups**: created with an onComplete; the next few enqueues (single, batch, task batch,
 *   waiting jobs) join, a `retry()` of a member joins while the group is not done; closed,
 *   canceled (`cancelGroup`, which cancels its jobs). Oracle: `groupStatus` exact at every step
 *   (counts from the members' rows); at the end every group is done, its onComplete ran once,
 *   after each member's own onComplete, with the members' counts.
 */
import fc from "fast-check";
import { anyApi } from "convex/server";
import { expect } from "vitest";
import { probe } from "./app/probe.js";
import { callPool, inComponent } from "./helpers.js";
import { MAX_START_DELAY_MS } from "./chaosProgram.js";
import { scaled } from "./scale.js";
import type { LoggedEvent } from "./inspectChecks.js";
import { timeoutError } from "../src/component/api/manualCompletion.js";

/** Names a program's schedules take (an op names one by its slot). */
const SCHEDULE_SLOTS = 3;
type Overlap = "skip" | "bufferOne" | "allowAll" | "cancelOther";
type Timing = { everyMs: number } | { cron: string };
/** Crons of seconds dividing a minute: their times are the multiples of `stepMs` since the epoch. */
const CRONS: Record<string, number> = {
  "*/2 * * * * *": 2_000,
  "*/5 * * * * *": 5_000,
  "*/10 * * * * *": 10_000,
};
const stepOf = (timing: Timing) => ("everyMs" in timing ? timing.everyMs : CRONS[timing.cron]);

type CompletionDraw = "success" | "failed" | "nonRetryable";
const completionDraw = fc.constantFrom<CompletionDraw>(
  "success",
  "success",
  "failed",
  "nonRetryable",
);

export type FeatureOp =
  | {
      op: "schedule";
      slot: number;
      kind: "mutation" | "action";
      /** An action run's length (a run may still run at the next time). */
      ms: number;
      timing: Timing;
      overlap: Overlap;
      catchupWindowMs: number;
      jitterMs: number;
    }
  | {
      op: "scheduleAct";
      slot: number;
      method: "pauseSchedule" | "resumeSchedule" | "unschedule" | "runScheduleNow";
    }
  | {
      op: "waitJob";
      kind: "action" | "mutation";
      ms: number;
      timeoutMs: number;
      retry: boolean;
      key: string | undefined;
      /** One to three jobs, in one batch when more than one. */
      n: number;
      /** Joins the program's latest open group. */
      inGroup: boolean;
      /** What the app does for the first job: completes it while its function runs, once it
       * waits, after its timeout, or never; with `outcome`, sent twice if `twice`. */
      then: "early" | "onTime" | "late" | "never";
      outcome: CompletionDraw;
      twice: boolean;
    }
  | {
      op: "complete";
      index: number;
      outcome: CompletionDraw;
      /** Sent again at once (a webhook delivered twice). */
      twice: boolean;
      /** Names the attempt after the current one. */
      wrongAttempt: boolean;
      /** First lets the clock run (up to RUNNING_WAIT_MS) until the job runs. */
      whenRunning: boolean;
      /** "other": a job of the program that does not wait (false, never a throw). */
      target: "wait" | "other";
    }
  | { op: "cancelWait"; index: number }
  /** A group, with `own` mutations enqueued into it at once (one batch), and the next `joins`
   * enqueues of the program joining it. */
  | { op: "createGroup"; joins: number; own: number }
  | { op: "closeGroup"; index: number }
  | { op: "cancelGroup"; index: number; limit: number | undefined };

export const FEATURE_OPS = new Set<string>([
  "schedule",
  "scheduleAct",
  "waitJob",
  "complete",
  "cancelWait",
  "createGroup",
  "closeGroup",
  "cancelGroup",
]);

const featureOp: fc.Arbitrary<FeatureOp> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("schedule" as const),
      slot: fc.nat({ max: SCHEDULE_SLOTS - 1 }),
      kind: fc.constantFrom("mutation" as const, "action" as const),
      ms: fc.constantFrom(0, 800, 3_000),
      timing: fc.oneof(
        { weight: 3, arbitrary: fc.record({ everyMs: fc.constantFrom(1_000, 2_500, 7_000) }) },
        { weight: 1, arbitrary: fc.record({ cron: fc.constantFrom(...Object.keys(CRONS)) }) },
      ),
      overlap: fc.constantFrom<Overlap>("skip", "bufferOne", "allowAll", "cancelOther"),
      catchupWindowMs: fc.constantFrom(0, 1_500, 60_000, 60_000),
      jitterMs: fc.constantFrom(0, 0, 400, 3_000),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("scheduleAct" as const),
      slot: fc.nat({ max: SCHEDULE_SLOTS - 1 }),
      method: fc.constantFrom(
        "pauseSchedule" as const,
        "resumeSchedule" as const,
        "unschedule" as const,
        "runScheduleNow" as const,
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant("waitJob" as const),
      kind: fc.constantFrom("action" as const, "action" as const, "mutation" as const),
      // A function still running when a completion comes (1.5 s), or done at once; timeouts
      // shorter and longer than that. (Short: a waiting job's timeouts and retries are virtual
      // time a program steps through.)
      ms: fc.constantFrom(0, 300, 1_500),
      timeoutMs: fc.constantFrom(1_000, 2_000, 5_000, 10_000),
      retry: fc.boolean(),
      key: fc.option(fc.constantFrom("A", "B"), { nil: undefined, freq: 2 }),
      n: fc.integer({ min: 1, max: 3 }),
      inGroup: fc.constantFrom(false, true, true),
      then: fc.constantFrom(
        "early" as const,
        "onTime" as const,
        "onTime" as const,
        "late" as const,
        "never" as const,
      ),
      outcome: completionDraw,
      twice: fc.boolean(),
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant("complete" as const),
      index: fc.nat({ max: 20 }),
      outcome: completionDraw,
      twice: fc.boolean(),
      wrongAttempt: fc.constantFrom(false, false, false, true),
      whenRunning: fc.boolean(),
      target: fc.constantFrom("wait" as const, "wait" as const, "wait" as const, "other" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("cancelWait" as const), index: fc.nat({ max: 20 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant("createGroup" as const),
      joins: fc.integer({ min: 1, max: 10 }),
      own: fc.nat({ max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant("closeGroup" as const), index: fc.nat({ max: 5 }) }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant("cancelGroup" as const),
      index: fc.nat({ max: 5 }),
      limit: fc.option(fc.constantFrom(1, 2, 100), { nil: undefined }),
    }),
  },
);

/** The most feature operations one program draws: few in `npm test` (each schedule adds
 * SCHEDULE_LIFE_MS of virtual time, a late completion its job's timeout), more in test:slow. */
const MAX_FEATURE_OPS = scaled(3, 6);

/** A program's feature operations and where each goes among its other operations (an index taken
 * modulo their number plus one): drawn after the rest of a program, so that the programs of a
 * seed drawn before this existed keep their other operations. */
export const featureDraw: fc.Arbitrary<Array<{ at: number; op: FeatureOp }>> = fc.array(
  fc.record({ at: fc.nat({ max: 11 }), op: featureOp }),
  { maxLength: MAX_FEATURE_OPS },
);

/** `FUZZ_FEATURES=0`: programs without these operations (the programs of a seed as before they
 * existed, e.g. to compare a program's cost with and without them). */
const NO_FEATURES = process.env.FUZZ_FEATURES === "0";

/** `ops` with each feature operation inserted at its place. */
export function withFeatures<O>(ops: O[], draws: Array<{ at: number; op: FeatureOp }>): O[] {
  if (NO_FEATURES) return ops;
  let out = ops;
  for (const { at, op } of draws) {
    const place = at % (out.length + 1);
    out = [...out.slice(0, place), op as O, ...out.slice(place)];
  }
  return out;
}

/** How late a schedule's fire may run after its time: plain programs run timers at their times
 * (a step of the clock may finish first: up to 1 s during operations); the deployment-like
 * backend starts a scheduled function up to MAX_START_DELAY_MS late, in steps of up to 1 s. */
const fireLateMs = (chaos: boolean) => (chaos ? MAX_START_DELAY_MS + 2_000 : 1_000);
/** How long a schedule lives at least before the program ends it (its operations may take only a
 * second or two of virtual time): a few dozen of its times, whatever the program's pool does
 * meanwhile (paused, no slots, backed up). */
const SCHEDULE_LIFE_MS = 20_000;
/** The clock's step while schedules live out their time. */
const SCHEDULE_LIFE_STEP_MS = 1_000;
/** How long `complete` with `whenRunning` lets the clock run for its job to run. */
const RUNNING_WAIT_MS = 2_000;
/** The retry policy of a waiting job drawn with `retry`. */
const WAIT_RETRY = { maxAttempts: 2, initialBackoffMs: 100, base: 2 };

/** What model.test.ts lends the features: the backend, its rows, the clock, and its model's
 * jobs (by id) where the features act on them. */
export type FeatureHost = {
  t: any;
  chaos: boolean;
  workRows(): Promise<any[]>;
  poolOptions(): Record<string, unknown>;
  /** The model's key checks cover `key` from now on. */
  useKey(key: string): void;
  /** Runs the clock `ms` in steps of `stepMs`, with the model's checks after each. */
  runSteps(ms: number, stepMs: number): Promise<void>;
  /** The ids of the model's own jobs (none of them waits). */
  modelJobIds(): string[];
  /** Marks the model's jobs among `ids` canceled (a group cancel). */
  markCanceled(ids: Set<string>): void;
  /** A kill or a fault of the pool's own hit the job (its outcome is then free). */
  isHit(id: string): boolean;
  /** The row runs in an action runner a kill took (its attempt dies with it). */
  inDeadRunner(row: any): boolean;
};

type Version = { from: number; overlap: Overlap; catchupWindowMs: number; stepMs: number };
type Segment = { first: number | null; stepMs: number; end?: number };
/** One life of a schedule's name, from its creation to its unschedule (a later schedule under the
 * name is another life: it keeps neither counts nor last run). */
type ScheduleLife = {
  name: string;
  kind: "mutation" | "action";
  versions: Version[];
  segments: Segment[];
  paused: boolean;
  /** Runs enqueued by runScheduleNow. */
  runNow: Set<string>;
  /** `counts` read when the life ended. */
  counts?: { enqueued: number; skipped: number; missed: number };
  ended: boolean;
};
type WaitJob = {
  id: string;
  key: string;
  kind: "action" | "mutation";
  timeoutMs: number;
  maxAttempts: number;
  canceled: boolean;
  group?: string;
  /** Completions that returned true, by run number. */
  taken: Map<number, { kind: "success" | "failed"; value: string; nonRetryable: boolean }>;
};
type Group = {
  id: string;
  members: Set<string>;
  closed: boolean;
  canceled: boolean;
  /** Enqueues still to join it (a createGroup's `joins`). */
  joinsLeft: number;
};

export const newFeatureTotals = () => ({
  schedules: 0,
  scheduleRuns: 0,
  runsNow: 0,
  timesSkipped: 0,
  timesMissed: 0,
  waitJobs: 0,
  completionsTaken: 0,
  completionsRefused: 0,
  earlyCompletions: 0,
  waitsTimedOut: 0,
  waitsCanceled: 0,
  groups: 0,
  groupMembers: 0,
  groupCallbacks: 0,
});
export type FeatureTotals = ReturnType<typeof newFeatureTotals>;

export const featuresLine = (c: FeatureTotals) =>
  `${c.schedules} schedules (${c.scheduleRuns} runs at their times, ${c.runsNow} run now, ` +
  `${c.timesSkipped} times skipped, ${c.timesMissed} missed); ${c.waitJobs} waiting jobs ` +
  `(${c.completionsTaken} completions taken, ${c.earlyCompletions} of them early, ` +
  `${c.completionsRefused} refused, ${c.waitsTimedOut} ended timed out, ${c.waitsCanceled} ` +
  `canceled); ${c.groups} groups (${c.groupMembers} members, ${c.groupCallbacks} callbacks)`;

const runNumberOf = (w: any) => w.attempts + (w.snoozes ?? 0) + 1;

export class ModelFeatures {
  private lives = new Map<number, ScheduleLife>();
  private pastLives: ScheduleLife[] = [];
  private lifeCount = 0;
  private waits: WaitJob[] = [];
  private groups: Group[] = [];
  /** Mutations a createGroup enqueued into its group (they succeed unless canceled or hit). */
  private ownJobs: Array<{ id: string; key: string; canceled: boolean }> = [];
  /** Waiting jobs seen running in a dead action runner: their outcome is free. */
  private inDead = new Set<string>();

  constructor(
    private host: FeatureHost,
    private totals: FeatureTotals,
  ) {}

  async apply(step: FeatureOp): Promise<void> {
    switch (step.op) {
      case "schedule":
        return await this.schedule(step);
      case "scheduleAct":
        return await this.scheduleAct(step);
      case "waitJob":
        return await this.waitJob(step);
      case "complete":
        return await this.complete(step);
      case "cancelWait": {
        const rows = new Map((await this.host.workRows()).map((w) => [w._id, w]));
        // A job that waits now if there is one, else any.
        const waiting = this.waits.filter((w) => rows.get(w.id)?.state.kind === "running");
        const list = waiting.length > 0 ? waiting : this.waits;
        if (list.length === 0) return;
        const job = list[step.index % list.length];
        job.canceled = true;
        await this.host.t.mutation(anyApi.pool.cancel, { id: job.id });
        return;
      }
      case "createGroup": {
        const id: string = await callPool(this.host.t, "createGroup", [
          {
            name: `g${this.groups.length}`,
            onComplete: "$ref:groups.onGroupComplete",
            context: { n: this.groups.length },
          },
        ]);
        const group: Group = {
          id,
          members: new Set(),
          closed: false,
          canceled: false,
          joinsLeft: step.joins,
        };
        this.groups.push(group);
        this.totals.groups++;
        if (step.own === 0) return;
        // Its own jobs: mutations that succeed, in one batch (or one enqueue).
        const keys = Array.from({ length: step.own }, (_, i) => `g${this.groups.length - 1}-${i}`);
        const ids: string[] = await this.host.t.mutation(anyApi.pool.enqueue, {
          kind: "mutation",
          argsList: keys.map((key) => ({ key })),
          batch: step.own > 1,
          poolOptions: this.host.poolOptions(),
          options: { group: id, context: { own: true } },
          onComplete: "onComplete",
        });
        ids.forEach((memberId, i) =>
          this.ownJobs.push({ id: memberId, key: keys[i], canceled: false }),
        );
        this.joined(id, ids);
        return;
      }
      case "closeGroup": {
        const group = this.groups[step.index % Math.max(this.groups.length, 1)];
        if (group === undefined) return;
        await callPool(this.host.t, "closeGroup", [group.id]);
        group.closed = true;
        return;
      }
      case "cancelGroup": {
        const group = this.groups[step.index % Math.max(this.groups.length, 1)];
        if (group === undefined) return;
        await callPool(this.host.t, "cancelGroup", [
          group.id,
          ...(step.limit === undefined ? [] : [{ limit: step.limit }]),
        ]);
        group.closed = true;
        group.canceled = true;
        this.canceledMembers(group.members);
        return;
      }
    }
  }

  private isHit(id: string): boolean {
    return this.inDead.has(id) || this.host.isHit(id);
  }

  private canceledMembers(ids: Set<string>) {
    this.host.markCanceled(ids);
    for (const job of [...this.waits, ...this.ownJobs]) if (ids.has(job.id)) job.canceled = true;
  }

  /** The group the next enqueue of a job joins, if one is drawn to take it (`eligible`: the
   * enqueue can join one: no dedupe key). Counts the join. */
  groupForEnqueue(eligible: boolean): string | undefined {
    if (!eligible) return undefined;
    const group = this.groups.findLast((g) => !g.closed && g.joinsLeft > 0);
    if (group === undefined) return undefined;
    group.joinsLeft--;
    return group.id;
  }

  /** Records that `ids` joined `group` (an enqueue that `groupForEnqueue` gave it to). */
  joined(group: string | undefined, ids: string[]) {
    if (group === undefined) return;
    const g = this.groups.find((x) => x.id === group)!;
    for (const id of ids) g.members.add(id);
    this.totals.groupMembers += ids.length;
  }

  /** `retry()` of `original` made `retry`: it joins the original's group while the group is not
   * done (a closed one too), else none (§12). Call before the clock moves on. */
  async retried(original: string, retry: string, doneBefore: boolean | undefined) {
    const group = this.groups.find((g) => g.members.has(original));
    const info = await this.host.t.query(anyApi.pool.callComponentQuery, {
      fn: "lib.info",
      args: { id: retry },
    });
    if (group === undefined || doneBefore !== false) {
      expect(info?.group, `group of ${retry}, a retry of ${original}`).toBeUndefined();
      return;
    }
    expect(info?.group, `group of ${retry}, a retry of ${original}`).toBe(group.id);
    group.members.add(retry);
    this.totals.groupMembers++;
  }

  /** Whether `id`'s group is done (undefined: it is in none), read before a `retry()` of it. */
  async groupDone(id: string): Promise<boolean | undefined> {
    const group = this.groups.find((g) => g.members.has(id));
    if (group === undefined) return undefined;
    return (await this.groupStatus(group.id))?.done === true;
  }

  /** A cancelAll (of every job, or of `key`'s): the waiting jobs it reaches are canceled. */
  canceledAll(key?: string) {
    for (const job of this.waits) {
      if (key === undefined || job.key.startsWith(`${key}:`)) job.canceled = true;
    }
    if (key === undefined) for (const job of this.ownJobs) job.canceled = true;
  }

  // Schedules.

  private async getSchedule(name: string): Promise<any> {
    return await this.host.t.query(anyApi.schedules.get, { name });
  }

  private async scheduleAction(method: string, name: string): Promise<any> {
    return await this.host.t.mutation(anyApi.schedules.act, { method, name });
  }

  /** Ends the life's running segment at `at`, and opens one from its next time unless paused. */
  private async newSegment(life: ScheduleLife, at: number, paused: boolean) {
    const open = life.segments[life.segments.length - 1];
    if (open !== undefined && open.end === undefined) open.end = at;
    life.paused = paused;
    if (paused) return;
    const info = await this.getSchedule(life.name);
    const version = life.versions[life.versions.length - 1];
    life.segments.push({ first: info.nextRunAt, stepMs: version.stepMs });
  }

  private async schedule(step: Extract<FeatureOp, { op: "schedule" }>) {
    let life = this.lives.get(step.slot);
    if (life === undefined) {
      life = {
        name: `sched${step.slot}-${this.lifeCount++}`,
        kind: step.kind,
        versions: [],
        segments: [],
        paused: false,
        runNow: new Set(),
        ended: false,
      };
      this.lives.set(step.slot, life);
      this.totals.schedules++;
    }
    const at = Date.now();
    // A replace keeps the name's runs and counts; the run's function stays the life's kind (its
    // probe key names the life).
    await this.host.t.mutation(anyApi.schedules.schedule, {
      kind: life.kind,
      name: life.name,
      args: { key: `${life.name}:run`, ...(life.kind === "action" ? { ms: step.ms } : {}) },
      options: {
        ...step.timing,
        overlap: step.overlap,
        catchupWindowMs: step.catchupWindowMs,
        jitterMs: step.jitterMs,
      },
      poolOptions: this.host.poolOptions(),
    });
    life.versions.push({
      from: at,
      overlap: step.overlap,
      catchupWindowMs: step.catchupWindowMs,
      stepMs: stepOf(step.timing),
    });
    await this.newSegment(life, at, false);
  }

  private async scheduleAct(step: Extract<FeatureOp, { op: "scheduleAct" }>) {
    const life = this.lives.get(step.slot);
    if (life === undefined) {
      // An unknown name: false, never a throw (runScheduleNow rejects it).
      const name = `sched${step.slot}-none`;
      if (step.method === "runScheduleNow") {
        await expect(this.scheduleAction(step.method, name)).rejects.toThrow(
          /invalid name: must name a schedule of this pool/,
        );
      } else {
        expect(await this.scheduleAction(step.method, name), `${step.method} of ${name}`).toBe(
          false,
        );
      }
      return;
    }
    const at = Date.now();
    switch (step.method) {
      case "runScheduleNow": {
        const id: string | null = await this.scheduleAction(step.method, life.name);
        if (id !== null) {
          life.runNow.add(id);
          this.totals.runsNow++;
        }
        return;
      }
      case "pauseSchedule":
      case "resumeSchedule": {
        expect(await this.scheduleAction(step.method, life.name)).toBe(true);
        const pause = step.method === "pauseSchedule";
        if (pause === life.paused) return;
        await this.newSegment(life, at, pause);
        return;
      }
      case "unschedule":
        await this.endLife(step.slot, life);
        return;
    }
  }

  /** Reads the life's counts and unschedules it. */
  private async endLife(slot: number, life: ScheduleLife) {
    life.counts = (await this.getSchedule(life.name)).counts;
    const at = Date.now();
    expect(await this.scheduleAction("unschedule", life.name), `unschedule ${life.name}`).toBe(
      true,
    );
    const open = life.segments[life.segments.length - 1];
    if (open !== undefined && open.end === undefined) open.end = at;
    life.ended = true;
    this.lives.delete(slot);
    this.pastLives.push(life);
  }

  // Waiting jobs.

  private async waitJob(step: Extract<FeatureOp, { op: "waitJob" }>) {
    const first = this.waits.length;
    const keys = Array.from({ length: step.n }, (_, i) =>
      step.key === undefined ? `w${first + i}` : `${step.key}:w${first + i}`,
    );
    const group = step.inGroup ? this.groupForEnqueue(true) : undefined;
    if (step.key !== undefined) this.host.useKey(step.key);
    const ids: string[] = await this.host.t.mutation(anyApi.pool.enqueue, {
      kind: step.kind,
      argsList: keys.map((key) => ({ key, ...(step.kind === "action" ? { ms: step.ms } : {}) })),
      batch: step.n > 1,
      poolOptions: this.host.poolOptions(),
      options: {
        manualCompletion: { timeoutMs: step.timeoutMs },
        ...(step.kind === "action" ? { retry: step.retry ? WAIT_RETRY : false } : {}),
        ...(step.key !== undefined ? { key: step.key } : {}),
        ...(group !== undefined ? { group } : {}),
        // One context for all (a batch takes one); the key is the job's own name.
        context: { wait: true },
      },
      onComplete: "onComplete",
    });
    ids.forEach((id, i) =>
      this.waits.push({
        id,
        key: keys[i],
        kind: step.kind,
        timeoutMs: step.timeoutMs,
        maxAttempts: step.kind === "action" && step.retry ? WAIT_RETRY.maxAttempts : 1,
        canceled: false,
        group,
        taken: new Map(),
      }),
    );
    this.joined(group, ids);
    this.totals.waitJobs += ids.length;
    const job = this.waits[first];
    const late = fireLateMs(this.host.chaos);
    const completion = { outcome: step.outcome, twice: step.twice, wrongAttempt: false };
    switch (step.then) {
      case "early":
        await this.stepUntil(job, RUNNING_WAIT_MS, 50, (w) => w.state.kind !== "pending");
        return await this.completeJob(job, completion);
      case "onTime":
        await this.stepUntil(job, RUNNING_WAIT_MS + step.ms, 50, (w) => w.state.wait !== undefined);
        return await this.completeJob(job, completion);
      case "late": {
        // Past the deadline of its first attempt (and the timeout's own lateness).
        await this.stepUntil(job, RUNNING_WAIT_MS, 50, (w) => w.state.kind !== "pending");
        const row = await this.readRow(job.id);
        if (row?.state.kind === "running") {
          const after = row.state.startedAt + job.timeoutMs + late + 1 - Date.now();
          if (after > 0) await this.host.runSteps(after, 500);
        }
        return await this.completeJob(job, completion);
      }
      case "never":
        return;
    }
  }

  private async readRow(id: string): Promise<any> {
    return await inComponent(this.host.t, async (ctx: any) => await ctx.db.get(id));
  }

  private async complete(step: Extract<FeatureOp, { op: "complete" }>) {
    const { t } = this.host;
    if (step.target === "other") {
      // A job that does not wait takes no completion, whatever its state.
      const others = this.host.modelJobIds();
      if (others.length === 0) return;
      const id = others[step.index % others.length];
      expect(
        await callPool(t, "complete", [id, { kind: "success" }]),
        `complete() of ${id}, which does not wait`,
      ).toBe(false);
      this.totals.completionsRefused++;
      return;
    }
    if (this.waits.length === 0) return;
    // A job whose attempt runs (its function, or waiting) if there is one, else any.
    const rows = new Map((await this.host.workRows()).map((w) => [w._id, w]));
    const inAttempt = this.waits.filter((w) => rows.get(w.id)?.state.kind === "running");
    const list = inAttempt.length > 0 ? inAttempt : this.waits;
    const job = list[step.index % list.length];
    if (step.whenRunning)
      await this.stepUntil(job, RUNNING_WAIT_MS, 50, (w) => w.state.kind !== "pending");
    await this.completeJob(job, step);
  }

  /** Runs the clock (up to `ms`, in steps of `stepMs`) until `job`'s row meets `pred`. */
  private async stepUntil(job: WaitJob, ms: number, stepMs: number, pred: (w: any) => boolean) {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const row = await this.readRow(job.id);
      if (row === null || pred(row)) return;
      await this.host.runSteps(stepMs, stepMs);
    }
  }

  /** The app's `complete` of `job`'s current attempt (or, `wrongAttempt`, of the next), checked
   * against what the model knows of the attempt. */
  private async completeJob(
    job: WaitJob,
    step: { outcome: CompletionDraw; twice: boolean; wrongAttempt: boolean },
  ) {
    const { t } = this.host;
    const row = await this.readRow(job.id);
    const now = Date.now();
    const runNumber = row === null ? 0 : runNumberOf(row);
    const outcome =
      step.outcome === "success"
        ? { kind: "success" as const, returnValue: `${job.key}@${runNumber}` }
        : {
            kind: "failed" as const,
            error: `${job.key} failed by completion ${runNumber}`,
            ...(step.outcome === "nonRetryable" ? { nonRetryable: true } : {}),
          };
    const attempt = row === null ? 0 : row.attempts + (step.wrongAttempt ? 1 : 0);
    const send = async (): Promise<boolean> =>
      await callPool(t, "complete", [job.id, outcome, { attempt }]);
    const running = row?.state.kind === "running";
    const deadline = running ? row.state.startedAt + job.timeoutMs : 0;
    const fresh = running && !row.canceled && !job.taken.has(runNumber);
    const mustTake = fresh && !step.wrongAttempt && now < deadline;
    const cannotTake =
      !running ||
      row.canceled === true ||
      step.wrongAttempt ||
      job.taken.has(runNumber) ||
      now > deadline + fireLateMs(this.host.chaos);
    const took = await send();
    const what = `complete() of ${job.key} (run ${runNumber}, ${JSON.stringify(row?.state ?? null)})`;
    if (mustTake) expect(took, what).toBe(true);
    if (cannotTake) expect(took, what).toBe(false);
    if (took === true) {
      job.taken.set(runNumber, {
        kind: outcome.kind,
        value: outcome.kind === "success" ? outcome.returnValue : outcome.error,
        nonRetryable: step.outcome === "nonRetryable",
      });
      this.totals.completionsTaken++;
      if (row.state.wait === undefined) this.totals.earlyCompletions++;
    } else this.totals.completionsRefused++;
    if (step.twice) {
      expect(await send(), `${what}, sent twice`).toBe(false);
      this.totals.completionsRefused++;
    }
  }

  // Checks.

  private async groupStatus(id: string): Promise<any> {
    return await this.host.t.query(anyApi.pool.callClientQuery, {
      method: "groupStatus",
      args: [id],
    });
  }

  /** `groupStatus` of each group against its members' rows. */
  async checkStep(rows: any[]) {
    const byId = new Map(rows.map((w) => [w._id, w]));
    for (const job of this.waits) {
      const row = byId.get(job.id);
      if (row !== undefined && this.host.inDeadRunner(row)) this.inDead.add(job.id);
    }
    for (const group of this.groups) {
      const members = [...group.members].map((id) => byId.get(id));
      const count = (pred: (w: any) => boolean) => members.filter((w) => w && pred(w)).length;
      const outcome = (kind: string) =>
        count((w) => w.state.kind === "finished" && w.state.result.kind === kind);
      const finished = count((w) => w.state.kind === "finished");
      const status = await this.groupStatus(group.id);
      expect(status, `groupStatus of ${group.id}`).toMatchObject({
        id: group.id,
        closed: group.closed,
        done: group.closed && finished === members.length,
        total: members.length,
        pending: count((w) => w.state.kind === "pending"),
        running: count((w) => w.state.kind === "running"),
        succeeded: outcome("success"),
        failed: outcome("failed"),
        canceled: outcome("canceled"),
      });
    }
  }

  /** Before quiescence: every schedule ends (its counts read) once it lived SCHEDULE_LIFE_MS,
   * every group is closed. */
  async stop() {
    const born = [...this.lives.values()].map((life) => life.versions[0].from);
    const until = Math.max(Date.now(), ...born.map((at) => at + SCHEDULE_LIFE_MS));
    if (until > Date.now()) await this.host.runSteps(until - Date.now(), SCHEDULE_LIFE_STEP_MS);
    for (const [slot, life] of [...this.lives]) await this.endLife(slot, life);
    for (const group of this.groups) {
      if (group.closed) continue;
      await callPool(this.host.t, "closeGroup", [group.id]);
      group.closed = true;
    }
  }

  /** The final checks, once the pool is quiet. */
  async checkEnd(input: {
    rows: any[];
    completions: Array<{ workId: string; result: any; _creationTime: number }>;
    /** Expects one onComplete call of `id`, or none if a delivery outage may have lost it. */
    calledOnce: (id: string, calls: unknown[], what: string) => boolean;
    /** The loop's "started" lines, a start later undone too. */
    starts: LoggedEvent[];
  }) {
    const firstStart = new Map<string, number>();
    for (const e of input.starts) {
      if (e.workId !== undefined && !firstStart.has(e.workId)) firstStart.set(e.workId, e.at);
    }
    for (const life of this.pastLives) this.checkSchedule(life, input.rows, firstStart);
    const calls = new Map<string, any[]>();
    input.completions.forEach((c, order) =>
      calls.set(c.workId, [...(calls.get(c.workId) ?? []), { ...c, order }]),
    );
    const byId = new Map(input.rows.map((w) => [w._id, w]));
    for (const job of this.waits) this.checkWaitJob(job, byId.get(job.id), calls, input.calledOnce);
    for (const job of this.ownJobs) {
      const row = byId.get(job.id);
      expect(row?.state.kind, `final state of the group's own job ${job.key}`).toBe("finished");
      const jobCalls = calls.get(job.id) ?? [];
      if (!input.calledOnce(job.id, jobCalls, `the group's own job ${job.key}`)) continue;
      expect(jobCalls[0].result.kind, `onComplete of ${job.key}`).toBe(row.state.result.kind);
      if (job.canceled || this.isHit(job.id)) continue;
      expect(row.state.result.kind, `result of the group's own job ${job.key}`).toBe("success");
    }
    for (const group of this.groups) {
      await this.checkGroup(group, byId, calls, input.calledOnce);
    }
  }

  private checkWaitJob(
    job: WaitJob,
    row: any,
    calls: Map<string, any[]>,
    calledOnce: (id: string, calls: unknown[], what: string) => boolean,
  ) {
    expect(row?.state.kind, `final state of the waiting job ${job.key}`).toBe("finished");
    const result = row.state.result;
    if (job.canceled && result.kind === "canceled") this.totals.waitsCanceled++;
    // Each attempt ends once: one run of the function per attempt the row counts.
    const runs = probe.attempts.get(job.key) ?? 0;
    expect(runs, `runs of ${job.key}`).toBeLessThanOrEqual(job.maxAttempts);
    const jobCalls = calls.get(job.id) ?? [];
    if (calledOnce(job.id, jobCalls, `the waiting job ${job.key}`)) {
      expect(jobCalls[0].result.kind, `onComplete of ${job.key}`).toBe(result.kind);
    }
    if (job.canceled || this.isHit(job.id)) return;
    // As the completions taken (and the timeouts of attempts that took none) decide.
    let expected: { kind: string; value?: string } = { kind: "failed" };
    let attempts = 0;
    for (let run = 1; run <= job.maxAttempts; run++) {
      attempts = run;
      const taken = job.taken.get(run);
      if (taken?.kind === "success") {
        expected = { kind: "success", value: taken.value };
        break;
      }
      expected = { kind: "failed", value: taken?.value ?? timeoutError(job.timeoutMs) };
      if (taken?.nonRetryable) break;
    }
    const what = `result of the waiting job ${job.key} (taken ${JSON.stringify([...job.taken])})`;
    expect(result.kind, what).toBe(expected.kind);
    if (expected.kind === "success") expect(result.returnValue, what).toBe(expected.value);
    else expect(result.error, what).toBe(expected.value);
    if (result.error === timeoutError(job.timeoutMs)) this.totals.waitsTimedOut++;
    expect(runs, `runs of ${job.key}, one per attempt`).toBe(attempts);
  }

  private async checkGroup(
    group: Group,
    byId: Map<string, any>,
    calls: Map<string, any[]>,
    calledOnce: (id: string, calls: unknown[], what: string) => boolean,
  ) {
    const members = [...group.members].map((id) => byId.get(id));
    const outcome = (kind: string) =>
      members.filter((w) => w?.state.kind === "finished" && w.state.result.kind === kind).length;
    const counts = {
      succeeded: outcome("success"),
      failed: outcome("failed"),
      canceled: outcome("canceled"),
    };
    const status = await this.groupStatus(group.id);
    expect(status, `final groupStatus of ${group.id}`).toMatchObject({
      closed: true,
      done: true,
      total: members.length,
      pending: 0,
      running: 0,
      ...counts,
    });
    expect(status.finishedAt, `finishedAt of ${group.id}`).toBeGreaterThanOrEqual(status.createdAt);
    const groupCalls = calls.get(group.id) ?? [];
    if (!calledOnce(group.id, groupCalls, `the group ${group.id}`)) return;
    this.totals.groupCallbacks++;
    const [call] = groupCalls;
    expect(call.result.counts, `counts the onComplete of ${group.id} got`).toEqual(counts);
    // After each member's own onComplete committed.
    for (const id of group.members) {
      for (const c of calls.get(id) ?? []) {
        expect(c.order, `${id}'s onComplete before its group's`).toBeLessThan(call.order);
      }
    }
  }

  /** The oracle of one schedule's life (see the top of the file). */
  private checkSchedule(life: ScheduleLife, rows: any[], firstStart: Map<string, number>) {
    const late = fireLateMs(this.host.chaos);
    const runs = rows
      .filter((w) => w.schedule === life.name)
      .sort((a, b) => a._creationTime - b._creationTime);
    const fired = runs.filter((w) => !life.runNow.has(w._id));
    this.totals.scheduleRuns += fired.length;
    const times = fired.map((w) => w.scheduledFor as number);
    expect(new Set(times).size, `times of ${life.name} run twice: ${times}`).toBe(times.length);
    // The life's times: each segment's, from its first up to its end; those clearly before the
    // end must have been handled, those just before it may or may not.
    const definite: number[] = [];
    const uncertain: number[] = [];
    for (const segment of life.segments) {
      if (segment.first === null) continue;
      // (A time at the end itself may have fired in the same instant, before the end.)
      for (let time = segment.first; time <= segment.end!; time += segment.stepMs) {
        (time + late <= segment.end! ? definite : uncertain).push(time);
      }
    }
    const known = new Set([...definite, ...uncertain]);
    const maxWindow = Math.max(...life.versions.map((v) => v.catchupWindowMs));
    const minWindow = Math.min(...life.versions.map((v) => v.catchupWindowMs));
    for (const run of fired) {
      const what = `${life.name}'s run ${run._id} for ${run.scheduledFor}`;
      expect(known.has(run.scheduledFor), `${what}: one of its times`).toBe(true);
      expect(run._creationTime, `${what}: enqueued at or after its time`).toBeGreaterThanOrEqual(
        run.scheduledFor,
      );
      // Within the millisecond the fire ran in (a transaction's clock may run one ahead of the
      // test's; and convex-test adds a thousandth of a millisecond to each later row created in
      // the same millisecond, so the fire's run, after dozens of rows, is 115.047 at 115 ms).
      expect(
        Math.floor(run._creationTime),
        `${what}: enqueued within the catch-up window`,
      ).toBeLessThanOrEqual(run.scheduledFor + maxWindow + 1);
      const start = firstStart.get(run._id);
      if (start !== undefined) {
        expect(start, `${what}: started at or after its time`).toBeGreaterThanOrEqual(
          run.scheduledFor,
        );
      }
    }
    // Each time clearly handled with no run has an excuse.
    const ran = new Set(times);
    const versionAt = (at: number) =>
      life.versions.findLast((v) => v.from <= at) ?? life.versions[0];
    for (const time of definite) {
      if (ran.has(time)) continue;
      const version = versionAt(time);
      const caughtUp = definite.concat(uncertain).some((t) => t > time && t <= time + late);
      const mayMiss = version.catchupWindowMs < late;
      const busy =
        (version.overlap === "skip" || version.overlap === "bufferOne") &&
        runs.some(
          (r) =>
            r._creationTime <= time + late &&
            (r.state.kind !== "finished" || r.state.finishedAt > time),
        );
      expect(
        caughtUp || mayMiss || busy,
        `${life.name}'s time ${time} has no run and no excuse (overlap ${version.overlap}, ` +
          `catch-up ${version.catchupWindowMs} ms; runs ${JSON.stringify(runs.map((r) => [r.scheduledFor, r._creationTime, r.state.finishedAt]))})`,
      ).toBe(true);
    }
    const counts = life.counts!;
    this.totals.timesSkipped += counts.skipped;
    this.totals.timesMissed += counts.missed;
    // Counts read as the life ended, in the instant of its unschedule: every run is in them.
    expect(counts.enqueued, `${life.name}'s enqueued count`).toBe(fired.length);
    const handled = counts.enqueued + counts.skipped + counts.missed;
    const story =
      `${life.name}: counts ${JSON.stringify(counts)}, versions ${JSON.stringify(life.versions)}, ` +
      `segments ${JSON.stringify(life.segments)}, runs at ${JSON.stringify(times)}`;
    expect(handled, `times counted, ${story}`).toBeGreaterThanOrEqual(definite.length);
    expect(handled, `times counted, ${story}`).toBeLessThanOrEqual(
      definite.length + uncertain.length,
    );
    if (minWindow >= late) expect(counts.missed, `${life.name}'s missed times`).toBe(0);
    // Overlap rules between consecutive runs, by the version in force when the later came.
    for (let i = 1; i < runs.length; i++) {
      const [before, run] = [runs[i - 1], runs[i]];
      const version = versionAt(run._creationTime);
      const endOf = (w: any) => (w.state.kind === "finished" ? w.state.finishedAt : Infinity);
      const what = `${life.name} (${version.overlap}): run ${run._id} after ${before._id}`;
      if (version.overlap === "skip") {
        expect(run._creationTime, `${what} enqueued after it finished`).toBeGreaterThanOrEqual(
          endOf(before),
        );
      }
      if (version.overlap === "bufferOne") {
        const start = firstStart.get(run._id);
        if (start !== undefined) {
          expect(start, `${what} started after it finished`).toBeGreaterThanOrEqual(endOf(before));
        }
        const third = runs[i + 1];
        if (third !== undefined && versionAt(third._creationTime).overlap === "bufferOne") {
          expect(
            third._creationTime,
            `${life.name}: a third run while ${run._id} waited for ${before._id}`,
          ).toBeGreaterThanOrEqual(endOf(before));
        }
      }
    }
  }
}
