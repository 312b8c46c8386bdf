/**
 * Executors at the document limit: many results near 1 MiB reported at once (API-EXTENSIONS
 * section 8). Apart from test/executors.test.ts because it moves 18 MB through the embedded
 * backend (about 8 s): `npm test` leaves it to the slow tier.
 */
import { anyApi } from "convex/server";
import { describe, expect, it } from "vitest";
import { probe } from "./app/probe.js";
import { runUntil, setup } from "./helpers.js";

describe("executors at the document limit", () => {
  it("20 results of 900 KB at once all arrive: each is reported on its own, stored aside", async () => {
    const t = setup();
    const keys = Array.from({ length: 20 }, (_, i) => `w${i}`);
    const ids = await t.mutation(anyApi.tasks.enqueueBig, { keys, bytes: 900_000 });
    // (20 of them are 18 MB: the test reads them a few at a time, as any reader must)
    const seen = async () => {
      const rows: Array<{ workId: string; kind: string; bytes: number }> = [];
      let cursor: string | null = null;
      do {
        const page: { page: any[]; isDone: boolean; continueCursor: string } = await t.run(
          async (ctx: any) => await ctx.db.query("completions").paginate({ numItems: 5, cursor }),
        );
        for (const c of page.page) {
          rows.push({ workId: c.workId, kind: c.result.kind, bytes: c.result.returnValue.length });
        }
        cursor = page.isDone ? null : page.continueCursor;
      } while (cursor !== null);
      return rows;
    };
    await runUntil(t, async () => (await seen()).length === 20, 30_000, 100);
    expect(probe.maxRunning).toBe(20);
    const rows = await seen();
    expect(rows.map((r) => r.workId).sort()).toEqual([...ids].sort());
    expect(rows.every((r) => r.kind === "success" && r.bytes === 900_000)).toBe(true);
  });
});
