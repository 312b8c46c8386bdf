import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { inComponent, runFor, setup } from "./helpers.js";

describe("smoke", () => {
  it("runs an action and calls onComplete", async () => {
    const t = setup();
    const [id] = await t.mutation(anyApi.pool.enqueue, {
      kind: "action",
      argsList: [{ key: "a", ms: 50 }],
      onComplete: "onComplete",
      options: { context: { n: 1 } },
    });
    await runFor(t, 1000);
    const completions = await t.run(async (ctx) => ctx.db.query("completions").collect());
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({
      workId: id,
      context: { n: 1 },
      result: { kind: "success", returnValue: "a" },
    });
    const status = await t.query(anyApi.pool.status, { id });
    expect(status).toMatchObject({ state: "finished" });
    const work = await inComponent(t, async (ctx) => ctx.db.query("work").collect());
    expect(work).toHaveLength(1);
  });
});
