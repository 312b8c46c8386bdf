// The operator dashboard's functions for emailPool (`convex-workpool/react`'s WorkpoolDashboard
// binds to them: `<WorkpoolDashboard api={api.workpoolAdmin} />`). They are public, so each one
// first asks `authorize` whether the signed-in caller may operate the pool. Two ways, either enough:
//
// - an admin list: the caller's verified email is in the deployment's WORKPOOL_ADMINS variable
//   (`npx convex env set WORKPOOL_ADMINS "ada@example.com,grace@example.com"`);
// - a role claim: the caller's token carries `"role": "admin"` (set by your auth provider, e.g. a
//   custom claim in the JWT template), or "operator", which may look and retry but not pause the
//   pool or change its parallelism.
//
// Anyone else (and anyone not signed in) gets `workpool/Unauthorized` and nothing else.
import type { AdminOperation } from "convex-workpool";
import { emailPool } from "./pools.js";

/** What an operator (not an admin) may do: look, rerun or cancel single jobs, and run a schedule
 * once now (pausing a schedule is an admin's, as pausing the pool is). */
const OPERATOR_MAY: readonly AdminOperation[] = [
  "overview",
  "jobs",
  "job",
  "retry",
  "cancel",
  "schedules",
  "runScheduleNow",
];

/** The emails in WORKPOOL_ADMINS (comma-separated), lower-cased. */
function adminEmails(): string[] {
  // A plain deployment variable, read as docs/operating.md's /metrics reads METRICS_TOKEN.
  // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
  return (process.env.WORKPOOL_ADMINS ?? "")
    .split(",")
    .map((email) => email.trim().toLowerCase())
    .filter((email) => email !== "");
}

export const {
  overview,
  jobs,
  job,
  retry,
  cancel,
  pause,
  resume,
  setKeyParallelism,
  setMaxParallelism,
  schedules,
  pauseSchedule,
  resumeSchedule,
  runScheduleNow,
} = emailPool.adminApi({
  authorize: async (ctx, { operation }) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) return false;
    const email = identity.emailVerified ? identity.email?.toLowerCase() : undefined;
    if (email !== undefined && adminEmails().includes(email)) return true;
    if (identity.role === "admin") return true;
    return identity.role === "operator" && OPERATOR_MAY.includes(operation);
  },
});
