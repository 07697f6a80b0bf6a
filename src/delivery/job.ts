import type { Account } from "../accounts/accounts.ts";
import type { Dialect } from "../core/dialect.ts";
import { laneKey } from "../flow-control/lane-key.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryJob } from "./worker-protocol.ts";

/** The request a message becomes: its own headers plus the delivery headers of fidelity.md §3. */
export function buildJob(m: MessageRecord, account: Account, dialect: Dialect, ticket: number, body?: Uint8Array): DeliveryJob {
  const p = dialect.prefix;
  const headers: Array<[string, string]> = [...m.headers];
  headers.push(["User-Agent", dialect.userAgent]);
  headers.push([`${p}-Message-Id`, m.id]);
  headers.push([`${p}-Retried`, String(m.retried)]);
  if (m.topicName) headers.push([`${p}-Topic-Name`, m.topicName]);
  if (m.scheduleId) headers.push([`${p}-Schedule-Id`, m.scheduleId]);
  if (m.callerIp) headers.push([`${p}-Caller-Ip`, m.callerIp]);
  return {
    ticket,
    messageId: m.id,
    url: m.url,
    method: m.method,
    headers,
    // Copied: the buffer is transferred to the worker and the record may still be needed here.
    body: body ?? m.body.slice(),
    timeoutMs: m.timeoutMs,
    signingKey: account.currentSigningKey,
    issuer: dialect.jwtIssuer,
    signatureHeader: `${p}-Signature`,
    maxResponseBytes: account.limits.maxMessageSize,
    // The worker's lanes are per account: the same key of two accounts is two lanes.
    flow: m.flow ? { ...m.flow, key: laneKey(m.accountId, m.flow.key) } : undefined,
  };
}
