import { bodyFields } from "../util/base64.ts";
import { canonicalHeaderName } from "../util/canonical-header.ts";
import { labelFields } from "../model/labels.ts";
import type { MessageRecord } from "../model/message.ts";
import { redactBody, redactHeaders } from "../model/redact.ts";

/** `[name, value]` pairs as the `header` maps of the API: canonical name → every value. */
export function headerMap(pairs: Array<[string, string]> | undefined): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const [name, value] of pairs ?? []) (map[canonicalHeaderName(name)] ??= []).push(value);
  return map;
}

/** Drops undefined fields, so absent values are left out rather than sent as null. */
export function compact<T extends Record<string, unknown>>(obj: T): T {
  for (const key of Object.keys(obj)) if (obj[key] === undefined) delete obj[key];
  return obj;
}

/** The message as `GET /v2/messages/{id}` and the DLQ show it (docs/messaging-api.md, Messages, logs and the DLQ). */
export function messageView(m: MessageRecord) {
  return compact({
    messageId: m.id,
    url: m.url,
    topicName: m.topicName,
    endpointName: m.endpointName,
    method: m.method,
    // Redacted fields never leave svcd in the clear; the delivery alone carries them.
    header: headerMap(redactHeaders(m.headers, m.redact)),
    ...bodyFields(redactBody(m.body, m.redact), "body", "bodyBase64"),
    maxRetries: m.maxRetries,
    notBefore: m.notBefore,
    createdAt: m.createdAt,
    callback: m.callback?.url,
    failureCallback: m.failureCallback?.url,
    queueName: m.queueName,
    scheduleId: m.scheduleId,
    callerIP: m.callerIp,
    ...labelFields(m.labels),
    flowControlKey: m.flow?.key,
    rate: m.flow?.rate,
    period: m.flow ? Math.round(m.flow.periodMs / 1000) : undefined,
    parallelism: m.flow?.parallelism,
    retryDelayExpression: m.retryDelayExpr,
  });
}
