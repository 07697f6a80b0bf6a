import { withoutCredentials, type Logger } from "../core/log.ts";
import type { MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";

/**
 * One log line per recorded delivery attempt, and a warning when a message moves to the DLQ.
 * Lines come from the event bus after the commit, so they tell what the database holds (an
 * outcome whose write failed and is retried is logged once, when it lands). Every field has one
 * type on every line: `status` is the HTTP status or null, `error` the reason or null.
 */
export function logDeliveries(events: MessageEvents, log: Logger): void {
  if (log.enabled?.("info") ?? true) {
    events.observe("delivered", (e) => log.info("delivery", fields(e.message, e.outcome, "delivered", null, null, null)));
    events.observe("retried", (e) => log.info("delivery", fields(e.message, e.outcome, "retry", e.error, e.nextDeliveryAt, null)));
    events.observe("failed", (e) => log.info("delivery", fields(e.message, e.outcome, "failed", e.error, null, e.dlqId ?? null)));
  }
  events.observe("failed", (e) =>
    e.dlqId !== undefined &&
    log.warn("message moved to the DLQ", {
      messageId: e.message.id,
      dlqId: e.dlqId,
      account: e.message.accountId,
      url: withoutCredentials(e.message.url),
      attempts: e.message.retried + 1,
      status: e.outcome.status ?? null,
      error: e.error,
    }),
  );
}

function fields(
  m: MessageRecord,
  outcome: DeliveryOutcome,
  result: "delivered" | "retry" | "failed",
  error: string | null,
  nextAttemptAt: number | null,
  dlqId: string | null,
) {
  return {
    result,
    messageId: m.id,
    account: m.accountId,
    url: withoutCredentials(m.url),
    attempt: m.retried + 1,
    status: outcome.status ?? null,
    error,
    ms: Math.round(outcome.durationMs),
    nextAttemptAt: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
    dlqId,
    ...(outcome.fault ? { fault: outcome.fault.kind, faultRule: outcome.fault.rule } : {}),
  };
}
