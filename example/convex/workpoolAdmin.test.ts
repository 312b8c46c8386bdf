// The dashboard's functions (workpoolAdmin.ts) as the app guards them: an admin on the
// WORKPOOL_ADMINS list or with the "admin" role claim may do anything, an "operator" may look and
// retry, and anyone else, signed in or not, is refused with workpool/Unauthorized and changes nothing.
// The app's other operator functions (admin.ts, jobs.ts) follow the same rule (operators.ts).
/// <reference types="vite/client" />
import { afterEach, describe, expect, it, vi } from "vitest";
import { isUnauthorizedError } from "convex-workpool";
import { runFor, setup, useExampleApp, type T } from "./test.setup.js";
import { api } from "./_generated/api.js";

useExampleApp();
afterEach(() => {
  vi.unstubAllEnvs();
});

const sim = { ms: 100, failRate: 0, seed: 7 };
const ON_THE_LIST = { subject: "u1", email: "Ada@Example.com", emailVerified: true };
const ADMIN_ROLE = { subject: "u2", role: "admin" };
const OPERATOR = { subject: "u3", role: "operator" };
const STRANGER = { subject: "u4", email: "eve@example.com", emailVerified: true };

/** A pool with one email that bounced (failed for good). */
async function withABounce(t: T) {
  await t.mutation(api.emails.sendEmails, { emails: [{ key: "b", to: "not-an-address" }], ...sim });
  await runFor(2000);
  const page = await t.withIdentity(ADMIN_ROLE).query(api.workpoolAdmin.jobs, {
    outcome: "failed",
    paginationOpts: { numItems: 10, cursor: null },
  });
  expect(page.page).toHaveLength(1);
  return page.page[0].id;
}

async function refused(call: Promise<unknown>): Promise<boolean> {
  try {
    await call;
    return false;
  } catch (error) {
    return isUnauthorizedError(error);
  }
}

describe("workpoolAdmin", () => {
  it("lets an admin on the WORKPOOL_ADMINS list (verified email) operate the pool", async () => {
    vi.stubEnv("WORKPOOL_ADMINS", "grace@example.com, ada@example.com");
    const t = setup();
    await withABounce(t);
    const as = t.withIdentity(ON_THE_LIST);
    const { stats } = await as.query(api.workpoolAdmin.overview, {});
    expect(stats.totals).toMatchObject({ enqueued: 1, failed: 1 });
    await as.mutation(api.workpoolAdmin.setMaxParallelism, { maxParallelism: 4 });
    expect((await as.query(api.workpoolAdmin.overview, {})).stats.maxParallelism).toBe(4);
    // The same email, not verified, is not enough.
    const unverified = t.withIdentity({ ...ON_THE_LIST, emailVerified: false });
    expect(await refused(unverified.query(api.workpoolAdmin.overview, {}))).toBe(true);
  });

  it("lets the admin role pause the pool, and an operator only look, retry and cancel", async () => {
    const t = setup();
    const failed = await withABounce(t);
    const operator = t.withIdentity(OPERATOR);
    expect(await refused(operator.mutation(api.workpoolAdmin.pause, {}))).toBe(true);
    expect(
      await refused(operator.mutation(api.workpoolAdmin.setMaxParallelism, { maxParallelism: 1 })),
    ).toBe(true);
    const again = await operator.mutation(api.workpoolAdmin.retry, { id: failed });
    expect((await operator.query(api.workpoolAdmin.job, { id: again }))?.state).toBe("pending");
    await t.withIdentity(ADMIN_ROLE).mutation(api.workpoolAdmin.pause, {});
    expect((await operator.query(api.workpoolAdmin.overview, {})).stats.paused).toBe(true);
  });

  it("refuses a stranger and a caller who is not signed in", async () => {
    vi.stubEnv("WORKPOOL_ADMINS", "ada@example.com");
    const t = setup();
    const failed = await withABounce(t);
    for (const as of [t, t.withIdentity(STRANGER)]) {
      expect(await refused(as.query(api.workpoolAdmin.overview, {}))).toBe(true);
      expect(await refused(as.query(api.workpoolAdmin.job, { id: failed }))).toBe(true);
      expect(await refused(as.mutation(api.workpoolAdmin.retry, { id: failed }))).toBe(true);
    }
    const { stats } = await t.withIdentity(ADMIN_ROLE).query(api.workpoolAdmin.overview, {});
    expect(stats.totals.enqueued).toBe(1);
  });

  it("holds the app's other operator functions (admin.ts, jobs.ts) to the same rule", async () => {
    vi.stubEnv("WORKPOOL_ADMINS", "ada@example.com");
    const t = setup();
    const failed = await withABounce(t);
    const operator = t.withIdentity(OPERATOR);
    // An operator looks, retries and cancels there as here...
    expect(
      (await operator.query(api.admin.jobInfo, { pool: "emailPool", id: failed }))?.state,
    ).toBe("finished");
    const again = await operator.mutation(api.admin.retryJob, { pool: "emailPool", id: failed });
    await operator.mutation(api.jobs.cancel, { pool: "emailPool", workId: again });
    // ...and may not change a pool's settings there either.
    for (const call of [
      operator.mutation(api.admin.pause, { pool: "emailPool" }),
      operator.mutation(api.jobs.setMaxParallelism, { pool: "emailPool", maxParallelism: 0 }),
      operator.mutation(api.jobs.setKeyParallelism, {
        pool: "emailPool",
        key: "b",
        parallelism: 3,
      }),
    ]) {
      await expect(call).rejects.toThrow(/not authorized to call/);
    }
    // A stranger, even with a verified email, reads nothing.
    await expect(
      t.withIdentity(STRANGER).query(api.jobs.status, { pool: "emailPool", workId: failed }),
    ).rejects.toThrow(/not authorized to call jobs.status/);
    const { stats } = await t.withIdentity(ADMIN_ROLE).query(api.workpoolAdmin.overview, {});
    expect(stats).toMatchObject({
      paused: false,
      maxParallelism: 10,
      operatorMaxParallelism: null,
    });
  });
});
