// `npm run demo -- --serve` (see demo.mjs): the demo's email workload on convex-test, with the
// operator dashboard served live on http://127.0.0.1:<port>. The virtual clock advances in steps
// paced by real time (DEMO_SERVE_SPEED virtual ms per real ms), so the page's figures move as the
// pool drains; the page (dashboard/page.tsx, bundled by demo.mjs) polls GET /api/state and sends
// POST /api/action, which call the example app's admin API (convex/workpoolAdmin.ts) as a signed-in
// admin, on the running pool. Every backend call, the clock's steps included, goes through one
// queue, so a request never runs in the middle of a step. Stops after DEMO_SERVE_FOR seconds (real)
// or when demo.mjs asks (Ctrl-C, SIGTERM: it creates DEMO_SERVE_STOP), then prints the pool's final stats as one JSON line ("final stats: {...}").
// It acts as an admin, so only its own page may drive it: what a request must be to reach the pool
// is serveGuard.ts's (its own Host on every route; for an action, its own Origin, JSON, a bounded
// body and one of the six action names).
/// <reference types="vite/client" />
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { existsSync, readFileSync } from "node:fs";
import { convexTest } from "convex-test";
import { it } from "vitest";
import workpoolTest, { register } from "../src/test.js";
import { api } from "../example/convex/_generated/api.js";
import schema from "../example/convex/schema.js";
import { startVirtualClock, step as clockStep } from "../test/virtualClock.js";
import {
  discardRest,
  isRefusal,
  parseAction,
  readBounded,
  refuseForeign,
  type Refusal,
  groupsAsked,
} from "./serveGuard.js";

const modules = import.meta.glob("../example/convex/**/*.ts");

/** Real timers, kept before the virtual clock fakes them. */
const realSetTimeout = globalThis.setTimeout;
const realNow = () => performance.now();
const sleepReal = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

function envNumber(name: string, def: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === "" ? def : Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}

const serving = process.env.DEMO_SERVE === "1";
const jobs = envNumber("DEMO_JOBS", 200);
const parallelism = envNumber("DEMO_PARALLELISM", 10);
const durationMs = envNumber("DEMO_DURATION_MS", 1000);
const failRate = envNumber("DEMO_FAIL_RATE", 0.1);
const seed = envNumber("DEMO_SEED", 1);
const keys = envNumber("DEMO_KEYS", 0);
const port = envNumber("DEMO_SERVE_PORT", 4173);
/** Seconds (real) to serve; 0: until SIGINT. */
const serveForS = envNumber("DEMO_SERVE_FOR", 0);
/** Virtual ms per real ms. */
const speed = envNumber("DEMO_SERVE_SPEED", 1);
/** Virtual seconds between the demo's digests (a schedule, shown in the page's panel); 0: none. */
const digestEveryS = envNumber("DEMO_SERVE_DIGEST_S", 10);
/** Rows of the demo's import (one group, shown in the page's groups panel); 0: none. */
const importRows = envNumber("DEMO_SERVE_IMPORT_ROWS", 60);
const bundlePath = process.env.DEMO_SERVE_BUNDLE ?? "";
/** demo.mjs creates this file to stop the server (on Ctrl-C or SIGTERM). */
const stopFile = process.env.DEMO_SERVE_STOP ?? "";
/** demo.mjs's pid: the server stops if it is gone. */
const parentPid = Number(process.env.DEMO_PARENT_PID ?? 0);

/** Whether demo.mjs asked to stop, or is gone. */
function stopAsked(): boolean {
  if (stopFile !== "" && existsSync(stopFile)) return true;
  if (parentPid > 0) {
    try {
      process.kill(parentPid, 0);
    } catch {
      return true;
    }
  }
  return false;
}

/** The virtual clock's step (ms), as in the workload. */
const STEP_MS = 10;
/** The most jobs one state request lists of a kind (the page asks for more page by page). */
const MAX_JOBS_SHOWN = 200;

