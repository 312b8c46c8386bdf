/**
 * The model test's start rules (test/shareOracle.ts `StartRules`) on views built by hand: each
 * rule reports the case it exists for and stays quiet on its neighbours, so a model run that finds
 * nothing found nothing because the pool kept the rules, not because the oracle cannot see. No
 * backend: a view is rows, a clock and the loop's "started" lines.
 */
import { describe, expect, it } from "vitest";
import {
  CLEARLY_DUE_MS,
  IDLE_SLOT_LIMIT_MS,
  KeyShares,
  StartRules,
  withFairnessSwitch,
  type PoolView,
  type RuleJob,
  type RuleRow,
} from "./shareOracle.js";

const T0 = 1_000_000;

const pending = (id: string, key?: string): RuleRow => ({
  _id: id,
  ...(key === undefined ? {} : { key }),
  attempts: 0,
  state: { kind: "pending" },
});
const running = (id: string, startedAt: number, key?: string): RuleRow => ({
  _id: id,
  ...(key === undefined ? {} : { key }),
  attempts: 0,
  state: { kind: "running", startedAt },
});
const dueJob = (id: string, dueAt = T0 - 2 * CLEARLY_DUE_MS): RuleJob => ({
  id,
  kind: "action",
  dueAt,
  canceled: false,
});

/** A view at `now` with the defaults of a plain program: nothing paused, no rate limit. */
const viewAt = (now: number, rows: RuleRow[], more: Partial<PoolView> = {}): PoolView => ({
  now,
  rows,
  maxParallelism: 2,
  paused: false,
  rateLimited: false,
  pausedKeys: new Set(),
  fairness: "share",
  keyLimit: () => 2,
  started: [],
  ...more,
});

/** Looks every 100 ms from T0 for `ms`, the same rows each time; the rules broken at any look. */
function lookThroughout(rules: StartRules, rows: RuleRow[], ms: number, more = {}) {
  const broken: string[] = [];
  for (let at = T0; at <= T0 + ms; at += 100) broken.push(...rules.look(viewAt(at, rows, more)));
  return broken;
}

describe("no slot idle while a due job could start", () => {
  it("reports a due job waiting beside a free slot throughout the limit", () => {
    const rules = new StartRules(new KeyShares(), () => [dueJob("j")]);
    const broken = lookThroughout(
      rules,
      [running("r", T0 - 100), pending("j")],
      IDLE_SLOT_LIMIT_MS + 100,
    );
    expect(broken[0]).toMatch(/^j \(due at .*\) waited 1500 ms with 1 of 2 slots taken/);
  });

  it("is quiet while every slot is taken, the pool is paused or a rate limit holds slots", () => {
    const rows = [running("r1", T0 - 100), running("r2", T0 - 100), pending("j")];
    const jobs = () => [dueJob("j")];
    expect(lookThroughout(new StartRules(new KeyShares(), jobs), rows, 3_000)).toEqual([]);
    const two = [running("r", T0 - 100), pending("j")];
    for (const more of [{ paused: true }, { rateLimited: true }]) {
      expect(lookThroughout(new StartRules(new KeyShares(), jobs), two, 3_000, more)).toEqual([]);
    }
  });

  it("is quiet when the job's key may not start: paused, at its parallelism, or rate-limited", () => {
    const jobs = () => [dueJob("j")];
    const rows = [running("r", T0 - 100, "A"), pending("j", "A")];
    const atLimit = { keyLimit: () => 1 };
    expect(lookThroughout(new StartRules(new KeyShares(), jobs), rows, 3_000, atLimit)).toEqual([]);
    const paused = { pausedKeys: new Set(["A"]) };
    expect(lookThroughout(new StartRules(new KeyShares(), jobs), rows, 3_000, paused)).toEqual([]);
    const shares = new KeyShares();
    shares.apply({ op: "setKeyRateLimit", key: "A", rateLimit: { starts: 1, periodMs: 500 } }, 0);
    expect(lookThroughout(new StartRules(shares, jobs), rows, 3_000)).toEqual([]);
  });

  it("does not count across a gap in the looks or an operation (reset)", () => {
    const rules = new StartRules(new KeyShares(), () => [dueJob("j")]);
    const rows = [running("r", T0 - 100), pending("j")];
    const broken: string[] = [];
    for (let at = T0; at <= T0 + 3_000; at += 100) {
      if (at % 1_000 === 0) rules.reset();
      broken.push(...rules.look(viewAt(at, rows)));
    }
    expect(broken).toEqual([]);
  });

  it("leaves a job alone until it has been due for CLEARLY_DUE_MS", () => {
    const rules = new StartRules(new KeyShares(), () => [dueJob("j", T0 + 1_000)]);
    const broken = lookThroughout(rules, [running("r", T0 - 100), pending("j")], 2_900);
    expect(broken).toEqual([]);
  });
});

