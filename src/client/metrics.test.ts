// workpoolMetrics, read back by someone else's parser of Prometheus' text format
// (parse-prometheus-text-format), never by our own regexes: a pure function, so no backend or clock.
import { describe, expect, it } from "vitest";
// @ts-expect-error: the package ships no types; `parsePrometheus` below declares what it returns.
import parseUntyped from "parse-prometheus-text-format";
import { isInvalidArgumentError } from "../component/model/errors.js";
import { vStats, workpoolMetrics, type Stats } from "./index.js";

/** One metric family as the parser returns it (values are the sample's text; TYPE upper-cased). */
type ParsedFamily = {
  name: string;
  help: string;
  type: string;
  metrics: Array<{ value: string; labels: Record<string, string> }>;
};
const parsePrometheus = parseUntyped as (text: string) => ParsedFamily[];

const EMAILS: Stats = {
  pending: 12,
  running: 3,
  maxParallelism: 10,
  // Set by an operator (the value in force); SCRAPE's is unset.
  operatorMaxParallelism: 10,
  paused: false,
  oldestPendingMs: 1500,
  lastMinute: { started: 40, succeeded: 30, failed: 2, canceled: 1, retried: 5 },
  totals: { enqueued: 900, started: 880, succeeded: 850, failed: 12, canceled: 4, retried: 20 },
};
const SCRAPE: Stats = {
  pending: 0,
  running: 0,
  maxParallelism: 2,
  operatorMaxParallelism: null,
  paused: true,
  oldestPendingMs: 0,
  lastMinute: { started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 },
  totals: { enqueued: 0, started: 0, succeeded: 0, failed: 0, canceled: 0, retried: 0 },
};

const FAMILY_NAMES = [
  "workpool_pending_jobs",
  "workpool_running_jobs",
  "workpool_max_parallelism",
  "workpool_operator_max_parallelism",
  "workpool_paused",
  "workpool_oldest_pending_seconds",
  "workpool_last_minute_events",
  "workpool_events_total",
];
/** The families that only grow: Prometheus counters; the rest are gauges. */
const COUNTERS = ["workpool_events_total"];
const EVENTS = ["started", "succeeded", "failed", "canceled", "retried"] as const;

/** The parsed family named `name` (fails the test if there is none). */
function family(families: ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((f) => f.name === name);
  expect(found, name).toBeDefined();
  return found!;
}

/** A family's samples as `{ "<label values>": value }`, e.g. `{ "emails,started": 40 }`. */
function values(found: ParsedFamily): Record<string, number> {
  return Object.fromEntries(
    found.metrics.map((m) => [Object.values(m.labels).join(","), Number(m.value)]),
  );
}

/** The error `fn` throws (fails the test if it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail("expected a throw");
}

/** The argument the InvalidArgument error of `fn` names. */
function badArgument(fn: () => unknown): string {
  const error = thrown(fn);
  expect(isInvalidArgumentError(error), String(error)).toBe(true);
  return (error as { data: { argument: string } }).data.argument;
}

