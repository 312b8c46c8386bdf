/**
 * Executors' types (API-EXTENSIONS section 8): `enqueueTask` and `enqueueTaskBatch` check the task's
 * name and args against the executor action they are given, through its function reference; the
 * handler's args are typed from its validators. Checked by `tsc` (npm run typecheck): every
 * `@ts-expect-error` below must be an error. The runtime specs check what the values are.
 */
import {
  anyApi,
  type ApiFromModules,
  type FilterApi,
  type FunctionReference,
  type GenericMutationCtx,
} from "convex/server";
import { v } from "convex/values";
import { describe, expect, it } from "vitest";
import { Workpool, type WorkpoolComponent } from "../src/client/index.js";

const pool = new Workpool({} as WorkpoolComponent, {});

const llm = {
  run: pool.executor({
    concurrency: 100,
    tasks: {
      summarize: {
        args: { url: v.string(), words: v.optional(v.number()) },
        timeoutMs: 120_000,
        handler: async (_ctx, { url, words }, { id, attempt, signal }): Promise<string> => {
          signal.throwIfAborted();
          return `${id}:${attempt}:${url}:${words ?? 100}`;
        },
      },
      ping: { args: {}, handler: async () => null },
      count: {
        args: { text: v.string() },
        // Unannotated: its args are typed from the validators, its return type from its body.
        handler: async (_ctx, { text }) => {
          // @ts-expect-error `text` is a string (not `any`): strings have no toFixed
          text.toFixed();
          return text.length;
        },
      },
    },
  }),
  /** onCompletes whose `result.returnValue` is typed. */
  summarized: pool.defineOnComplete({ returnValue: v.string(), handler: async () => {} }),
  counted: pool.defineOnComplete({ returnValue: v.number(), handler: async () => {} }),
  anything: pool.defineOnComplete({ handler: async () => {} }),
};

// What an app's `internal` holds for the module: the reference carries the tasks.
const internal = anyApi as unknown as FilterApi<
  ApiFromModules<{ llm: typeof llm }>,
  FunctionReference<"action" | "mutation", "internal">
>;

/** Never run: only type-checked. */
async function uses(ctx: GenericMutationCtx<never>) {
  await pool.enqueueTask(ctx, internal.llm.run, "summarize", { url: "https://a.b" });
  await pool.enqueueTask(
    ctx,
    internal.llm.run,
    "summarize",
    { url: "x", words: 5 },
    { retry: true },
  );
  await pool.enqueueTaskBatch(ctx, internal.llm.run, "summarize", [{ url: "a" }, { url: "b" }]);
  await pool.enqueueTask(ctx, internal.llm.run, "ping", {});
  // @ts-expect-error an unknown task name
  await pool.enqueueTask(ctx, internal.llm.run, "translate", { url: "x" });
  // @ts-expect-error args of the wrong type
  await pool.enqueueTask(ctx, internal.llm.run, "summarize", { url: 5 });
  // @ts-expect-error a missing arg
  await pool.enqueueTask(ctx, internal.llm.run, "summarize", {});
  // @ts-expect-error a wrong arg in a batch
  await pool.enqueueTaskBatch(ctx, internal.llm.run, "summarize", [{ url: "a" }, { url: 1 }]);

  // onComplete's `result.returnValue` is the task's return type, as for `enqueueAction`.
  const summarized = { onComplete: internal.llm.summarized };
  const counted = { onComplete: internal.llm.counted };
  await pool.enqueueTask(ctx, internal.llm.run, "summarize", { url: "x" }, summarized);
  await pool.enqueueTask(ctx, internal.llm.run, "count", { text: "x" }, counted);
  await pool.enqueueTaskBatch(ctx, internal.llm.run, "count", [{ text: "x" }], counted);
  const anything = { onComplete: internal.llm.anything, retry: true };
  await pool.enqueueTask(ctx, internal.llm.run, "ping", {}, anything);
  // @ts-expect-error `summarize` returns a string; `counted` wants a number
  await pool.enqueueTask(ctx, internal.llm.run, "summarize", { url: "x" }, counted);
  // @ts-expect-error `count` (inferred) returns a number; `summarized` wants a string
  await pool.enqueueTask(ctx, internal.llm.run, "count", { text: "x" }, summarized);
  // @ts-expect-error `ping` returns null: the type is the named task's, not any task's
  await pool.enqueueTaskBatch(ctx, internal.llm.run, "ping", [{}], summarized);
}

describe("executor types", () => {
  it("pool.executor returns an internal action the app exports", () => {
    expect(typeof uses).toBe("function");
    const action = llm.run as unknown as { isAction: boolean; isInternal: boolean };
    expect(action.isAction).toBe(true);
    expect(action.isInternal).toBe(true);
  });

  it("rejects a bad definition when the module loads, naming the field", () => {
    expect(() => pool.executor({ concurrency: 0, tasks: {} })).toThrow(/concurrency.*1 to 1000/);
    expect(() =>
      pool.executor({
        tasks: { slow: { args: {}, timeoutMs: 600_000, handler: async () => null } },
      }),
    ).toThrow(/tasks\.slow\.timeoutMs/);
  });
});
