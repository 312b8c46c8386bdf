// What the live demo's server (serve.demo.ts) accepts: which requests reach the pool at all, and
// what an action request must look like. The server holds an admin identity, so only its own page
// may drive it: a request for another Host name (a DNS-rebinding page) is refused on every route, a
// POST whose Origin is not the page's own (any other page in the same browser) is refused, bodies
// are read up to a small bound, and an action is one of the server's own names. Pure checks and one
// bounded read; it never calls the pool and never answers a request itself (the server does).
import type { IncomingMessage } from "node:http";

/** The largest action body read (bytes): an action's JSON is a name and a few short arguments, so
 * 64 KiB is far more than any page sends, and small enough that no body can exhaust the process. */
export const MAX_ACTION_BODY_BYTES = 64 * 1024;

/** Why a request is refused, with the HTTP status to answer (403, 400, 413 or 415). */
export type Refusal = { status: number; error: string };

/** The Host values of the address served: the port on 127.0.0.1 or on localhost (the server binds
 * 127.0.0.1 only, and browsers resolve localhost to it). */
export function ownHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

/**
 * Checks that the request is for the address served (`Host`) and, for a POST, that it comes from the
 * page of that address (`Origin`, which browsers send with every POST) as JSON (another content
 * type, from a form or a `no-cors` fetch, is refused before it is read). Returns the refusal, or
 * undefined when the request may go on.
 */
export function refuseForeign(
  req: Pick<IncomingMessage, "method" | "headers">,
  port: number,
): Refusal | undefined {
  const host = req.headers.host ?? "";
  if (!ownHosts(port).includes(host)) {
    return { status: 403, error: `this server answers only ${ownHosts(port).join(" or ")}` };
  }
  if (req.method !== "POST") return undefined;
  const origin = req.headers.origin;
  if (origin !== `http://${host}`) {
    return { status: 403, error: `actions are taken only from this server's own page` };
  }
  const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (type !== "application/json") {
    return { status: 415, error: "an action's body must be application/json" };
  }
  return undefined;
}

/** The most bytes of a refused body read and thrown away, so that a client still sending it can
 * read the refusal (cutting the connection at once makes its write fail before it reads the
 * answer). 16 MiB is a few seconds on localhost; past it the connection is cut. */
export const MAX_DISCARDED_BYTES = 16 * 1024 * 1024;

/** Throws away the rest of a refused request's body (never keeping it), up to `maxBytes`; past
 * that, cuts the connection. */
export function discardRest(
  req: Pick<IncomingMessage, "on" | "resume" | "destroy" | "readableEnded">,
  maxBytes = MAX_DISCARDED_BYTES,
): void {
  if (req.readableEnded) return;
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) req.destroy();
  });
  req.resume();
}

/** Reads a request's body as text, at most `maxBytes`: a longer one (by its Content-Length, or as it
 * arrives) is a 413 refusal, and the rest of it is thrown away unread (`discardRest`). */
export function readBounded(
  req: IncomingMessage,
  maxBytes = MAX_ACTION_BODY_BYTES,
): Promise<{ text: string } | Refusal> {
  const tooLarge: Refusal = { status: 413, error: `a body may hold at most ${maxBytes} bytes` };
  if (Number(req.headers["content-length"] ?? 0) > maxBytes) {
    discardRest(req);
    return Promise.resolve(tooLarge);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      stop();
      discardRest(req);
      resolve(tooLarge);
    };
    const onEnd = () => {
      stop();
      resolve({ text: Buffer.concat(chunks).toString("utf8") });
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/**
 * Parses an action body, `{ "name": <one of names>, "args": { ... } }`. The name must be an own
 * property of `actions` (not one `Object.prototype` lends, such as `constructor`), and `args` an
 * object (absent: `{}`). Returns the action's name and arguments, or a 400 refusal saying which rule
 * the body broke.
 */
export function parseAction<Names extends string>(
  text: string,
  actions: Record<Names, unknown>,
): { name: Names; args: Record<string, unknown> } | Refusal {
  const bad = (error: string): Refusal => ({ status: 400, error });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return bad("the body must be JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return bad('the body must be a JSON object: { "name": ..., "args": { ... } }');
  }
  const { name, args = {} } = body as { name?: unknown; args?: unknown };
  if (typeof name !== "string" || !Object.hasOwn(actions, name)) {
    return bad(`name must be one of ${Object.keys(actions).join(", ")}`);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return bad("args must be an object");
  }
  return { name: name as Names, args: args as Record<string, unknown> };
}

/** True for what `readBounded`, `parseAction` and `refuseForeign` return when they refuse. */
export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "status" in value && "error" in value;
}

/** The most groups the page may ask the state of beyond the demo's own: each is one query per
 * poll, so the page cannot make a poll cost more than a few reads. */
export const MAX_GROUPS_ASKED = 10;
/** The longest group id taken from the page (a GroupId is about 32 characters). */
const MAX_GROUP_ID_LENGTH = 64;

/** The groups a state request reports: the demo's own, then those the page asks for in its
 * `groups` parameter (comma-separated), each once, ids of a sane length only, at most
 * MAX_GROUPS_ASKED of them. */
export function groupsAsked(own: readonly string[], asked: string | null): string[] {
  const extra = (asked ?? "")
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id !== "" && id.length <= MAX_GROUP_ID_LENGTH)
    .slice(0, MAX_GROUPS_ASKED);
  return [...new Set([...own, ...extra])];
}
