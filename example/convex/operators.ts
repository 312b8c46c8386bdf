// Who may operate this app's pools: one rule for every public function that reads jobs or changes
// a pool — the dashboard's (workpoolAdmin.ts, through `authorize`) and the app's own (admin.ts,
// jobs.ts, through `requireOperator`), so that no module is a way around another's check. Two ways
// in, either enough:
//
// - an admin list: the caller's verified email is in the deployment's WORKPOOL_ADMINS variable
//   (`npx convex env set WORKPOOL_ADMINS "ada@example.com,grace@example.com"`);
// - a role claim: the caller's token carries `"role": "admin"` (set by your auth provider, e.g. a
//   custom claim in the JWT template), or "operator", which may look, retry and cancel but not
//   pause a pool or change its settings.
//
// Anyone else, and anyone not signed in, is refused. Owns the rule only: it reads the caller's
// identity and never reads or writes a table.
import { ConvexError } from "convex/values";
import type { AdminOperation } from "convex-workpool";
import type { QueryCtx } from "./_generated/server.js";

/** What a call does: looks (`read`), acts on single jobs (`jobs`: retry, cancel, run a schedule
 * once now), or changes a pool's, a key's or a schedule's settings (`settings`: pause, resume,
 * parallelism, rate limit). */
export type Access = "read" | "jobs" | "settings";

/** What the admin API's operations are, by this app's rule. */
const ACCESS_OF: Record<AdminOperation, Access> = {
  overview: "read",
  jobs: "read",
  job: "read",
  retry: "jobs",
  cancel: "jobs",
  pause: "settings",
  resume: "settings",
  setKeyParallelism: "settings",
  setKeyShare: "settings",
  setKeyRateLimit: "settings",
  setMaxParallelism: "settings",
  group: "read",
  cancelGroup: "jobs",
  schedules: "read",
  runScheduleNow: "jobs",
  pauseSchedule: "settings",
  resumeSchedule: "settings",
};

/** The access an admin API operation needs. */
export function accessOf(operation: AdminOperation): Access {
  return ACCESS_OF[operation];
}

/** The emails in WORKPOOL_ADMINS (comma-separated), lower-cased. */
function adminEmails(): string[] {
  // A plain deployment variable, read as docs/operating.md's /metrics reads METRICS_TOKEN.
  // eslint-disable-next-line @convex-dev/no-process-env -- kept to what every Convex version reads
  return (process.env.WORKPOOL_ADMINS ?? "")
    .split(",")
    .map((email) => email.trim().toLowerCase())
    .filter((email) => email !== "");
}

/** Whether the caller may do what `access` names (see the top of this file). */
export async function mayOperate(ctx: Pick<QueryCtx, "auth">, access: Access): Promise<boolean> {
  const identity = await ctx.auth.getUserIdentity();
  if (identity === null) return false;
  // Only a verified address is the admin's: a provider may sign anyone up with any address.
  const email = identity.emailVerified ? identity.email?.toLowerCase() : undefined;
  if (email !== undefined && adminEmails().includes(email)) return true;
  if (identity.role === "admin") return true;
  return identity.role === "operator" && access !== "settings";
}

/** Throws (a ConvexError naming the function) unless the caller may do what `access` names; the
 * first line of every operator function of admin.ts and jobs.ts. */
export async function requireOperator(
  ctx: Pick<QueryCtx, "auth">,
  access: Access,
  fn: string,
): Promise<void> {
  if (!(await mayOperate(ctx, access))) {
    throw new ConvexError({ kind: "Unauthorized", message: `not authorized to call ${fn}` });
  }
}
