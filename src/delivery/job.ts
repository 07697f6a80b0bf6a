import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { laneKey } from "../flow-control/lane-key.ts";
import type { MessageRecord } from "../model/message.ts";
import { traceHeaders, type TraceContext } from "../model/trace.ts";
import type { DeliveryJob, JobFault } from "./worker-protocol.ts";

/** The request a message becomes: its own headers plus the delivery headers (docs/messaging-api.md, Delivery). */
export function buildJob(
  m: MessageRecord,
  account: Account,
  where: { dialect: Dialect; region: string },
  ticket: number,
  body?: Uint8Array,
  fault?: JobFault,
  trace?: TraceContext,
): DeliveryJob {
  const { dialect } = where;
  const p = dialect.prefix;
  const headers: Array<[string, string]> = trace ? withTrace(m.headers, trace) : [...m.headers];
  headers.push(["User-Agent", dialect.userAgent]);
  headers.push([`${p}-Message-Id`, m.id]);
  headers.push([`${p}-Retried`, String(m.retried)]);
  if (m.topicName) headers.push([`${p}-Topic-Name`, m.topicName]);
  if (m.scheduleId) headers.push([`${p}-Schedule-Id`, m.scheduleId]);
  if (m.callerIp) headers.push([`${p}-Caller-Ip`, m.callerIp]);
  // The official Receiver picks `<REGION>_QSTASH_*_SIGNING_KEY` by this header when QSTASH_REGION is set.
  headers.push([`${p}-Region`, where.region]);
  return {
    ticket,
    messageId: m.id,
    url: m.url,
    method: m.method,
    headers,
    // Copied into the batch's buffer when the job goes to its worker (delivery/wire.ts).
    body: body ?? m.body,
    timeoutMs: m.timeoutMs,
    signingKey: account.currentSigningKey,
    issuer: dialect.jwtIssuer,
    signatureHeader: `${p}-Signature`,
    maxResponseBytes: account.limits.maxMessageSize,
    // A 2XX answer's headers matter only to a callback and to a workflow run (the retry policy
    // and the DLQ read them on any other answer).
    headersOf2xx: m.callback !== undefined || m.workflow !== undefined,
    // The worker's lanes are per account: the same key of two accounts is two lanes.
    flow: m.flow ? { ...m.flow, key: laneKey(m.accountId, m.flow.key) } : undefined,
    fault,
  };
}

/**
 * The message's headers with svcd's span of the attempt as its trace context: a `traceparent` or
 * `tracestate` the publisher forwarded is replaced (docs/operations.md, Tracing).
 */
function withTrace(headers: Array<[string, string]>, trace: TraceContext): Array<[string, string]> {
  const kept = headers.filter(([name]) => {
    const lower = name.toLowerCase();
    return lower !== "traceparent" && lower !== "tracestate";
  });
  kept.push(...traceHeaders(trace));
  return kept;
}
