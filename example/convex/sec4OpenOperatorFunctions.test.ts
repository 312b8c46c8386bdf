// Security review 2026-11-27, finding S2: the example app guards its dashboard functions
// (workpoolAdmin.ts: "anyone else, and anyone not signed in, gets workpool/Unauthorized and
// nothing else"), yet the same app exports public functions that operate and read the same pool
// with no check at all (admin.ts, jobs.ts). A caller who is not signed in does through them what
// workpoolAdmin.ts refuses even to a signed-in "operator": pause emailPool, stop it with
// maxParallelism 0, cancel a job, and read a job's details; and GET /metrics (http.ts) answers
// anyone. A fix must make each of these fail for a caller the admin API refuses, and change
// nothing (or make them internal functions); /metrics needs a secret, as docs/operating.md shows.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { isUnauthorizedError } from "convex-workpool";
import { runFor, setup, useExampleApp, type T } from "./test.setup.js";
import { api } from "./_generated/api.js";

useExampleApp();

const sim = { ms: 100, failRate: 0, seed: 7 };
const ADMIN_ROLE = { subject: "u2", role: "admin" };

/** The pool as an admin sees it through the guarded API. */
async function stats(t: T) {
  return (await t.withIdentity(ADMIN_ROLE).query(api.workpoolAdmin.overview, {})).stats;
}

/** Whether `call` failed (any error: the app may refuse however it likes). */
async function failed(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return false;
  } catch {
    return true;
  }
}

describe("S2: the example app's other public functions bypass workpoolAdmin's guard", () => {
  it("the guarded API refuses an anonymous caller (the baseline)", async () => {
    const t = setup();
    let error: unknown;
    try {
      await t.mutation(api.workpoolAdmin.pause, {});
    } catch (e) {
      error = e;
    }
    expect(isUnauthorizedError(error)).toBe(true);
    expect((await stats(t)).paused).toBe(false);
  });

  it("an anonymous caller cannot pause emailPool through admin.pause", async () => {
    const t = setup();
    expect(await failed(t.mutation(api.admin.pause, { pool: "emailPool" }))).toBe(true);
    expect((await stats(t)).paused).toBe(false);
  });

  it("an anonymous caller cannot set emailPool's maxParallelism to 0 through jobs.setMaxParallelism", async () => {
    const t = setup();
    const before = (await stats(t)).maxParallelism;
    expect(
      await failed(
        t.mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: 0 }),
      ),
    ).toBe(true);
    expect((await stats(t)).maxParallelism).toBe(before);
  });

  it("an anonymous caller cannot cancel a job, nor read its details", async () => {
    const t = setup();
    const [id] = await t.mutation(api.emails.sendEmails, {
      emails: [{ key: "a", to: "ada@example.com" }],
      ...sim,
      ms: 60_000,
    });
    await runFor(500);
    expect(await failed(t.query(api.admin.jobInfo, { pool: "emailPool", id }))).toBe(true);
    expect(
      await failed(
        t.query(api.admin.listJobs, {
          pool: "emailPool",
          paginationOpts: { numItems: 10, cursor: null },
        }),
      ),
    ).toBe(true);
    expect(await failed(t.mutation(api.jobs.cancel, { pool: "emailPool", workId: id }))).toBe(true);
    expect((await stats(t)).totals.canceled).toBe(0);
  });

  it("GET /metrics without a secret is refused", async () => {
    const t = setup();
    const response = await t.fetch("/metrics", { method: "GET" });
    expect(response.status).toBe(401);
  });
});
