// The test app's side of waiting jobs (manualCompletion): a webhook that writes its own row and
// completes a job in one transaction, and a completion sent from an action.
import { actionGeneric, mutationGeneric } from "convex/server";
import { v } from "convex/values";
import { Workpool, type WorkId, type WorkpoolComponent } from "../../src/client/index.js";
import { components } from "./pool.js";

const vCompletion = {
  id: v.string(),
  outcome: v.any(),
  attempt: v.optional(v.number()),
};

function pool() {
  return new Workpool(components.workpool as WorkpoolComponent, {});
}

/** A webhook's mutation: records what the outside service said (an `effects` row), completes the
 * job in the same transaction, and throws afterwards when `throwAfter` (so both roll back). */
export const webhook = mutationGeneric({
  args: { ...vCompletion, note: v.string(), throwAfter: v.optional(v.boolean()) },
  handler: async (ctx, { id, outcome, attempt, note, throwAfter }) => {
    await ctx.db.insert("effects", { key: "webhook", value: note });
    const taken = await pool().complete(ctx, id as WorkId, outcome, { attempt });
    if (throwAfter) throw new Error("the webhook failed after completing");
    return taken;
  },
});

/** `pool.complete` from an action. */
export const completeFromAction = actionGeneric({
  args: vCompletion,
  handler: async (ctx, { id, outcome, attempt }): Promise<boolean> =>
    await pool().complete(ctx, id as WorkId, outcome, { attempt }),
});