describe("workpoolMetrics", () => {
  it("writes one family per figure, each with its HELP and TYPE lines", () => {
    const text = workpoolMetrics({ emails: EMAILS });
    const families = parsePrometheus(text);
    expect(families.map((f) => f.name)).toEqual(FAMILY_NAMES);
    for (const f of families) {
      expect(f.type, f.name).toBe(COUNTERS.includes(f.name) ? "COUNTER" : "GAUGE");
    }
    const helpOf = (name: string) => family(families, name).help;
    expect(helpOf("workpool_pending_jobs")).toBe(
      "Unfinished jobs not running: due, delayed, waiting for their key, or backing off before a retry.",
    );
    expect(helpOf("workpool_running_jobs")).toBe("Jobs running now.");
    expect(helpOf("workpool_max_parallelism")).toContain("maxParallelism");
    expect(helpOf("workpool_paused")).toMatch(/^1 while the pool is paused .*, else 0\.$/);
    expect(helpOf("workpool_oldest_pending_seconds")).toContain("in seconds");
    expect(helpOf("workpool_last_minute_events")).toContain(
      "the current second and the 59 before it",
    );
    expect(helpOf("workpool_events_total")).toContain("since the pool began");
    // Each family's HELP and TYPE come before its samples, as the format requires.
    const lines = text.split("\n");
    for (const name of FAMILY_NAMES) {
      const help = lines.indexOf(lines.find((l) => l.startsWith(`# HELP ${name} `))!);
      expect(lines[help + 1]).toBe(
        `# TYPE ${name} ${COUNTERS.includes(name) ? "counter" : "gauge"}`,
      );
      expect(lines[help + 2]).toMatch(new RegExp(`^${name}\\{`));
    }
  });

  it("labels each pool's samples with its name, and writes the figures in base units", () => {
    const families = parsePrometheus(workpoolMetrics({ emails: EMAILS, scrape: SCRAPE }));
    const of = (name: string) => values(family(families, name));
    expect(of("workpool_pending_jobs")).toEqual({ emails: 12, scrape: 0 });
    expect(of("workpool_running_jobs")).toEqual({ emails: 3, scrape: 0 });
    expect(of("workpool_max_parallelism")).toEqual({ emails: 10, scrape: 2 });
    // Only a pool whose operator set a maxParallelism has a sample.
    expect(of("workpool_operator_max_parallelism")).toEqual({ emails: 10 });
    expect(of("workpool_paused")).toEqual({ emails: 0, scrape: 1 });
    expect(of("workpool_oldest_pending_seconds")).toEqual({ emails: 1.5, scrape: 0 });
    expect(of("workpool_last_minute_events")).toEqual({
      "emails,started": 40,
      "emails,succeeded": 30,
      "emails,failed": 2,
      "emails,canceled": 1,
      "emails,retried": 5,
      ...Object.fromEntries(EVENTS.map((event) => [`scrape,${event}`, 0])),
    });
    expect(of("workpool_events_total")).toEqual({
      "emails,enqueued": 900,
      "emails,started": 880,
      "emails,succeeded": 850,
      "emails,failed": 12,
      "emails,canceled": 4,
      "emails,retried": 20,
      ...Object.fromEntries(["enqueued", ...EVENTS].map((event) => [`scrape,${event}`, 0])),
    });
    for (const sample of family(families, "workpool_events_total").metrics) {
      expect(Object.keys(sample.labels)).toEqual(["pool", "event"]);
    }
    for (const sample of family(families, "workpool_last_minute_events").metrics) {
      expect(Object.keys(sample.labels)).toEqual(["pool", "event"]);
    }
  });

  it("shows every figure of Stats in exactly one sample", () => {
    // Derived from the validator, so a figure added to Stats without a metric fails here.
    const leaves = Object.entries(vStats.fields).flatMap(([field, validator]) =>
      validator.kind === "object"
        ? Object.keys(validator.fields).map((inner) => [field, inner])
        : [[field]],
    );
    expect(leaves).toHaveLength(17);
    const samplesOf = (stats: Stats) =>
      parsePrometheus(workpoolMetrics({ emails: stats })).flatMap((f) =>
        f.metrics.map((m) => `${f.name}${JSON.stringify(m.labels)} ${m.value}`),
      );
    const before = samplesOf(EMAILS);
    expect(before).toHaveLength(leaves.length);
    for (const path of leaves) {
      const changed = structuredClone(EMAILS) as Record<string, any>;
      const parent = path.length === 2 ? changed[path[0]] : changed;
      const field = path[path.length - 1];
      parent[field] = typeof parent[field] === "boolean" ? !parent[field] : parent[field] + 7;
      const after = samplesOf(changed as Stats);
      const differing = after.filter((sample, i) => sample !== before[i]);
      expect(differing, path.join(".")).toHaveLength(1);
    }
  });

  it("escapes backslash, double quote and line feed in pool names", () => {
    const name = 'tenant "a"\\b\nsecond line';
    const text = workpoolMetrics({ [name]: EMAILS, plain: SCRAPE });
    // One line per sample: the line feed in the name is written as \n.
    expect(text.split("\n").filter((l) => l.startsWith("workpool_running_jobs{"))).toHaveLength(2);
    expect(text).toContain('workpool_running_jobs{pool="tenant \\"a\\"\\\\b\\nsecond line"} 3\n');
    const running = family(parsePrometheus(text), "workpool_running_jobs");
    expect(running.metrics.map((m) => m.labels.pool)).toEqual([name, "plain"]);
    expect(values(running)).toEqual({ [name]: 3, plain: 0 });
  });

  it("ends every line, the last one included, with a line feed", () => {
    const text = workpoolMetrics({ emails: EMAILS });
    expect(text.endsWith("\n")).toBe(true);
    expect(text.endsWith("\n\n")).toBe(false);
    expect(text.includes("\r")).toBe(false);
  });

  it("describes every family even with no pools", () => {
    const families = parsePrometheus(workpoolMetrics({}));
    expect(families.map((f) => f.name)).toEqual(FAMILY_NAMES);
    for (const f of families) expect(f.metrics, f.name).toEqual([]);
  });

  describe("bad input", () => {
    const emailsWith = (patch: Record<string, unknown>) =>
      ({ emails: { ...EMAILS, ...patch } }) as unknown as Record<string, Stats>;

    it("rejects an empty pool name", () => {
      expect(badArgument(() => workpoolMetrics({ "": EMAILS }))).toBe("statsByPool");
      expect(String(thrown(() => workpoolMetrics({ "": EMAILS })))).toContain(
        "a pool name must not be empty",
      );
    });

    it("rejects stats missing a figure, naming it", () => {
      const noPending: Partial<Stats> = { ...EMAILS };
      delete noPending.pending;
      expect(badArgument(() => workpoolMetrics({ emails: noPending as Stats }))).toBe(
        "statsByPool.emails.pending",
      );
      expect(badArgument(() => workpoolMetrics(emailsWith({ lastMinute: undefined })))).toBe(
        "statsByPool.emails.lastMinute",
      );
      const noRetried: Partial<Stats["lastMinute"]> = { ...EMAILS.lastMinute };
      delete noRetried.retried;
      expect(badArgument(() => workpoolMetrics(emailsWith({ lastMinute: noRetried })))).toBe(
        "statsByPool.emails.lastMinute.retried",
      );
      expect(badArgument(() => workpoolMetrics(emailsWith({ paused: "no" })))).toBe(
        "statsByPool.emails.paused",
      );
      expect(
        badArgument(() => workpoolMetrics(emailsWith({ operatorMaxParallelism: undefined }))),
      ).toBe("statsByPool.emails.operatorMaxParallelism");
    });

    it("rejects a negative or non-finite figure, naming it", () => {
      for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, "3"]) {
        expect(badArgument(() => workpoolMetrics(emailsWith({ running: bad })))).toBe(
          "statsByPool.emails.running",
        );
        expect(
          badArgument(() => workpoolMetrics(emailsWith({ operatorMaxParallelism: bad }))),
        ).toBe("statsByPool.emails.operatorMaxParallelism");
        const lastMinute = { ...EMAILS.lastMinute, failed: bad };
        expect(badArgument(() => workpoolMetrics(emailsWith({ lastMinute })))).toBe(
          "statsByPool.emails.lastMinute.failed",
        );
      }
      expect(String(thrown(() => workpoolMetrics(emailsWith({ oldestPendingMs: -5 }))))).toContain(
        "workpool: invalid statsByPool.emails.oldestPendingMs: must be a finite number ≥ 0 (got -5)",
      );
    });

    it("names a pool that is not an identifier in brackets", () => {
      const stats = { ...EMAILS, pending: -1 };
      expect(badArgument(() => workpoolMetrics({ "my pool": stats }))).toBe(
        'statsByPool["my pool"].pending',
      );
    });

    it("rejects statsByPool that is not an object of Stats", () => {
      for (const bad of [null, [EMAILS], "emails"]) {
        expect(badArgument(() => workpoolMetrics(bad as unknown as Record<string, Stats>))).toBe(
          "statsByPool",
        );
      }
      expect(badArgument(() => workpoolMetrics({ emails: null as unknown as Stats }))).toBe(
        "statsByPool.emails",
      );
    });
  });
});
