// @vitest-environment node
// Security review 2026-11-27, findings S4 and S7: what the guides tell an app to write.
// S4: public functions that take the user whose queue they act on from the caller's arguments
//   (`sendToUser({ userId, to })` enqueues into any user's key, `userProgress({ userId })` reads any
//   user's counts): with keyParallelism 1 anyone can stall another user's queue behind as many jobs
//   as they like, and watch anyone's progress. operating.md's `requireOperator` ("Lets only
//   signed-in operators through") lets every signed-in user through.
// S7: the `adminApi` example in the client's JSDoc matches admins by `identity.email` without
//   `emailVerified`; operating.md says the getting-started pool leaves maxParallelism off the
//   client (it sets 5), which is the condition for a maxParallelism set from the page to last.
// A fix must guarantee: no public example takes the acting user from its arguments (they use
// ctx.auth, or are internal); an example named or described as an operator check checks more than
// sign-in; an email match checks emailVerified; the guides do not contradict each other.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

/** The public functions (`= mutation({` / `= query({`) of a page's code whose args name `userId`. */
function publicByUserId(text: string): string[] {
  const found: string[] = [];
  const re = /export const (\w+) = (mutation|query)\(\{\s*args: \{([^}]*)\}/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (/\buserId\s*:/.test(m[3])) found.push(m[1]);
  }
  return found;
}

describe("S4: the guides' public functions", () => {
  for (const page of ["README.md", "docs/keys-and-pause.md"]) {
    it(`${page}: no public function takes the acting user from its arguments`, () => {
      expect(publicByUserId(read(page))).toEqual([]);
    });
  }

  it("operating.md: requireOperator checks more than that the caller is signed in", () => {
    const text = read("docs/operating.md");
    const body = /async function requireOperator[\s\S]*?\n\}/.exec(text)![0];
    const code = body
      .split("\n")
      .filter((line) => !line.trim().startsWith("//"))
      .join("\n")
      // Only code counts: not what an error message or a comment says.
      .replace(/"[^"]*"|`[^`]*`|'[^']*'/g, '""')
      .replace(/async function requireOperator/, "");
    expect(code).toMatch(/role|admin|isAdmin|ADMINS|tokenIdentifier|subject/i);
  });
});

describe("S7: the admin examples and the guides agree", () => {
  it("the adminApi JSDoc example checks emailVerified when it matches on email", () => {
    const text = read("src/client/workpool.ts");
    const doc = /The admin functions of this pool[\s\S]*?\*\//.exec(text)![0];
    if (/identity\.email/.test(doc)) expect(doc).toMatch(/emailVerified/);
  });

  it("operating.md's claim about the getting-started pool's maxParallelism holds", () => {
    const claims =
      /leave it off the client to scale from the page, as the\s+getting-started pool does/.test(
        read("docs/operating.md").replace(/\n/g, " "),
      );
    const setsIt = /new Workpool\(components\.emailPool, \{[^}]*maxParallelism:/.test(
      read("docs/getting-started.md"),
    );
    expect(claims && setsIt).toBe(false);
  });
});