describe("a reserve is never passed over", () => {
  /** Key A below its reserve of 1 with a job due; `starter` takes a first start between two looks. */
  function passOver(starter: RuleRow, also: RuleRow[] = [], more: Partial<PoolView> = {}) {
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 1 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1")]);
    const before = [pending("a1", "A"), { ...starter, state: { kind: "pending" as const } }];
    const started = [{ at: T0 + 50, workId: starter._id }];
    rules.look(viewAt(T0, [...before, ...also], more));
    return rules.look(
      viewAt(T0 + 100, [pending("a1", "A"), starter, ...also], { ...more, started }),
    );
  }

  it("reports a first start without a key while a key waits below its reserve", () => {
    expect(passOver(running("u", T0 + 50))).toEqual([
      expect.stringMatching(/^A ran 0 of its reserve 1 with a1 due, but u of no key started first/),
    ]);
  });

  it("reports a first start of another key at its reserve (0)", () => {
    expect(passOver(running("b", T0 + 50, "B"))).toHaveLength(1);
  });

  it('is quiet in due order (fairness "due" keeps no reserves)', () => {
    expect(passOver(running("u", T0 + 50), [], { fairness: "due" })).toEqual([]);
  });

  it("is quiet when the waiting key got a start in the same window", () => {
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 2 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1"), dueJob("a2")]);
    rules.look(viewAt(T0, [pending("a1", "A"), pending("a2", "A"), pending("u")]));
    const started = [
      { at: T0 + 50, workId: "a1" },
      { at: T0 + 50, workId: "u" },
    ];
    const after = [running("a1", T0 + 50, "A"), pending("a2", "A"), running("u", T0 + 50)];
    expect(rules.look(viewAt(T0 + 100, after, { started }))).toEqual([]);
  });

  it("is quiet when the starter's key was itself below its reserve", () => {
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 1 } }, 0);
    shares.apply({ op: "setKeyShare", key: "B", share: { reserve: 1 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1"), dueJob("b1")]);
    rules.look(viewAt(T0, [pending("a1", "A"), pending("b1", "B")]));
    const started = [{ at: T0 + 50, workId: "b1" }];
    const after = [pending("a1", "A"), running("b1", T0 + 50, "B")];
    expect(rules.look(viewAt(T0 + 100, after, { started }))).toEqual([]);
  });

  it("is quiet when the waiting key is at its parallelism or paused", () => {
    // A holds its only slot (parallelism 1), so its reserve of 2 is capped at 1 and met; or A,
    // with room, is paused.
    const holder = running("a0", T0 - 500, "A");
    for (const more of [
      { keyLimit: (key: string) => (key === "A" ? 1 : 2) },
      { pausedKeys: new Set(["A"]) },
    ]) {
      const shares = new KeyShares();
      shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 2 } }, 0);
      const rules = new StartRules(shares, () => [dueJob("a1")]);
      rules.look(viewAt(T0, [holder, pending("a1", "A"), pending("u")], more));
      const started = [{ at: T0 + 50, workId: "u" }];
      const after = [holder, pending("a1", "A"), running("u", T0 + 50)];
      expect(rules.look(viewAt(T0 + 100, after, { ...more, started }))).toEqual([]);
    }
  });

  it("is quiet for a key whose next job in order holds its slot (its level is that job's)", () => {
    const holder: RuleRow = { ...pending("a0", "A"), snoozes: 1 };
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 2 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1")]);
    const more = { keyLimit: () => 3 };
    rules.look(viewAt(T0, [holder, pending("a1", "A"), pending("u")], more));
    const started = [{ at: T0 + 50, workId: "u" }];
    const after = [holder, pending("a1", "A"), running("u", T0 + 50)];
    expect(rules.look(viewAt(T0 + 100, after, { ...more, started }))).toEqual([]);
  });

  it("judges a window with an executor task running like any other", () => {
    const task: RuleRow = {
      ...running("t", T0 - 500, "B"),
      state: { kind: "running", startedAt: T0 - 500, executorId: "e1" },
    };
    expect(passOver(running("u", T0 + 50), [task])).toHaveLength(1);
  });

  it("is quiet when the starter's attempt at its reserve ended between the looks", () => {
    // B's reserve of 1 is met by b0 at the first look; b0 ends (its row keeps the start's time)
    // and frees B's only slot, so B is below its reserve again when b1 starts: B and A take turns.
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 1 } }, 0);
    shares.apply({ op: "setKeyShare", key: "B", share: { reserve: 1 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1"), dueJob("b1")]);
    const more = { keyLimit: () => 1 };
    const b0 = running("b0", T0 - 500, "B");
    rules.look(viewAt(T0, [pending("a1", "A"), b0, pending("b1", "B")], more));
    const ended: RuleRow = { ...b0, attempts: 1, state: { kind: "finished", startedAt: T0 - 500 } };
    const after = [pending("a1", "A"), ended, running("b1", T0 + 50, "B")];
    const started = [{ at: T0 + 50, workId: "b1" }];
    expect(rules.look(viewAt(T0 + 100, after, { ...more, started }))).toEqual([]);
    // With b0 still running at the second look, B was at its reserve throughout: passed over.
    const rules2 = new StartRules(shares, () => [dueJob("a1"), dueJob("b1")]);
    const two = { keyLimit: () => 2 };
    rules2.look(viewAt(T0, [pending("a1", "A"), b0, pending("b1", "B")], two));
    const still = [pending("a1", "A"), b0, running("b1", T0 + 50, "B")];
    expect(rules2.look(viewAt(T0 + 100, still, { ...two, started }))).toHaveLength(1);
  });

  it("is quiet for a retry's start (a job holding its key's slot follows its own rule)", () => {
    const retry: RuleRow = { ...running("u", T0 + 50), attempts: 1 };
    const shares = new KeyShares();
    shares.apply({ op: "setKeyShare", key: "A", share: { reserve: 1 } }, 0);
    const rules = new StartRules(shares, () => [dueJob("a1")]);
    rules.look(viewAt(T0, [pending("a1", "A"), { ...pending("u"), attempts: 1 }]));
    const started = [{ at: T0 + 50, workId: "u" }];
    expect(rules.look(viewAt(T0 + 100, [pending("a1", "A"), retry], { started }))).toEqual([]);
  });
});

