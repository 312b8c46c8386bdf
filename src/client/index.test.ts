// The client's public surface: the names API-COMPAT.md lists exist, and options are checked eagerly.
import { describe, expect, expectTypeOf, it } from "vitest";
import * as client from "./index.js";
import { Workpool, type OnCompleteArgs, type RunResult, type WorkId } from "./index.js";

describe("exports", () => {
  it("has every runtime name of the @convex-dev/workpool client", () => {
    for (const name of [
      "Workpool",
      "vWorkId",
      "vWorkIdValidator",
      "vResult",
      "vResultValidator",
      "vOnCompleteArgs",
      "vOnComplete",
      "vRetryBehavior",
      "vLogLevel",
      "DEFAULT_RETRY_BEHAVIOR",
      "NonRetryableError",
      "isNonRetryableError",
    ]) {
      expect(client, name).toHaveProperty(name);
    }
    expect(client.DEFAULT_RETRY_BEHAVIOR).toEqual({
      maxAttempts: 5,
      initialBackoffMs: 250,
      base: 2,
    });
  });

  it("has the documented types", () => {
    expectTypeOf<RunResult>().toEqualTypeOf<
      | { kind: "success"; returnValue: any }
      | { kind: "failed"; error: string; errorData?: any }
      | { kind: "canceled" }
    >();
    expectTypeOf<OnCompleteArgs<{ a: number }>["context"]>().toEqualTypeOf<{ a: number }>();
    expectTypeOf<WorkId>().toMatchTypeOf<string>();
  });
});

describe("NonRetryableError", () => {
  it("is recognized by isNonRetryableError, and plain errors are not", () => {
    expect(client.isNonRetryableError(new client.NonRetryableError("stop"))).toBe(true);
    expect(client.isNonRetryableError(new Error("stop"))).toBe(false);
    expect(new client.NonRetryableError("stop").message).toBe("stop");
  });
});

describe("SnoozeError", () => {
  it("is an Error that carries its delay", () => {
    const error = new client.SnoozeError(5000);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("SnoozeError");
    expect(error.data).toMatchObject({ delayMs: 5000 });
  });

  it.each([-1, NaN, Infinity])("rejects a delay of %s, naming delayMs", (delayMs) => {
    expect(() => new client.SnoozeError(delayMs)).toThrow(/invalid SnoozeError delayMs/);
  });
});

describe("new Workpool", () => {
  const component = {} as client.WorkpoolComponent;
  it.each([
    [{ maxParallelism: -1 }, /maxParallelism/],
    [{ maxParallelism: 2.5 }, /maxParallelism/],
    [
      { defaultRetryBehavior: { maxAttempts: 0, initialBackoffMs: 1, base: 2 } },
      /defaultRetryBehavior.maxAttempts/,
    ],
    [{ statusTtl: -5 }, /statusTtl/],
  ])("rejects %o naming the option", (options, message) => {
    expect(() => new Workpool(component, options)).toThrow(message);
  });

  it("accepts the defaults and an infinite statusTtl", () => {
    expect(() => new Workpool(component, {})).not.toThrow();
    expect(() => new Workpool(component, { statusTtl: Number.POSITIVE_INFINITY })).not.toThrow();
  });
});