/** The signed-in operator the page acts as: an admin by role claim (workpoolAdmin.ts). */
const OPERATOR = { subject: "demo-operator", name: "Demo operator", role: "admin" };

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>emailPool: live dashboard (demo)</title>
<style>body{margin:0;padding:16px;background:#f3f3f5}@media (prefers-color-scheme:dark){body{background:#0b0b0c}}</style>
</head>
<body><div id="root"></div><script src="/app.js"></script></body>
</html>
`;

it.runIf(serving)("serves the live dashboard over the demo's workload", async () => {
  const bundle = readFileSync(bundlePath);
  startVirtualClock();
  const t = convexTest(schema, modules);
  register(t, "emailPool");
  register(t, "scrapePool");
  await Promise.all(
    Object.entries({ ...modules, ...workpoolTest.modules })
      .filter(([path]) => path.split("/").pop()!.split(".").length === 2)
      .map(([, load]) => load()),
  );
  const admin = t.withIdentity(OPERATOR);

  // One queue for every backend call: the clock's steps and the page's requests.
  let tail: Promise<unknown> = Promise.resolve();
  const serial = <R>(fn: () => Promise<R>): Promise<R> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };

  await admin.mutation(api.workpoolAdmin.setMaxParallelism, { maxParallelism: parallelism });
  const CHUNK = 100;
  for (let i = 0; i < jobs; i += CHUNK) {
    const emails = Array.from({ length: Math.min(CHUNK, jobs - i) }, (_, j) => ({
      key: `email-${i + j}`,
      to: `user${i + j}@example.com`,
      poolKey: keys ? `k${(i + j) % keys}` : undefined,
    }));
    await t.mutation(api.emails.sendEmails, { emails, ms: durationMs, failRate, seed });
  }

  // A digest every few seconds (a six-field cron, seconds first): the page's schedules panel
  // shows it firing.
  if (digestEveryS > 0) {
    await t.mutation(api.digests.subscribe, {
      to: "demo@example.com",
      timezone: "UTC",
      cron: `*/${digestEveryS} * * * * *`,
      ms: durationMs,
      failRate,
      seed,
    });
  }

  // An import of rows as one group (example/convex/imports.ts): the page's groups panel shows its
  // progress, and its state turns "done" once the last row finished and its onComplete ran.
  const groups: string[] = [];
  if (importRows > 0) {
    const rows = Array.from({ length: importRows }, (_, i) => ({
      key: `article-${i}`,
      // Every 20th row has no title: bad data, failed without retries.
      title: i % 20 === 19 ? "" : `Article ${i}`,
    }));
    const importId = await t.mutation(api.imports.startImport, {
      name: `articles import (${importRows} rows)`,
      rows,
      ms: durationMs,
      failRate,
      seed,
    });
    const progress = await t.query(api.imports.importProgress, { importId });
    if (progress.status !== null) groups.push(progress.status.id);
  }

  const state = async (query: URLSearchParams) => {
    const count = (name: string, def: number) =>
      Math.min(MAX_JOBS_SHOWN, Math.max(1, Number(query.get(name) ?? def) || def));
    const keysCursor = query.get("keysCursor");
    const jobsOf = async (filter: { state?: "running"; outcome?: "failed" }, n: number) =>
      await admin.query(api.workpoolAdmin.jobs, {
        ...filter,
        paginationOpts: { numItems: n, cursor: null },
      });
    return {
      overview: await admin.query(api.workpoolAdmin.overview, {
        keysPaginationOpts: { numItems: count("keys", 10), cursor: keysCursor },
      }),
      running: await jobsOf({ state: "running" }, count("running", 10)),
      failed: await jobsOf({ outcome: "failed" }, count("failed", 10)),
      schedules: await admin.query(api.workpoolAdmin.schedules, {
        paginationOpts: { numItems: 10, cursor: null },
      }),
      groups: await Promise.all(
        groupsAsked(groups, query.get("groups")).map(async (id) => ({
          id,
          status: await admin.query(api.workpoolAdmin.group, { id }).catch((error: unknown) => ({
            error: (error as { data?: { message?: string } }).data?.message ?? String(error),
          })),
        })),
      ),
      virtualNow: Date.now(),
    };
  };

  const ACTIONS = {
    retry: api.workpoolAdmin.retry,
    cancel: api.workpoolAdmin.cancel,
    pause: api.workpoolAdmin.pause,
    resume: api.workpoolAdmin.resume,
    setKeyParallelism: api.workpoolAdmin.setKeyParallelism,
    setMaxParallelism: api.workpoolAdmin.setMaxParallelism,
    pauseSchedule: api.workpoolAdmin.pauseSchedule,
    resumeSchedule: api.workpoolAdmin.resumeSchedule,
    runScheduleNow: api.workpoolAdmin.runScheduleNow,
    cancelGroup: api.workpoolAdmin.cancelGroup,
  } as const;

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer) => {
    res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
    res.end(body);
  };
  const json = (res: ServerResponse, status: number, value: unknown) =>
    send(res, status, "application/json; charset=utf-8", JSON.stringify(value));
  const refuse = (req: IncomingMessage, res: ServerResponse, { status, error }: Refusal) => {
    // What is left of the body is thrown away (bounded), so the client can read the answer.
    discardRest(req);
    json(res, status, { error });
  };
  const action = async (req: IncomingMessage) => {
    const body = await readBounded(req);
    if (isRefusal(body)) return body;
    return parseAction(body.text, ACTIONS);
  };
  let boundPort = port;

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://localhost");
      try {
        const foreign = refuseForeign(req, boundPort);
        if (foreign !== undefined) return refuse(req, res, foreign);
        if (req.method === "GET" && url.pathname === "/") {
          return send(res, 200, "text/html; charset=utf-8", PAGE);
        }
        if (req.method === "GET" && url.pathname === "/app.js") {
          return send(res, 200, "text/javascript; charset=utf-8", bundle);
        }
        if (req.method === "GET" && url.pathname === "/api/state") {
          return json(res, 200, await serial(() => state(url.searchParams)));
        }
        if (req.method === "POST" && url.pathname === "/api/action") {
          const request = await action(req);
          if (isRefusal(request)) return refuse(req, res, request);
          const fn = ACTIONS[request.name];
          const args = request.args;
          try {
            // The page names one of ACTIONS and its arguments; the admin API validates them.
            const mutate = admin.mutation as (ref: unknown, args: unknown) => Promise<unknown>;
            const value = await serial(() => mutate(fn, args));
            return json(res, 200, { value: value ?? null });
          } catch (error) {
            const data = (error as { data?: { message?: string } }).data;
            return json(res, 200, { error: data?.message ?? String(error) });
          }
        }
        return send(res, 404, "text/plain", "not found");
      } catch (error) {
        return json(res, 500, { error: String(error) });
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address();
  boundPort = typeof address === "object" && address !== null ? address.port : port;
  process.stdout.write(
    `convex-workpool demo: ${jobs} emails through emailPool, maxParallelism ${parallelism}, ` +
      `~${durationMs} ms each, fail rate ${failRate}, seed ${seed}${keys ? `, ${keys} keys` : ""}\n` +
      `dashboard: http://127.0.0.1:${boundPort}/ (virtual time at ${speed}× real; ` +
      `${serveForS ? `serving for ${serveForS} s` : "Ctrl-C to stop"})\n`,
  );

  let stop = false;
  let checkedAt = 0;
  const end = serveForS > 0 ? realNow() + serveForS * 1000 : Infinity;
  // Virtual time owed to the pool: real time passed × speed, taken in steps.
  let owed = 0;
  let last = realNow();
  while (!stop && realNow() < end) {
    const now = realNow();
    if (now - checkedAt > 100) {
      checkedAt = now;
      stop = stopAsked();
    }
    owed += (now - last) * speed;
    last = now;
    while (owed >= STEP_MS && !stop) {
      await serial(() => clockStep(STEP_MS));
      owed -= STEP_MS;
      // Let the server answer between steps when the clock has a lot to catch up.
      if (realNow() - now > 50) break;
    }
    owed = Math.min(owed, 1000 * speed); // never run away after a long pause
    await sleepReal(Math.max(1, STEP_MS / speed));
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
  const final = await serial(() => admin.query(api.workpoolAdmin.overview, {}));
  process.stdout.write(`final stats: ${JSON.stringify(final.stats)}\n`);
});
