// The operator dashboard's functions for emailPool (`convex-workpool/react`'s WorkpoolDashboard
// binds to them: `<WorkpoolDashboard api={api.workpoolAdmin} />`). They are public, so each one
// first asks `authorize` whether the signed-in caller may operate the pool, by the app's one rule
// (operators.ts: an admin by verified email or role may do anything; an "operator" may look, retry
// and cancel but not pause the pool or change its parallelism). The app's other operator functions
// (admin.ts, jobs.ts) check the same rule, so neither is a way around the other.
//
// Anyone else (and anyone not signed in) gets `workpool/Unauthorized` and nothing else.
import type { DataModel } from "./_generated/dataModel.js";
import { accessOf, mayOperate } from "./operators.js";
import { emailPool } from "./pools.js";

export const {
  overview,
  jobs,
  job,
  retry,
  cancel,
  pause,
  resume,
  setKeyParallelism,
  setKeyShare,
  setKeyRateLimit,
  setMaxParallelism,
  schedules,
  pauseSchedule,
  resumeSchedule,
  runScheduleNow,
} = emailPool.adminApi<DataModel>({
  authorize: async (ctx, { operation }) => await mayOperate(ctx, accessOf(operation)),
});
