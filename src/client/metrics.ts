/**
 * `workpoolMetrics`: pools' `stats` in Prometheus' text exposition format (version 0.0.4), for an
 * app's `/metrics` httpAction. Owns the metric families (names, types, HELP text), the one unit
 * conversion (ms → s) and the format's escaping. A pure function of its argument: it never reads or
 * writes a database and never calls the component (the caller passes what `pool.stats` returned),
 * and it never writes a figure it cannot vouch for: malformed stats throw, naming the field, rather
 * than becoming a sample a scraper would trust.
 */
import { invalidArgument } from "../component/model/errors.js";
import { vPoolStats, type PoolStats } from "../component/model/validators.js";

/** The Content-Type to serve `workpoolMetrics`' output with (the text format, version 0.0.4). */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Prometheus wants durations in seconds, its base unit; `stats` reports milliseconds. */
const MS_PER_SECOND = 1000;

type EventName = keyof PoolStats["lastMinute"];
/** `lastMinute`'s events in the validator's order: the values of the `event` label. */
const EVENTS = Object.keys(vPoolStats.fields.lastMinute.fields) as EventName[];
type TotalName = keyof PoolStats["totals"];
/** `totals`' events in the validator's order (`enqueued` first): the values of its `event` label. */
const TOTALS = Object.keys(vPoolStats.fields.totals.fields) as TotalName[];

type Sample = { labels: Record<string, string>; value: number };

/** One metric family: every pool's samples of one figure of `Stats`. */
type Family = {
  name: string;
  /** A current value (`lastMinute` is a sliding window), or a total that only grows (`totals`). */
  type: "gauge" | "counter";
  help: string;
  /** One pool's samples, without the `pool` label. */
  samples: (stats: PoolStats) => Sample[];
};

const one = (value: number): Sample[] => [{ labels: {}, value }];

const FAMILIES: readonly Family[] = [
  {
    name: "workpool_pending_jobs",
    type: "gauge",
    help: "Unfinished jobs not running: due, delayed, waiting for their key, or backing off before a retry.",
    samples: (stats) => one(stats.pending),
  },
  {
    name: "workpool_running_jobs",
    type: "gauge",
    help: "Jobs running now.",
    samples: (stats) => one(stats.running),
  },
  {
    name: "workpool_max_parallelism",
    type: "gauge",
    help: "How many jobs the pool may run at once (its maxParallelism; 0 starts none).",
    samples: (stats) => one(stats.maxParallelism),
  },
  {
    name: "workpool_operator_max_parallelism",
    type: "gauge",
    help: "The operator's maxParallelism (setMaxParallelism), in force while set; no sample while unset.",
    samples: (stats) =>
      stats.operatorMaxParallelism === null ? [] : one(stats.operatorMaxParallelism),
  },
  {
    name: "workpool_paused",
    type: "gauge",
    help: "1 while the pool is paused (no attempt starts, retries included, until resume), else 0.",
    samples: (stats) => one(stats.paused ? 1 : 0),
  },
  {
    name: "workpool_oldest_pending_seconds",
    type: "gauge",
    help: "How long the longest-waiting due job has waited, in seconds; 0 when no job is due.",
    samples: (stats) => one(stats.oldestPendingMs / MS_PER_SECOND),
  },
  {
    name: "workpool_last_minute_events",
    type: "gauge",
    help:
      "Events in the current second and the 59 before it: started (attempts that began, retries included; not a task an executor gave back unstarted), " +
      "succeeded, failed and canceled (jobs that finished so), retried (failed attempts that will run again).",
    samples: (stats) =>
      EVENTS.map((event) => ({ labels: { event }, value: stats.lastMinute[event] })),
  },
  {
    name: "workpool_events_total",
    type: "counter",
    help:
      "Events since the pool began (or since the upgrade that added these counters): enqueued (jobs " +
      "created, retry() included), started (attempts that began), succeeded, failed and canceled (jobs that " +
      "finished so), retried (failed attempts that will run again).",
    samples: (stats) => TOTALS.map((event) => ({ labels: { event }, value: stats.totals[event] })),
  },
];

