/**
 * Size budgets: every stored string a user controls is capped, and every batch a loop pass or a
 * delivery reads stops on bytes as well as rows, so no input can push a pool transaction past
 * Convex's limits (16 MiB read per transaction, 1 MiB per document). Driven end to end through the
 * test app's client calls on a virtual clock (helpers.ts), with convex-test's transaction limits on.
 */
import { describe, expect, it, vi } from "vitest";
import { capErrorMessage, MAX_ERROR_MESSAGE_BYTES } from "../src/component/model/errors.js";
import { valueSizeBytes } from "../src/component/model/payloads.js";
import { completions, enqueue, info, runUntil, setup } from "./helpers.js";

const bytes = (text: string) => new TextEncoder().encode(text).length;

describe("error messages", () => {
  it("are cut to 8 KiB, keeping the start and saying how much was cut", () => {
    const long = "HTTP 502: " + "<html>".repeat(50_000);
    const cut = capErrorMessage(long);
    expect(bytes(cut)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(cut.startsWith("HTTP 502: <html>")).toBe(true);
    const [, cutBytes, total] = cut.match(/\[workpool: (\d+) of (\d+) bytes cut\]$/)!;
    expect(Number(total)).toBe(bytes(long));
    expect(bytes(cut.slice(0, cut.lastIndexOf(" … [workpool:"))) + Number(cutBytes)).toBe(
      bytes(long),
    );
    expect(capErrorMessage("short")).toBe("short");
  });

  it("are cut on a character boundary", () => {
    const cut = capErrorMessage("é".repeat(10_000));
    expect(cut).not.toContain("\uFFFD");
    expect(bytes(cut)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
  });

  it("of 300 KB from 40 failing jobs stop nothing: every onComplete arrives, and later jobs run", async () => {
    const t = setup();
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const failing = Array.from({ length: 40 }, (_, i) => ({
      key: `big${i}`,
      failTimes: 1,
      errorBytes: 300_000,
    }));
    const ids = await enqueue(t, "action", failing, { poolOptions: { maxParallelism: 50 } });
    await runUntil(t, async () => (await completions(t)).length === 40, 30_000);
    const done = await completions(t);
    expect(new Set(done.map((c) => c.workId))).toEqual(new Set(ids));
    for (const { result } of done) {
      expect(result.kind).toBe("failed");
      expect(result.error).toMatch(
        /^job big\d+ failed attempt 1\.+ … \[workpool: \d+ of 300000 bytes cut\]$/,
      );
      expect(bytes(result.error)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    }
    const kept = await info(t, ids[0]);
    expect(bytes(kept.result.error)).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_BYTES);
    expect(valueSizeBytes(kept)).toBeLessThan(2 * MAX_ERROR_MESSAGE_BYTES);
    const [later] = await enqueue(t, "action", [{ key: "later", value: 1 }]);
    await runUntil(t, async () => (await completions(t)).some((c) => c.workId === later));
  });
});
