import { toBase64 } from "../util/base64.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import { newMessageId } from "../core/ids.ts";
import type { CallbackSpec, MessageRecord } from "../model/message.ts";
import type { TraceContext } from "../model/trace.ts";
import { headerMap } from "./views.ts";


/** The body of a callback or failure callback, field for field as documented (docs/messaging-api.md, Callbacks). */
export function callbackBody(source: MessageRecord, outcome: DeliveryOutcome, dlqId?: string) {
  return {
    status: outcome.status ?? 0,
    header: headerMap(outcome.headers),
    body: toBase64(outcome.body ?? new Uint8Array()),
    retried: source.retried,
    maxRetries: source.maxRetries,
    ...(dlqId !== undefined ? { dlqId } : {}),
    sourceMessageId: source.id,
    topicName: source.topicName ?? "",
    endpointName: source.endpointName ?? "",
    url: source.url,
    method: source.method,
    sourceHeader: headerMap(source.headers),
    sourceBody: toBase64(source.body),
    notBefore: String(source.notBefore),
    createdAt: String(source.createdAt),
    scheduleId: source.scheduleId ?? "",
    callerIP: source.callerIp ?? "",
  };
}

/** A callback is a message of its own: signed, retried per its settings, logged and billed. */
export function callbackMessage(
  source: MessageRecord,
  spec: CallbackSpec,
  kind: "callback" | "failure-callback",
  outcome: DeliveryOutcome,
  nowMs: number,
  dlqId?: string,
  trace?: TraceContext,
): MessageRecord {
  const body = new TextEncoder().encode(JSON.stringify(callbackBody(source, outcome, dlqId)));
  const notBefore = nowMs + (spec.delayMs ?? 0);
  return {
    id: newMessageId(),
    accountId: source.accountId,
    kind,
    state: "CREATED",
    dispatchAt: notBefore,
    notBefore,
    createdAt: nowMs,
    retried: 0,
    maxRetries: spec.retries ?? source.maxRetries,
    url: spec.url,
    method: spec.method,
    headers: [["Content-Type", "application/json"], ...spec.headers],
    body,
    timeoutMs: spec.timeoutMs ?? source.timeoutMs,
    retryDelayExpr: spec.retryDelayExpr,
    topicName: source.topicName,
    endpointName: source.endpointName,
    scheduleId: source.scheduleId,
    callerIp: source.callerIp,
    labels: source.labels,
    flow: spec.flow,
    failureCallback: spec.failureCallback,
    workflow: spec.workflow,
    // Its body carries the source's body and headers (sourceBody, sourceHeader): shown redacted too.
    redact: source.redact ? { body: true } : undefined,
    trace,
  };
}
