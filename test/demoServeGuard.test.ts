// @vitest-environment node
// What the live demo's server lets through (demo/serveGuard.ts), without spawning it: its own Host
// only, actions only from its own page as JSON, bounded bodies, and only its own action names.
// The server itself, in a browser, is test/sec4DemoServer.test.ts (slow tier).
import { once } from "node:events";
import { Readable } from "node:stream";
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import {
  groupsAsked,
  isRefusal,
  MAX_GROUPS_ASKED,
  MAX_ACTION_BODY_BYTES,
  MAX_DISCARDED_BYTES,
  parseAction,
  readBounded,
  refuseForeign,
} from "../demo/serveGuard.js";

const PORT = 4173;
const ACTIONS = { pause: 1, resume: 2 };

const request = (method: string, headers: Record<string, string>) => ({ method, headers });
const json = { "content-type": "application/json" };

describe("refuseForeign", () => {
  it("lets the server's own host read, on 127.0.0.1 or localhost", () => {
    for (const host of [`127.0.0.1:${PORT}`, `localhost:${PORT}`]) {
      expect(refuseForeign(request("GET", { host }), PORT)).toBeUndefined();
    }
  });

  it("refuses another Host name or port on every route (a DNS-rebinding page)", () => {
    for (const host of [`attacker.example:${PORT}`, `127.0.0.1:${PORT + 1}`, "127.0.0.1", ""]) {
      expect(refuseForeign(request("GET", { host }), PORT)?.status, host).toBe(403);
    }
  });

  it("lets an action through only with the page's own Origin and a JSON body", () => {
    const host = `localhost:${PORT}`;
    const own = { host, origin: `http://${host}` };
    expect(refuseForeign(request("POST", { ...own, ...json }), PORT)).toBeUndefined();
    expect(
      refuseForeign(
        request("POST", { ...own, "content-type": "application/json; charset=utf-8" }),
        PORT,
      ),
    ).toBeUndefined();
    for (const origin of ["http://evil.example", `http://127.0.0.1:${PORT}`, "null"]) {
      expect(refuseForeign(request("POST", { host, origin, ...json }), PORT)?.status, origin).toBe(
        403,
      );
    }
    expect(refuseForeign(request("POST", { host, ...json }), PORT)?.status).toBe(403);
    const plain = refuseForeign(request("POST", { ...own, "content-type": "text/plain" }), PORT);
    expect(plain?.status).toBe(415);
  });
});

describe("readBounded", () => {
  const body = (chunks: Buffer[], headers: Record<string, string> = {}) =>
    Object.assign(Readable.from(chunks), { headers }) as unknown as IncomingMessage;

  it("reads a body within the bound", async () => {
    expect(await readBounded(body([Buffer.from('{"name":'), Buffer.from('"pause"}')]))).toEqual({
      text: '{"name":"pause"}',
    });
  });

  it("refuses past the bound, and throws the rest away up to a cap, then cuts the connection", async () => {
    let pulled = 0;
    const CHUNK = 64 * 1024;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          pulled++;
          yield Buffer.alloc(CHUNK, 0x20);
        }
      })(),
    );
    const closed = once(endless, "close");
    const refused = await readBounded(
      Object.assign(endless, { headers: {} }) as unknown as IncomingMessage,
    );
    expect(refused).toMatchObject({ status: 413 });
    // An endless body is never read whole: past MAX_DISCARDED_BYTES the stream is destroyed.
    await closed;
    expect(endless.destroyed).toBe(true);
    expect(pulled * CHUNK).toBeGreaterThan(MAX_ACTION_BODY_BYTES);
    expect(pulled * CHUNK).toBeLessThanOrEqual(
      MAX_ACTION_BODY_BYTES + MAX_DISCARDED_BYTES + 4 * CHUNK,
    );
  });

  it("refuses by Content-Length before reading a byte", async () => {
    const declared = body([Buffer.from("x")], {
      "content-length": String(MAX_ACTION_BODY_BYTES + 1),
    });
    expect(await readBounded(declared)).toMatchObject({ status: 413 });
  });
});

describe("parseAction", () => {
  it("accepts one of the server's own names, with args or without", () => {
    expect(parseAction('{"name":"pause","args":{"key":"a"}}', ACTIONS)).toEqual({
      name: "pause",
      args: { key: "a" },
    });
    expect(parseAction('{"name":"resume"}', ACTIONS)).toEqual({ name: "resume", args: {} });
  });

  it("refuses names Object.prototype lends, and unknown ones, with a 400 naming the rule", () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "drop", 7]) {
      const refused = parseAction(JSON.stringify({ name, args: {} }), ACTIONS);
      expect(isRefusal(refused) && refused.status, String(name)).toBe(400);
      expect(isRefusal(refused) && refused.error).toContain("name must be one of pause, resume");
    }
  });

  it("refuses a body that is not a JSON object, or args that are not one, with a 400", () => {
    for (const text of ["{bad", "null", "[]", '"pause"', '{"name":"pause","args":[1]}']) {
      const refused = parseAction(text, ACTIONS);
      expect(isRefusal(refused) && refused.status, text).toBe(400);
    }
  });
});

describe("groupsAsked", () => {
  it("reports the demo's own groups, then the page's, each once, bounded in number and length", () => {
    expect(groupsAsked(["g0"], null)).toEqual(["g0"]);
    expect(groupsAsked(["g0"], " g1 ,g0,,g2")).toEqual(["g0", "g1", "g2"]);
    expect(groupsAsked([], "x".repeat(65))).toEqual([]);
    const many = Array.from({ length: 50 }, (_, i) => `g${i + 1}`).join(",");
    expect(groupsAsked(["g0"], many)).toHaveLength(1 + MAX_GROUPS_ASKED);
  });
});
