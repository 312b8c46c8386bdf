/**
 * Opt-in (`BENCH_BY_TABLE=<file>`): what each function writes, table by table and by operation
 * (insert, patch, replace, delete), per job, appended to `<file>` after each run. The tool behind
 * docs/PERFORMANCE.md's table of what the loop writes per job (issue 40). It learns the table of
 * each write by wrapping convex-test's `Convex.asyncSyscall` (the write's own call, which names its
 * table) and the function and size from instrument.ts's write hook; it never changes a count of
 * the report, and does nothing unless the variable is set.
 */
import { appendFileSync } from "node:fs";
import { onDocumentWrite } from "./instrument.js";

/** The file named by BENCH_BY_TABLE, if any. */
export const BY_TABLE_FILE = process.env.BENCH_BY_TABLE || undefined;

/** convex-test's database writes, by syscall, as this breakdown names them. */
const WRITE_OPS: Record<string, string> = {
  "1.0/insert": "insert",
  "1.0/shallowMerge": "patch",
  "1.0/replace": "replace",
  "1.0/remove": "delete",
};

type Writes = { docs: number; bytes: number };
const writes = new Map<string, Writes>();
/** The table and operation of the write under way (set by its syscall, read by the hook). */
let current = "";
let installed = false;

/** Installs the syscall wrapper and the write hook, once, when BENCH_BY_TABLE is set. */
export function installWritesByTable(): void {
  if (!BY_TABLE_FILE || installed) return;
  installed = true;
  // convex-test assigns `globalThis.Convex` once (before this or after): keep its object, and
  // wrap its asyncSyscall.
  let convex: any = (globalThis as any).Convex;
  Object.defineProperty(globalThis, "Convex", {
    configurable: true,
    get: () => ({
      get syscall() {
        return convex.syscall;
      },
      get jsSyscall() {
        return convex.jsSyscall;
      },
      get asyncSyscall() {
        const asyncSyscall = convex.asyncSyscall;
        return (op: string, jsonArgs: string) => {
          const kind = WRITE_OPS[op];
          if (kind !== undefined) current = `${JSON.parse(jsonArgs).table ?? "?"} ${kind}`;
          return asyncSyscall(op, jsonArgs);
        };
      },
    }),
    set: (value) => {
      convex = value;
    },
  });
  onDocumentWrite((fn, bytes) => {
    const key = `${fn} | ${current}`;
    const sum = writes.get(key) ?? { docs: 0, bytes: 0 };
    sum.docs++;
    sum.bytes += bytes;
    writes.set(key, sum);
  });
}

/** Starts a run's breakdown afresh. */
export function resetWritesByTable(): void {
  writes.clear();
}

/** Appends the run's breakdown, per job, to the BENCH_BY_TABLE file (nothing when unset). */
export function saveWritesByTable(run: string, jobs: number): void {
  if (!BY_TABLE_FILE) return;
  const lines = [...writes]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, { docs, bytes }]) => {
      const perJob = `${(docs / jobs).toFixed(3)} docs, ${(bytes / jobs / 1000).toFixed(3)} KB`;
      return `${key}: ${perJob} / job`;
    });
  appendFileSync(BY_TABLE_FILE, `${run}\n${lines.join("\n")}\n\n`);
  writes.clear();
}
