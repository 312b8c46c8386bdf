import { getConvexSize } from "convex/values";
import { describe, expect, it } from "vitest";
import {
  fitsInline,
  inlineDepthLimit,
  measureValue,
  unstorableReason,
  STORED_DEPTH_LIMIT,
} from "./valueMeasure.js";

function nested(depth: number, leaf: unknown = 0): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { x: value };
  return value;
}

describe("measureValue", () => {
  it("counts size as Convex does: 9 bytes a number, whatever its JSON length", () => {
    const value = { a: new Array(100).fill(0), b: "héllo", c: 12345678901234567890n, d: null };
    expect(measureValue(value).bytes).toBe(getConvexSize(value));
    expect(measureValue(new Array(100).fill(0)).bytes).toBe(2 + 9 * 100);
  });

  it("counts the objects and arrays a value nests, itself included", () => {
    expect(measureValue(0).depth).toBe(0);
    expect(measureValue("text").depth).toBe(0);
    expect(measureValue([]).depth).toBe(1);
    expect(measureValue({ a: [1, [2]] }).depth).toBe(3);
    expect(measureValue(nested(40)).depth).toBe(40);
    expect(measureValue(new ArrayBuffer(8)).depth).toBe(0);
  });

  it("finds the widest object and the longest array anywhere in it", () => {
    const wide = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, i]));
    const measure = measureValue({ list: [[1, 2, 3, 4, 5], { wide }] });
    expect(measure.maxFields).toBe(30);
    expect(measure.maxArrayLength).toBe(5);
  });

  it("does not count an undefined field (Convex drops it)", () => {
    expect(measureValue({ a: undefined, b: 1 }).maxFields).toBe(1);
    expect(measureValue({ a: undefined })).toEqual(measureValue({}));
  });

  it("throws on what is not a Convex value", () => {
    expect(() => measureValue({ f: () => 1 })).toThrow();
  });
});

describe("where a value may go", () => {
  it("keeps a small shallow value inline; a deep one goes to a payload row", () => {
    expect(fitsInline("returnValue", measureValue(nested(13)))).toBe(true);
    expect(fitsInline("returnValue", measureValue(nested(14)))).toBe(false);
    expect(fitsInline("context", measureValue(nested(14)))).toBe(true);
    expect(fitsInline("context", measureValue(nested(15)))).toBe(false);
    expect(inlineDepthLimit("args")).toBe(13);
  });

  it("keeps a value over 8 KiB as Convex counts it apart, though its JSON is smaller", () => {
    const numbers = new Array(1_000).fill(0); // 2 KB of JSON, 9 KB to Convex
    expect(JSON.stringify(numbers).length).toBeLessThan(8 * 1024);
    expect(fitsInline("args", measureValue({ numbers }))).toBe(false);
  });

  it("says why a value no document can hold cannot be stored", () => {
    expect(unstorableReason(measureValue(nested(STORED_DEPTH_LIMIT)), 1_000)).toBeUndefined();
    expect(unstorableReason(measureValue(nested(17)), 1_000)).toBe(
      "nests 17 levels deep, over the limit of 16",
    );
    expect(unstorableReason(measureValue("x".repeat(1_000)), 1_000)).toBe(
      "is 1002 bytes, over the limit of 1000 bytes",
    );
    expect(unstorableReason(measureValue([new Array(8_193).fill(null)]), 1e6)).toBe(
      "holds an array of 8193 elements, over the limit of 8192",
    );
  });
});
