// The test app's admin API: the pool's operator functions, guarded by a role claim on the caller's
// identity ("admin" may do anything; "viewer" may only read; no identity may do nothing; the
// subject "broken" makes `authorize` throw).
import { componentsGeneric } from "convex/server";
import { Workpool, type AdminOperation, type WorkpoolComponent } from "../../src/client/index.js";

const components = componentsGeneric() as unknown as { workpool: WorkpoolComponent };
const pool = new Workpool(components.workpool, {});

const READS: AdminOperation[] = ["overview", "jobs", "job", "group", "schedules"];

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
  group,
  cancelGroup,
  schedules,
  pauseSchedule,
  resumeSchedule,
  runScheduleNow,
} = pool.adminApi({
  authorize: async (ctx, { operation }) => {
    const identity = await ctx.auth.getUserIdentity();
    if (identity === null) return false;
    if (identity.subject === "broken") throw new Error("the role service is down");
    if (identity.role === "admin") return true;
    return identity.role === "viewer" && READS.includes(operation);
  },
});
