// What a newcomer building a webhook fan-out from the README and the guides met (issue 37's snags),
// each as the pool now answers it: a validator for `status` results; an InvalidArgument that says
// the type it got; one WARN line, with its error, when a job fails for good. (The snags that are
// documentation are checked by test/docs.test.ts and test/sec4DocExamples.test.ts.)
import { anyApi } from "convex/server";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isInvalidArgumentError, vStatus } from "../src/client/index.js";
import { callPool, completions, enqueue, poolStats, runUntil, setup } from "./helpers.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** The error `call` failed with (undefined if it did not fail). */
async function rejection(call: Promise<unknown>): Promise<any> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("vStatus: the validator of what status returns", () => {
  it("names the peer's three shapes", () => {
    const states = vStatus.members.map((member) => member.fields.state.value);
    expect(states).toEqual(["pending", "running", "finished"]);
  });

  it("accepts every status a job goes through (a query declaring returns: vStatus)", async () => {
    const t = setup();
    const [id] = await enqueue(t, "mutation", [{ key: "a" }]);
    expect(await t.query(anyApi.pool.status, { id })).toEqual({
      state: "pending",
      previousAttempts: 0,
    });
    await runUntil(t, async () => (await completions(t)).length === 1, 5000);
    expect(await t.query(anyApi.pool.status, { id })).toEqual({ state: "finished" });
  });
});

describe("InvalidArgument says what it got, and its type", () => {
  it("a number given as a string is quoted and called a string", async () => {
    const t = setup();
    const error = await rejection(callPool(t, "setMaxParallelism", ["10"]));
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error.data.argument).toBe("maxParallelism");
    expect(error.data.message).toContain('(got "10" (a string))');
    expect((await poolStats(t)).operatorMaxParallelism).toBeNull();
  });

  it("a number is shown as it is", async () => {
    const t = setup();
    const error = await rejection(callPool(t, "setMaxParallelism", [-1]));
    expect(error.data.message).toBe(
      "workpool: invalid maxParallelism: must be a whole number ≥ 0 (got -1)",
    );
  });

  it("a long string is cut, and its length said", async () => {
    const t = setup();
    const key = "k".repeat(300);
    const error = await rejection(enqueue(t, "mutation", [{ key: "x" }], { options: { key } }));
    expect(isInvalidArgumentError(error)).toBe(true);
    expect(error.data.message).toContain(
      `(got "${"k".repeat(100)}…" (a string of 300 characters))`,
    );
    expect(error.data.message).not.toContain("k".repeat(101));
  });
});

describe("a job that fails for good logs one WARN line with its error", () => {
  /** The pool's JSON lines printed with console.warn while `run` runs. */
  async function warnings(run: () => Promise<void>): Promise<any[]> {
    const lines: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    await run();
    return lines.filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  }

  it("once, at its last attempt; a success and a retried attempt log none", async () => {
    const t = setup();
    let ids: string[] = [];
    const lines = await warnings(async () => {
      ids = await enqueue(
        t,
        "action",
        [
          { key: "hook-down", failTimes: 5 },
          { key: "hook-ok", failTimes: 1 },
        ],
        {
          poolOptions: { logLevel: "WARN" },
          options: { retry: { maxAttempts: 2, initialBackoffMs: 10, base: 2 } },
        },
      );
      await runUntil(t, async () => (await completions(t)).length === 2, 10_000);
    });
    const finished = lines.filter((line) => line.event === "finished");
    expect(finished).toEqual([
      expect.objectContaining({
        component: "workpool",
        level: "WARN",
        workId: ids[0],
        result: "failed",
        error: expect.stringContaining("job hook-down failed attempt 2"),
      }),
    ]);
  });
});