describe("no key starts more than its rate limit in a window", () => {
  /** The loop's starts of key A at these times, each after `order` starts of any key. */
  const startsOfA = (...ats: number[]) => ats.map((at, order) => ({ at, order }));
  const oneIn200 = (startsBefore: number) => {
    const shares = new KeyShares();
    const rateLimit = { starts: 1, periodMs: 200 };
    shares.apply({ op: "setKeyRateLimit", key: "A", rateLimit }, startsBefore);
    return shares;
  };
  const check = (shares: KeyShares, starts: Array<{ at: number; order: number }>) => () =>
    shares.check(["A"], (key) => (key === "A" ? starts : []));

  it("reports two starts in one window after the limit was set", () => {
    expect(check(oneIn200(0), startsOfA(T0, T0 + 150))).toThrow(/starts of A in one window/);
  });

  it("is quiet for starts a window apart", () => {
    expect(check(oneIn200(0), startsOfA(T0, T0 + 200, T0 + 400))).not.toThrow();
  });

  it("counts from the starts logged after the change, whatever their clock says", () => {
    // A pass that ran before the change logged both at a clock a millisecond past the test's.
    expect(check(oneIn200(2), startsOfA(T0 + 1, T0 + 1))).not.toThrow();
    expect(check(oneIn200(1), startsOfA(T0 + 1, T0 + 1, T0 + 100))).toThrow(/in one window/);
  });

  it("is quiet once the limit is removed", () => {
    const shares = oneIn200(0);
    shares.apply({ op: "setKeyRateLimit", key: "A", rateLimit: false }, 0);
    expect(check(shares, startsOfA(T0, T0 + 1))).not.toThrow();
  });
});

describe("switches of fairness drawn into a program", () => {
  const ops = ["a", "b", "c"];
  const names = (out: unknown[]) =>
    out.map((o) => (typeof o === "string" ? o : (o as { fairness: string }).fairness));

  it("puts the switch to due at its place, and the switch back after it", () => {
    expect(names(withFairnessSwitch(ops, { at: 1, back: 1 }))).toEqual([
      "a",
      "due",
      "b",
      "share",
      "c",
    ]);
    expect(names(withFairnessSwitch(ops, { at: 5, back: 0 }))).toEqual([
      "a",
      "due",
      "share",
      "b",
      "c",
    ]);
    expect(names(withFairnessSwitch(ops, { at: 3, back: undefined }))).toEqual([
      "a",
      "b",
      "c",
      "due",
    ]);
  });

  it("leaves a program without a draw as it was", () => {
    expect(withFairnessSwitch(ops, undefined)).toBe(ops);
  });
});
