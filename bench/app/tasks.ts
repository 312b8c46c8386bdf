// The bench app's executor (our pool only: the peer has none): one task, `io`, that waits `ms` on
// the virtual clock like jobs.work, so that the executor scenarios run the same simulated I/O as
// the action ones. Enqueued by pools.enqueue with `tasks: true`.
import { v } from "convex/values";
import { Workpool } from "../../src/client/index.js";
import { components } from "./_generated/api.js";
import { probe } from "./probe.js";

/** Tasks one executor action runs at once. */
export const EXECUTOR_CONCURRENCY = 100;

/** The executor: its pool instance only carries the component (each enqueue passes its own
 * maxParallelism). */
export const run = new Workpool(components.ours, {}).executor({
  concurrency: EXECUTOR_CONCURRENCY,
  tasks: {
    io: {
      args: { key: v.string(), ms: v.number() },
      handler: async (_ctx, { key, ms }): Promise<null> => {
        const { record } = probe.enter(key);
        try {
          if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
          return null;
        } finally {
          probe.exit(record);
        }
      },
    },
  },
});
