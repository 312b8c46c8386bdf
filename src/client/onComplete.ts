/**
 * What an onComplete mutation receives, and the helpers to declare one: the `OnCompleteArgs` type,
 * the validators `vRunResult` / `vOnCompleteArgs` / `vOnComplete`, and `defineOnCompleteMutation`
 * (what `Workpool.defineOnComplete` returns). Shapes and registration only: it never calls the
 * component and never decides when or how often onComplete runs (the component calls it exactly
 * once per job). The validators' JSON forms must stay the peer's (test/parity.test.ts checks them).
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- the validator generics are `Validator<any,
   ...>` by design: they mirror the peer's public types. */
import {
  internalMutationGeneric,
  type GenericDataModel,
  type GenericMutationCtx,
  type RegisteredMutation,
} from "convex/server";
import { v, type Infer, type Validator, type VAny } from "convex/values";
import type { RunResult } from "../component/model/validators.js";
import { vWorkId, type WorkId } from "./types.js";

/** The arguments an onComplete mutation receives. */
export type OnCompleteArgs<Context = unknown, Returns = unknown> = {
  /** The job that finished. */
  workId: string;
  /** The `context` passed at enqueue. */
  context: Context;
  /** How it ended. */
  result: RunResult<Returns>;
};

/**
 * Builds the validator of a job's result, with `returnValue` checked by `returnValue` (default
 * `v.any()`): `{ kind: "success", returnValue } | { kind: "failed", error } | { kind: "canceled" }`.
 */
export function vRunResult<RV extends Validator<any, any, any> = VAny>(returnValue?: RV) {
  return v.union(
    v.object({ kind: v.literal("success"), returnValue: (returnValue ?? v.any()) as RV }),
    v.object({ kind: v.literal("failed"), error: v.string(), errorData: v.optional(v.any()) }),
    v.object({ kind: v.literal("canceled") }),
  );
}

/**
 * Builds the validator of onComplete's arguments, e.g. for a hand-written onComplete mutation:
 * `internalMutation({ args: vOnCompleteArgs(v.object({ userId: v.id("users") })), handler })`.
 * @param context validator of the `context` passed at enqueue (default: anything, or none).
 * @param returnValue validator of a success's `returnValue` (default: anything).
 */
export function vOnCompleteArgs<
  VContext extends Validator<any, "required", any> = VAny,
  VReturn extends Validator<any, "required", any> = VAny,
>(context?: VContext, returnValue?: VReturn) {
  return v.object({
    workId: vWorkId,
    context: (context ?? v.optional(v.any())) as VContext,
    result: vRunResult((returnValue ?? v.optional(v.any())) as VReturn),
  });
}
/** The validator of onComplete's arguments with any context: `vOnCompleteArgs()`. */
export const vOnComplete = vOnCompleteArgs();
/** @deprecated The peer's older name of `vOnCompleteArgs`. */
export const vOnCompleteValidator = vOnCompleteArgs;

/** What `defineOnComplete` takes: the context and return value validators, and the handler. */
export type DefineOnCompleteArgs<
  DataModel extends GenericDataModel,
  VContext extends Validator<any, any, any>,
  VReturnValue extends Validator<any, any, any>,
> = {
  context?: VContext;
  handler: (
    ctx: GenericMutationCtx<DataModel>,
    args: { workId: WorkId; context: Infer<VContext>; result: RunResult<Infer<VReturnValue>> },
  ) => Promise<void>;
  returnValue?: VReturnValue;
};

/**
 * The internal mutation `Workpool.defineOnComplete` returns (see its doc comment): checks its
 * arguments with `vOnCompleteArgs(context, returnValue)`, runs `handler` and returns null.
 */
export function defineOnCompleteMutation<
  DataModel extends GenericDataModel,
  VContext extends Validator<any, any, any>,
  VReturnValue extends Validator<any, any, any>,
>({
  context,
  handler,
  returnValue,
}: DefineOnCompleteArgs<DataModel, VContext, VReturnValue>): RegisteredMutation<
  "internal",
  OnCompleteArgs<Infer<VContext>, Infer<VReturnValue>>,
  null
> {
  return internalMutationGeneric({
    args: vOnCompleteArgs(context, returnValue),
    handler: async (ctx: GenericMutationCtx<DataModel>, args: any) => {
      await handler(ctx, args);
      return null;
    },
  }) as any;
}
