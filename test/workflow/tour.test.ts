/**
 * @convex-dev/workflow on this pool: every kind of step a workflow can take, through workflow's
 * public API only, drained the standard way (`t.finishAllScheduledFunctions(vi.runAllTimers)`).
 *
 * Not part of the repo's suite (workflow is not a dependency of this package): the slow tier's
 * scripts/workflow-test.mjs runs it in a temporary app where workflow's published package is
 * installed with `@convex-dev/workpool` aliased to this package's tarball, and runs it again
 * against the real @convex-dev/workpool as a control.
 */
/// <reference types="vite/client" />
import { getStatus, WorkflowManager, type WorkflowComponent } from "@convex-dev/workflow";
import workflowTest from "@convex-dev/workflow/test";
import { convexTest } from "convex-test";
import {
  anyApi,
  componentsGeneric,
  defineSchema,
  defineTable,
  internalActionGeneric,
  internalMutationGeneric,
  internalQueryGeneric,
  type FunctionReference,
} from "convex/server";
import { v } from "convex/values";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const schema = defineSchema({ log: defineTable({ note: v.string() }) });
const component = componentsGeneric().workflow as unknown as WorkflowComponent;
const manager = new WorkflowManager(component);

/** Attempts of the `fetch` action, per key (the action runs in this process under convex-test). */
const attempts = new Map<string, number>();

const retry = { maxAttempts: 3, initialBackoffMs: 10, base: 2 };

/** A reference to a function of the `tour` module below. */
function ref<Kind extends "query" | "mutation" | "action">(_kind: Kind, name: string) {
  return (anyApi.tour as Record<string, unknown>)[name] as FunctionReference<Kind, "internal">;
}

const functions = {
  double: internalQueryGeneric({
    args: { n: v.number() },
    handler: async (_ctx, { n }) => n * 2,
  }),
  note: internalMutationGeneric({
    args: { note: v.string() },
    handler: async (ctx, { note }) => {
      await ctx.db.insert("log", { note });
      return (await ctx.db.query("log").collect()).length;
    },
  }),
  /** Fails its first `failTimes` attempts, then returns a string. */
  fetch: internalActionGeneric({
    args: { key: v.string(), failTimes: v.optional(v.number()) },
    handler: async (_ctx, { key, failTimes }) => {
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      if (attempt <= (failTimes ?? 0)) throw new Error(`fetch ${key} failed attempt ${attempt}`);
      return `fetched ${key}`;
    },
  }),

  /** One step of each kind, in sequence: query, mutation, action, retried action, sleep. */
  sequence: manager.define({ args: {} }).handler(async (step) => {
    const doubled: number = await step.runQuery(ref("query", "double"), { n: 21 });
    const notes: number = await step.runMutation(ref("mutation", "note"), { note: "step" });
    const fetched: string = await step.runAction(ref("action", "fetch"), { key: "once" });
    const retried: string = await step.runAction(
      ref("action", "fetch"),
      { key: "flaky", failTimes: 2 },
      { retry },
    );
    await step.sleep(5_000);
    return { doubled, notes, fetched, retried };
  }),

  /** An action step without retries that fails: the workflow fails with its error. */
  failing: manager.define({ args: {} }).handler(async (step) => {
    await step.runAction(ref("action", "fetch"), { key: "broken", failTimes: 1 }, { retry: false });
    return "unreachable";
  }),

  /** Steps of every kind at once. */
  parallel: manager.define({ args: {} }).handler(async (step) => {
    return await Promise.all([
      step.runAction(ref("action", "fetch"), { key: "p1" }),
      step.runAction(ref("action", "fetch"), { key: "p2", failTimes: 1 }, { retry }),
      step.runQuery(ref("query", "double"), { n: 5 }),
      step.runMutation(ref("mutation", "note"), { note: "parallel" }),
    ]);
  }),

  child: manager.define({ args: { n: v.number() } }).handler(async (step, { n }) => {
    const doubled: number = await step.runQuery(ref("query", "double"), { n });
    return doubled + 1;
  }),
  /** Runs `child` as a nested workflow. */
  parent: manager.define({ args: {} }).handler(async (step): Promise<number> => {
    const fromChild = (await step.runWorkflow(
      anyApi.tour.child as FunctionReference<"mutation", "internal">,
      { n: 10 },
    )) as number;
    return fromChild * 100;
  }),

  /** Waits for an "approval" event and returns its value. */
  approval: manager.define({ args: {} }).handler(async (step) => {
    return await step.awaitEvent({ name: "approval", validator: v.object({ ok: v.boolean() }) });
  }),

  /** Sleeps an hour, to be canceled meanwhile. */
  long: manager.define({ args: {} }).handler(async (step) => {
    await step.sleep(60 * 60 * 1000);
    await step.runMutation(ref("mutation", "note"), { note: "after the long sleep" });
    return "done";
  }),
};

