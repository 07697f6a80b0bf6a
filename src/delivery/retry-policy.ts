import { compileRetryExpression } from "../util/retry-expression.ts";
import { defaultBackoffMs, retryAfterFromHeaders } from "./backoff.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";

export type AttemptDecision =
  | { kind: "delivered" }
  | { kind: "retry"; at: number; error: string }
  | { kind: "failed"; error: string };

export interface AttemptContext {
  retried: number;
  maxRetries: number;
  retryDelayExpr?: string;
  /** `<Prefix>-NonRetryable-Error`, lower case. */
  nonRetryableHeader: string;
  /** Global multiplier of every retry delay (`--retry-delay-scale`). */
  delayScale: number;
  nowMs: number;
}

const compiled = new Map<string, (retried: number) => number>();
function retryExpression(src: string) {
  let fn = compiled.get(src);
  if (!fn) {
    fn = compileRetryExpression(src);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(src, fn);
  }
  return fn;
}

export function describeOutcome(outcome: DeliveryOutcome): string {
  if (outcome.status === undefined) return outcome.error ?? "no answer";
  return `the destination answered ${outcome.status}`;
}

/** What follows one attempt: delivered on 2XX, else a retry at a computed time or failure. */
export function decideAfterAttempt(outcome: DeliveryOutcome, ctx: AttemptContext): AttemptDecision {
  const status = outcome.status;
  if (status !== undefined && status >= 200 && status < 300) return { kind: "delivered" };
  const error = describeOutcome(outcome);
  const headers = new Headers(outcome.headers ?? []);
  if (status === 489 && headers.get(ctx.nonRetryableHeader)?.toLowerCase() === "true")
    return { kind: "failed", error: `${error} with a non-retryable error` };
  if (ctx.retried >= ctx.maxRetries) return { kind: "failed", error };

  const fromReceiver = status === undefined ? undefined : retryAfterFromHeaders(headers, ctx.nowMs);
  const delay =
    fromReceiver ??
    (ctx.retryDelayExpr ? retryExpression(ctx.retryDelayExpr)(ctx.retried) : defaultBackoffMs(ctx.retried + 1));
  return { kind: "retry", at: ctx.nowMs + Math.round(delay * ctx.delayScale), error };
}