/**
 * The pools' figures in Prometheus' text exposition format (version 0.0.4; serve it with
 * `METRICS_CONTENT_TYPE`): one family per figure of `Stats`, each with its `# HELP` and
 * `# TYPE` lines, and one sample per pool labeled `pool="<name>"` (in the order of `statsByPool`):
 * `workpool_pending_jobs`, `workpool_running_jobs`, `workpool_max_parallelism` (the value in force),
 * `workpool_operator_max_parallelism` (only for a pool whose operator set one), `workpool_paused`
 * (0 or 1), `workpool_oldest_pending_seconds`, and `workpool_last_minute_events` with an `event`
 * label (`started`, `succeeded`, `failed`, `canceled`, `retried`), which counts the current second
 * and the 59 before it; and the counter `workpool_events_total` with an `event` label (`enqueued`,
 * `started`, `succeeded`, `failed`, `canceled`, `retried`): `totals`, which only grow.
 *
 * Throws an InvalidArgument error naming the argument (e.g. `statsByPool.emails.pending`) for an
 * empty pool name, or a Stats missing a figure or with a negative or non-finite one.
 *
 * ```ts
 * http.route({
 *   path: "/metrics",
 *   method: "GET",
 *   handler: httpAction(async (ctx) => {
 *     const body = workpoolMetrics({ emails: await emailPool.stats(ctx) });
 *     return new Response(body, { headers: { "Content-Type": METRICS_CONTENT_TYPE } });
 *   }),
 * });
 * ```
 */
export function workpoolMetrics(statsByPool: Record<string, PoolStats>): string {
  if (typeof statsByPool !== "object" || statsByPool === null || Array.isArray(statsByPool)) {
    invalidArgument("statsByPool", "must be an object of Stats by pool name", statsByPool);
  }
  const pools = Object.entries(statsByPool);
  for (const [pool, stats] of pools) {
    // An empty label value is the same as no label to Prometheus: the pool could not be told apart.
    if (pool === "") invalidArgument("statsByPool", "a pool name must not be empty", pool);
    checkFields(`statsByPool${pathSegment(pool)}`, stats, vPoolStats.fields);
  }
  const lines: string[] = [];
  for (const family of FAMILIES) {
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const [pool, stats] of pools) {
      for (const { labels, value } of family.samples(stats)) {
        const labelText = Object.entries({ pool, ...labels })
          .map(([name, labelValue]) => `${name}="${escapeLabelValue(labelValue)}"`)
          .join(",");
        lines.push(`${family.name}{${labelText}} ${value}`);
      }
    }
  }
  // Every line ends with a line feed, the last one included.
  return `${lines.join("\n")}\n`;
}

/** The fields of a validated object (what `vPoolStats.fields` holds), as far as this checks them. */
type FieldValidators = Record<
  string,
  { kind: string; fields?: FieldValidators; members?: Array<{ kind: string }> }
>;

/** Checks `value` against the validator's fields (numbers finite and ≥ 0); throws naming the first
 * bad one as `path.field`. The validator, not a list kept here, says which figures a Stats has. */
function checkFields(path: string, value: unknown, fields: FieldValidators): void {
  if (typeof value !== "object" || value === null) {
    invalidArgument(path, "must be an object", value);
  }
  for (const [field, validator] of Object.entries(fields)) {
    const at = `${path}.${field}`;
    const given = (value as Record<string, unknown>)[field];
    switch (validator.kind) {
      case "float64":
        if (typeof given !== "number" || !Number.isFinite(given) || given < 0) {
          invalidArgument(at, "must be a finite number ≥ 0", given);
        }
        break;
      case "boolean":
        if (typeof given !== "boolean") invalidArgument(at, "must be a boolean", given);
        break;
      case "object":
        checkFields(at, given, validator.fields ?? {});
        break;
      case "union": {
        // A figure that may be unset: a number, or null (operatorMaxParallelism).
        const kinds = (validator.members ?? []).map((member) => member.kind).sort();
        if (kinds.join() !== "float64,null") {
          throw new Error(`workpool: workpoolMetrics cannot check ${at}, a ${kinds.join(" | ")}`);
        }
        if (given !== null && (typeof given !== "number" || !Number.isFinite(given) || given < 0)) {
          invalidArgument(at, "must be null or a finite number ≥ 0", given);
        }
        break;
      }
      default:
        throw new Error(`workpool: workpoolMetrics cannot check ${at}, a ${validator.kind}`);
    }
  }
}

/** How a pool name appears in an argument's path: `.emails`, or `["my pool"]` if not a name. */
function pathSegment(pool: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(pool) ? `.${pool}` : `[${JSON.stringify(pool)}]`;
}

/** A label value as the format writes it: backslash, double quote and line feed escaped. */
function escapeLabelValue(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text as the format writes it: backslash and line feed escaped. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}