const workflow = (name: keyof typeof functions) =>
  (anyApi.tour as Record<string, unknown>)[name] as FunctionReference<"mutation", "internal">;

function setup() {
  const t = convexTest(schema, {
    "./_generated/api.ts": async () => ({}),
    "./tour.ts": async () => functions,
  });
  workflowTest.register(t);
  return t;
}
type T = ReturnType<typeof setup>;

const drain = (t: T) => t.finishAllScheduledFunctions(vi.runAllTimers, 1_000);
const start = (t: T, name: keyof typeof functions, args: Record<string, unknown> = {}) =>
  t.run(async (ctx) => await manager.start(ctx, workflow(name), args));
const status = (t: T, id: Awaited<ReturnType<typeof start>>) =>
  t.query(async (ctx) => await getStatus(ctx, component, id));
const notes = (t: T) =>
  t.run(async (ctx) => (await ctx.db.query("log").collect()).map((row) => row.note));

beforeEach(() => {
  vi.useFakeTimers();
  attempts.clear();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("workflow steps on this pool", () => {
  it("runs a query, a mutation, an action, a retried action and a sleep, in order", async () => {
    const t = setup();
    const id = await start(t, "sequence");
    await drain(t);
    expect(await status(t, id)).toEqual({
      type: "completed",
      result: { doubled: 42, notes: 1, fetched: "fetched once", retried: "fetched flaky" },
    });
    expect(attempts.get("once")).toBe(1);
    expect(attempts.get("flaky")).toBe(3);
  });

  it("fails the workflow when an action step without retries fails", async () => {
    const t = setup();
    const id = await start(t, "failing");
    await drain(t);
    expect(await status(t, id)).toEqual({
      type: "failed",
      error: expect.stringContaining("fetch broken failed attempt 1"),
    });
    expect(attempts.get("broken")).toBe(1);
  });

  it("runs parallel steps of every kind", async () => {
    const t = setup();
    const id = await start(t, "parallel");
    await drain(t);
    expect(await status(t, id)).toEqual({
      type: "completed",
      result: ["fetched p1", "fetched p2", 10, 1],
    });
    expect(attempts.get("p2")).toBe(2);
  });

  it("runs a nested workflow and returns its result to the parent", async () => {
    const t = setup();
    const id = await start(t, "parent");
    await drain(t);
    expect(await status(t, id)).toEqual({ type: "completed", result: 2_100 });
  });

  it("waits for an event, and goes on with its value once it is sent", async () => {
    const t = setup();
    const id = await start(t, "approval");
    await drain(t);
    expect(await status(t, id)).toMatchObject({ type: "inProgress" });
    await t.run(async (ctx) => {
      await manager.sendEvent(ctx, {
        workflowId: id,
        name: "approval",
        validator: v.object({ ok: v.boolean() }),
        value: { ok: true },
      });
    });
    await drain(t);
    expect(await status(t, id)).toEqual({ type: "completed", result: { ok: true } });
  });

  it("cancels a workflow while it sleeps: no later step runs", async () => {
    const t = setup();
    const id = await start(t, "long");
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await status(t, id)).toMatchObject({ type: "inProgress" });
    await t.run(async (ctx) => await manager.cancel(ctx, id));
    await drain(t);
    expect(await status(t, id)).toEqual({ type: "canceled" });
    expect(await notes(t)).toEqual([]);
  });
});
