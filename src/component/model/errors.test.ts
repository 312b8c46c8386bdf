/**
 * Cutting a failed attempt's message (model/errors.ts `capErrorMessage`) without encoding all of
 * it must give exactly what encoding all of it gives: the same kept start, the same note.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { capErrorMessage, utf8Length } from "./errors.js";

/** The cut as first written: encode the whole message, back up to a character, decode. */
function cutByEncodingAll(message: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(message);
  if (bytes.length <= maxBytes) return message;
  const note = (cut: number) => ` … [workpool: ${cut} of ${bytes.length} bytes cut]`;
  let keep = maxBytes - new TextEncoder().encode(note(bytes.length)).length;
  while (keep > 0 && (bytes[keep] & 0xc0) === 0x80) keep--;
  return new TextDecoder().decode(bytes.subarray(0, keep)) + note(bytes.length - keep);
}

/** Text of every width: ASCII, 2- and 3-byte characters, surrogate pairs and lone surrogates. */
const text = fc
  .array(
    fc.oneof(
      fc.constantFrom("a", "é", "€", "😀", "\uD83D", "\uDE00", "<html>"),
      fc.string({ unit: "grapheme", maxLength: 4 }),
      fc.string({ unit: "binary", maxLength: 4 }),
    ),
    { maxLength: 400 },
  )
  .map((parts) => parts.join(""));

describe("capErrorMessage", () => {
  it("measures UTF-8 as TextEncoder does, lone surrogates included", () => {
    fc.assert(
      fc.property(text, (s) => {
        expect(utf8Length(s)).toBe(new TextEncoder().encode(s).length);
      }),
      { numRuns: 500, seed: 31 },
    );
  });

  it("cuts exactly as encoding the whole message would, at every limit", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 60, max: 700 }), (s, maxBytes) => {
        expect(capErrorMessage(s, maxBytes)).toBe(cutByEncodingAll(s, maxBytes));
      }),
      { numRuns: 1_000, seed: 32 },
    );
  });
});
