import type { Attributes } from "@opentelemetry/api";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";

/**
 * Span names and attributes after OpenTelemetry's semantic conventions (messaging, HTTP client,
 * error; v1.37), written out rather than imported: the messaging names are still "incubating",
 * which the conventions' authors advise copying. svcd's own attributes start with `svcd.`.
 * Neither a header value nor a body ever becomes an attribute, so what a message redacts
 * (`Svc-Redact-Fields`) never reaches a span.
 */
export const MESSAGING_SYSTEM = "svcd";

/** The message's own span: what made it (its publish, a schedule's trigger, a callback, a workflow step). */
export function creationName(m: MessageRecord): string {
  if (m.kind === "callback") return "callback";
  if (m.kind === "failure-callback") return "failure callback";
  if (m.workflow) return m.workflow.init ? "workflow run start" : "workflow step";
  // A schedule's trigger starts a trace of its own (a DLQ retry of its message continues one).
  if (m.scheduleId && !m.trace?.parentId) return "schedule trigger";
  return "publish";
}

/** The queue or URL Group a message goes through, else its URL (`messaging.destination.name`). */
const destinationOf = (m: MessageRecord): string => m.queueName ?? m.topicName ?? m.url;

/** `deliver`, `deliver <queue or URL Group>`, `deliver callback` …: no URL in a name (too many of them). */
export function attemptName(m: MessageRecord): string {
  if (m.kind !== "message") return `deliver ${m.kind === "callback" ? "callback" : "failure callback"}`;
  if (m.workflow) return "deliver workflow step";
  const group = m.queueName ?? m.topicName;
  return group ? `deliver ${group}` : "deliver";
}

/** What every span of a message says of it. */
export function messageAttributes(m: MessageRecord, operation: { type: string; name: string }): Attributes {
  const a: Attributes = {
    "messaging.system": MESSAGING_SYSTEM,
    "messaging.operation.type": operation.type,
    "messaging.operation.name": operation.name,
    "messaging.message.id": m.id,
    "messaging.destination.name": destinationOf(m),
    "messaging.message.body.size": m.body.byteLength,
    "url.full": m.url,
    "http.request.method": m.method,
    "svcd.message.kind": m.kind,
  };
  if (m.queueName) a["svcd.queue.name"] = m.queueName;
  if (m.topicName) a["svcd.url_group.name"] = m.topicName;
  if (m.flow) a["svcd.flow_control.key"] = m.flow.key;
  if (m.labels?.length) a["svcd.labels"] = m.labels;
  if (m.scheduleId) a["svcd.schedule.id"] = m.scheduleId;
  if (m.workflow) {
    a["svcd.workflow.run_id"] = m.workflow.runId;
    a["svcd.workflow.call_type"] = m.workflow.callType;
  }
  return a;
}

export type AttemptEnd = "delivered" | "retry" | "failed" | "cancelled";

/** What an attempt came back with, and how long it waited before its request. */
export function attemptAttributes(
  m: MessageRecord,
  outcome: DeliveryOutcome | undefined,
  timing: { handedAt: number; dueAt?: number },
  end: AttemptEnd,
): Attributes {
  const a = messageAttributes(m, { type: "send", name: "deliver" });
  a["svcd.delivery.retried"] = m.retried;
  a["svcd.delivery.max_retries"] = m.maxRetries;
  if (m.retried > 0) a["http.request.resend_count"] = m.retried;
  a["svcd.delivery.outcome"] = end;
  if (timing.dueAt !== undefined) a["svcd.delivery.waited_ms"] = Math.max(0, timing.handedAt - timing.dueAt);
  if (outcome) {
    a["svcd.delivery.lane_wait_ms"] = Math.max(0, outcome.startedAt - timing.handedAt);
    if (outcome.status !== undefined) a["http.response.status_code"] = outcome.status;
    // A 2XX that still failed was refused (a workflow run's start answered by no workflow).
    if (end === "retry" || end === "failed") a["error.type"] = errorTypeOf(outcome) ?? "refused";
    if (outcome.fault) a["svcd.fault.kind"] = outcome.fault.kind;
  }
  return a;
}

/** A few values, as `error.type` wants: the status code, or how the request got no answer. */
function errorTypeOf(outcome: DeliveryOutcome): string | undefined {
  if (outcome.status !== undefined) return outcome.status >= 200 && outcome.status < 300 ? undefined : String(outcome.status);
  if (!outcome.error) return undefined;
  if (outcome.error.startsWith("timeout")) return "timeout";
  if (outcome.error.startsWith("cancelled")) return "cancelled";
  return "no_answer";
}
