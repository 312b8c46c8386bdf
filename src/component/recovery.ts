/**
 * Loop stage: recovery of jobs whose runner died. A job marked running whose scheduled worker has
 * failed, been canceled or vanished (per the `_scheduled_functions` system table) never reports, so
 * recovery counts its attempt as failed and lets the retry rules decide. Never touches a job whose
 * worker is still pending, running or has succeeded (its report is on its way).
 */
import { settleAttempt } from "./complete.js";
import type { Pass } from "./pass.js";

/** How often recovery looks at the running jobs. A dead runner is found within this plus
 * RECOVERY_THRESHOLD_MS; 30 s keeps the check cheap (one system read per running job). */
export const RECOVERY_INTERVAL_MS = 30_000;
/** Jobs started less than this long ago are not checked yet: their worker has barely begun. */
export const RECOVERY_THRESHOLD_MS = 5_000;
/** Running jobs checked per recovery pass, oldest first (two reads each). */
export const RECOVERY_BATCH = 100;

export function recoveryDue(pass: Pass): boolean {
  return pass.state.running > 0 && pass.now - pass.state.lastRecoveryAt >= RECOVERY_INTERVAL_MS;
}

/** The time the loop should wake for recovery, if any job runs. */
export function nextRecoveryAt(pass: Pass): number | undefined {
  if (pass.state.running === 0) return undefined;
  return pass.state.lastRecoveryAt + RECOVERY_INTERVAL_MS;
}

export async function recover(pass: Pass): Promise<void> {
  const { ctx } = pass;
  pass.state.lastRecoveryAt = pass.now;
  const candidates = await ctx.db
    .query("work")
    .withIndex("by_state", (q) =>
      q.eq("state.kind", "running").lt("state.startedAt", pass.now - RECOVERY_THRESHOLD_MS),
    )
    .take(RECOVERY_BATCH);
  for (const work of candidates) {
    if (work.state.kind !== "running") continue;
    const job = await ctx.db.system.get(work.state.scheduledId);
    const dead = job === null || job.state.kind === "failed" || job.state.kind === "canceled";
    if (!dead) continue;
    const why =
      job === null
        ? "its scheduled function vanished"
        : job.state.kind === "failed"
          ? `it failed: ${job.state.error}`
          : "it was canceled";
    pass.state.running--;
    pass.state.stats.recovered++;
    pass.log.warn("recovered", { workId: work._id, fnName: work.fnName, why });
    await settleAttempt(pass, work, { kind: "failed", error: `workpool: runner died (${why})` });
  }
}
