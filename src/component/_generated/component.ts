/* eslint-disable */
/**
 * Generated `ComponentApi` utility.
 *
 * THIS CODE IS AUTOMATICALLY GENERATED.
 *
 * To regenerate, run `npx convex dev`.
 * @module
 */

import type { FunctionReference } from "convex/server";

/**
 * A utility for referencing a Convex component's exposed API.
 *
 * Useful when expecting a parameter like `components.myComponent`.
 * Usage:
 * ```ts
 * async function myFunction(ctx: QueryCtx, component: ComponentApi) {
 *   return ctx.runQuery(component.someFile.someQuery, { ...args });
 * }
 * ```
 */
export type ComponentApi<Name extends string | undefined = string | undefined> =
  {
    config: {
      setMaxParallelism: FunctionReference<
        "mutation",
        "internal",
        { maxParallelism: number | null },
        null,
        Name
      >;
      update: FunctionReference<
        "mutation",
        "internal",
        {
          fairness?: "share" | "due";
          keyParallelism?: number;
          keyRateLimit?: null | { periodMs: number; starts: number };
          logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
          maxParallelism?: number;
          rateLimit?: null | { periodMs: number; starts: number };
        },
        null,
        Name
      >;
    };
    groups: {
      cancelGroup: FunctionReference<
        "mutation",
        "internal",
        { id: string; limit?: number },
        null,
        Name
      >;
      closeGroup: FunctionReference<
        "mutation",
        "internal",
        { id: string },
        null,
        Name
      >;
      createGroup: FunctionReference<
        "mutation",
        "internal",
        { context?: any; name?: string; onComplete?: string },
        string,
        Name
      >;
      groupStatus: FunctionReference<
        "query",
        "internal",
        { id: string },
        {
          canceled: number;
          closed: boolean;
          createdAt: number;
          done: boolean;
          failed: number;
          finishedAt?: number;
          id: string;
          name?: string;
          pending: number;
          running: number;
          succeeded: number;
          total: number;
        } | null,
        Name
      >;
    };
    inspect: {
      list: FunctionReference<
        "query",
        "internal",
        {
          group?: string;
          key?: string;
          outcome?: "success" | "failed" | "canceled";
          paginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
          schedule?: string;
          state?: "pending" | "running" | "finished";
        },
        {
          continueCursor: string;
          isDone: boolean;
          page: Array<{
            awaiting?: { deadline: number; since: number };
            enqueuedAt: number;
            finishedAt?: number;
            fnType: "action" | "mutation" | "query";
            group?: string;
            id: string;
            key?: string;
            name: string;
            previousAttempts: number;
            priority: "high" | "normal" | "low";
            result?:
              | { kind: "success" }
              | { error: string; errorData?: any; kind: "failed" }
              | { kind: "canceled" };
            retriedAs?: string;
            schedule?: string;
            scheduledFor?: number;
            startedAt?: number;
            state: "pending" | "running" | "finished";
          }>;
          pageStatus?: "SplitRecommended" | "SplitRequired" | null;
          splitCursor?: string | null;
        },
        Name
      >;
      overview: FunctionReference<
        "query",
        "internal",
        {
          keysPaginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
        },
        {
          keys: {
            continueCursor: string;
            isDone: boolean;
            page: Array<{
              canceled: number;
              failed: number;
              key: string;
              parallelism: number;
              paused: boolean;
              pending: number;
              rateLimit: null | { periodMs: number; starts: number };
              reserve: number;
              running: number;
              succeeded: number;
              weight: number;
            }>;
            pageStatus?: "SplitRecommended" | "SplitRequired" | null;
            splitCursor?: string | null;
          };
          series: Array<{
            canceled: number;
            failed: number;
            retried: number;
            second: number;
            started: number;
            succeeded: number;
          }>;
          stats: {
            lastMinute: {
              canceled: number;
              failed: number;
              retried: number;
              started: number;
              succeeded: number;
            };
            maxParallelism: number;
            oldestPendingMs: number;
            operatorMaxParallelism: null | number;
            paused: boolean;
            pending: number;
            running: number;
            totals: {
              canceled: number;
              enqueued: number;
              failed: number;
              retried: number;
              started: number;
              succeeded: number;
            };
          };
        },
        Name
      >;
      stats: FunctionReference<
        "query",
        "internal",
        {},
        {
          lastMinute: {
            canceled: number;
            failed: number;
            retried: number;
            started: number;
            succeeded: number;
          };
          maxParallelism: number;
          oldestPendingMs: number;
          operatorMaxParallelism: null | number;
          paused: boolean;
          pending: number;
          running: number;
          totals: {
            canceled: number;
            enqueued: number;
            failed: number;
            retried: number;
            started: number;
            succeeded: number;
          };
        },
        Name
      >;
    };
    keys: {
      keyStatus: FunctionReference<
        "query",
        "internal",
        { key: string },
        {
          canceled: number;
          failed: number;
          parallelism: number;
          paused: boolean;
          pending: number;
          rateLimit: null | { periodMs: number; starts: number };
          reserve: number;
          running: number;
          succeeded: number;
          weight: number;
        },
        Name
      >;
      pause: FunctionReference<"mutation", "internal", { key?: string }, null, Name>;
      resume: FunctionReference<"mutation", "internal", { key?: string }, null, Name>;
      setKeyParallelism: FunctionReference<
        "mutation",
        "internal",
        { key: string; parallelism: number | null },
        null,
        Name
      >;
      setKeyRateLimit: FunctionReference<
        "mutation",
        "internal",
        { key: string; rateLimit: { periodMs: number; starts: number } | false | null },
        null,
        Name
      >;
      setKeyShare: FunctionReference<
        "mutation",
        "internal",
        { key: string; share: { reserve?: number; weight?: number } | null },
        null,
        Name
      >;
    };
    lib: {
      cancel: FunctionReference<
        "mutation",
        "internal",
        {
          config?: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          id: string;
          logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
        },
        null,
        Name
      >;
      cancelAll: FunctionReference<
        "mutation",
        "internal",
        {
          before?: number;
          config?: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          key?: string;
          limit?: number;
          logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
        },
        null,
        Name
      >;
      complete: FunctionReference<
        "mutation",
        "internal",
        {
          attempt?: number;
          id: string;
          outcome:
            | { kind: "success"; returnValue?: any }
            | { error: string; kind: "failed"; nonRetryable?: boolean };
        },
        boolean,
        Name
      >;
      enqueue: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          countShard?: number;
          dedupeKey?: string;
          fnArgs: any;
          fnHandle: string;
          fnName: string;
          fnType: "action" | "mutation" | "query";
          group?: string;
          key?: string;
          manualCompletion?: { timeoutMs: number };
          onComplete?: {
            context?: any;
            excludeKinds?: Array<"success" | "failed" | "canceled">;
            fnHandle: string;
          };
          onDuplicate?: "keep" | "replace";
          priority?: "high" | "normal" | "low";
          retryBehavior?: {
            base: number;
            initialBackoffMs: number;
            maxAttempts: number;
            maxBackoffMs?: number;
          };
          runAfter?: number;
          runAt?: number;
          statusTtlMs?: number;
          task?: string;
        },
        string,
        Name
      >;
      enqueueBatch: FunctionReference<
        "mutation",
        "internal",
        {
          config: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          countShard?: number;
          items: Array<{
            dedupeKey?: string;
            fnArgs: any;
            fnHandle: string;
            fnName: string;
            fnType: "action" | "mutation" | "query";
            group?: string;
            key?: string;
            manualCompletion?: { timeoutMs: number };
            onComplete?: {
            context?: any;
            excludeKinds?: Array<"success" | "failed" | "canceled">;
            fnHandle: string;
            };
            onDuplicate?: "keep" | "replace";
            priority?: "high" | "normal" | "low";
            retryBehavior?: {
              base: number;
              initialBackoffMs: number;
              maxAttempts: number;
              maxBackoffMs?: number;
            };
            runAfter?: number;
            runAt?: number;
            statusTtlMs?: number;
            task?: string;
          }>;
        },
        Array<string>,
        Name
      >;
      info: FunctionReference<
        "query",
        "internal",
        { id: string },
        {
          awaiting?: { deadline: number; since: number };
          enqueuedAt: number;
          finishedAt?: number;
          fnType: "action" | "mutation" | "query";
          group?: string;
          id: string;
          key?: string;
          name: string;
          previousAttempts: number;
          priority: "high" | "normal" | "low";
          result?:
            | { kind: "success"; returnValue: any }
            | { error: string; errorData?: any; kind: "failed" }
            | { kind: "canceled" };
          retriedAs?: string;
          schedule?: string;
          scheduledFor?: number;
          startedAt?: number;
          state: "pending" | "running" | "finished";
        } | null,
        Name
      >;
      retry: FunctionReference<
        "mutation",
        "internal",
        {
          config?: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          id: string;
        },
        string,
        Name
      >;
      status: FunctionReference<
        "query",
        "internal",
        { id: string },
        | { previousAttempts: number; state: "pending" }
        | { previousAttempts: number; state: "running" }
        | { state: "finished" },
        Name
      >;
      statusBatch: FunctionReference<
        "query",
        "internal",
        { ids: Array<string> },
        Array<
          | { previousAttempts: number; state: "pending" }
          | { previousAttempts: number; state: "running" }
          | { state: "finished" }
        >,
        Name
      >;
    };
    runners: {
      executor: {
        report: FunctionReference<
          "mutation",
          "internal",
          {
            argsRoom?: number;
            concurrency?: number;
            ending?: boolean;
            executorId: string;
            outcomes: Array<{
              attempt: number;
              result:
                | { kind: "success"; returnValue: any }
                | {
                    error: string;
                    errorData?: any;
                    fnArgs?: any;
                    kind: "failed";
                    nonRetryable?: boolean;
                  }
                | { delayMs: number; fnArgs?: any; kind: "snoozed" };
              workId: string;
            }>;
            room?: number;
            seq?: number;
          },
          {
            cancels: Array<string>;
            more: boolean;
            stop: boolean;
            tasks: Array<{
              attempt: number;
              fnArgs: any;
              previousAttempts: number;
              task: string;
              workId: string;
            }>;
          },
          Name
        >;
      };
    };
    schedules: {
      get: FunctionReference<
        "query",
        "internal",
        { name: string },
        {
            catchupWindowMs: number;
            counts: { enqueued: number; missed: number; skipped: number };
            cron?: string;
            endAt?: number;
            everyMs?: number;
            fnName: string;
            id: string;
            jitterMs: number;
            lastRun?: {
              outcome?: "success" | "failed" | "canceled";
              scheduledFor: number;
              state: "pending" | "running" | "finished";
              workId: string;
            };
            name: string;
            nextRunAt: number | null;
            overlap: "skip" | "bufferOne" | "allowAll" | "cancelOther";
            paused: boolean;
            startAt?: number;
            timezone?: string;
          } | null,
        Name
      >;
      list: FunctionReference<
        "query",
        "internal",
        {
          paginationOpts: {
            cursor: string | null;
            endCursor?: string | null;
            id?: number;
            maximumBytesRead?: number;
            maximumRowsRead?: number;
            numItems: number;
          };
        },
        {
          continueCursor: string;
          isDone: boolean;
          page: Array<{
            catchupWindowMs: number;
            counts: { enqueued: number; missed: number; skipped: number };
            cron?: string;
            endAt?: number;
            everyMs?: number;
            fnName: string;
            id: string;
            jitterMs: number;
            lastRun?: {
              outcome?: "success" | "failed" | "canceled";
              scheduledFor: number;
              state: "pending" | "running" | "finished";
              workId: string;
            };
            name: string;
            nextRunAt: number | null;
            overlap: "skip" | "bufferOne" | "allowAll" | "cancelOther";
            paused: boolean;
            startAt?: number;
            timezone?: string;
          }>;
          pageStatus?: "SplitRecommended" | "SplitRequired" | null;
          splitCursor?: string | null;
        },
        Name
      >;
      pause: FunctionReference<"mutation", "internal", { name: string }, boolean, Name>;
      resume: FunctionReference<"mutation", "internal", { name: string }, boolean, Name>;
      runNow: FunctionReference<
        "mutation",
        "internal",
        {
          config?: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          name: string;
        },
        string | null,
        Name
      >;
      schedule: FunctionReference<
        "mutation",
        "internal",
        {
          catchupWindowMs?: number;
          config?: {
            fairness?: "share" | "due";
            keyParallelism?: number;
            keyRateLimit?: null | { periodMs: number; starts: number };
            logLevel?: "DEBUG" | "TRACE" | "INFO" | "REPORT" | "WARN" | "ERROR";
            maxParallelism?: number;
            rateLimit?: null | { periodMs: number; starts: number };
          };
          cron?: string;
          endAt?: number;
          everyMs?: number;
          jitterMs?: number;
          name: string;
          overlap?: "skip" | "bufferOne" | "allowAll" | "cancelOther";
          paused?: boolean;
          run: {
            fnArgs: any;
            fnHandle: string;
            fnName: string;
            fnType: "action" | "mutation" | "query";
            key?: string;
            onComplete?: {
              context?: any;
              excludeKinds?: Array<"success" | "failed" | "canceled">;
              fnHandle: string;
            };
            priority?: "high" | "normal" | "low";
            retryBehavior?: {
              base: number;
              initialBackoffMs: number;
              maxAttempts: number;
              maxBackoffMs?: number;
            };
            runName?: string;
            statusTtlMs?: number;
          };
          startAt?: number;
          timezone?: string;
        },
        string,
        Name
      >;
      unschedule: FunctionReference<"mutation", "internal", { name: string }, boolean, Name>;
    };
  };
