import type { MessageEventMap, MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import { redactBody, redactHeaders } from "../model/redact.ts";
import { traceIdOf } from "../model/trace.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { EventRecord, EventState } from "./model.ts";
import type { EventStorage } from "./storage.ts";

function entry(m: MessageRecord, state: EventState, atMs: number, extra: Partial<EventRecord> = {}): EventRecord {
  return {
    time: atMs,
    accountId: m.accountId,
    messageId: m.id,
    state,
    url: m.url,
    topicName: m.topicName,
    endpointName: m.endpointName,
    queueName: m.queueName,
    scheduleId: m.scheduleId,
    labels: m.labels,
    retryDelayExpr: m.retryDelayExpr,
    flowControlKey: m.flow?.key,
    callerIp: m.callerIp,
    callback: m.callback?.url,
    // A redacted header stays redacted wherever the message forwards it.
    callbackHeaders: m.callback?.headers.length ? redactHeaders(m.callback.headers, m.redact) : undefined,
    failureCallback: m.failureCallback?.url,
    failureCallbackHeaders: m.failureCallback?.headers.length ? redactHeaders(m.failureCallback.headers, m.redact) : undefined,
    timeoutMs: m.timeoutMs,
    traceId: m.trace && traceIdOf(m.trace),
    ...extra,
  };
}

const answer = (e: { outcome: { status?: number; body?: Uint8Array; fault?: { kind: string; rule: string } } }) => ({
  responseStatus: e.outcome.status,
  responseBody: e.outcome.body,
  fault: e.outcome.fault,
});

/** An ERROR entry also keeps the answer's headers (the hosted logs show them there only). */
const errorAnswer = (e: { outcome: { status?: number; body?: Uint8Array; headers?: Array<[string, string]> } }) => ({
  ...answer(e),
  responseHeaders: e.outcome.headers?.length ? e.outcome.headers : undefined,
});

/** The log entries (`GET /v2/logs`) each lifecycle event writes, oldest first. */
export const logEntries = {
  created: ({ message: m, atMs }: MessageEventMap["created"]) => [
    // The log keeps redacted fields redacted: only the message itself (until delivered) holds them.
    entry(m, "CREATED", atMs, {
      header: redactHeaders(m.headers, m.redact),
      body: redactBody(m.body, m.redact),
      method: m.method,
      maxRetries: m.maxRetries,
    }),
  ],
  claimed: ({ message: m, atMs }: MessageEventMap["claimed"]) => [entry(m, "ACTIVE", atMs)],
  delivered: (e: MessageEventMap["delivered"]) => [entry(e.message, "DELIVERED", e.atMs, answer(e))],
  retried: (e: MessageEventMap["retried"]) => [
    entry(e.message, "ERROR", e.atMs, { error: e.error, nextDeliveryTime: e.nextDeliveryAt, ...errorAnswer(e) }),
    entry(e.message, "RETRY", e.atMs, { nextDeliveryTime: e.nextDeliveryAt }),
  ],
  failed: (e: MessageEventMap["failed"]) => [
    entry(e.message, "ERROR", e.atMs, { error: e.error, ...errorAnswer(e) }),
    entry(e.message, "FAILED", e.atMs, { error: e.error, ...answer(e) }),
  ],
  cancelled: ({ message: m, atMs }: MessageEventMap["cancelled"]) => [
    entry(m, "CANCEL_REQUESTED", atMs),
    entry(m, "CANCELED", atMs),
  ],
};

/** Writes every transition of every message to the event log, in the write `tx` that makes it. */
export function eventLogListener(store: EventStorage): MessageListener {
  const appendAll = async (tx: WriteTx, entries: EventRecord[]) => {
    for (const e of entries) await store.append(tx, e);
  };
  // Most transitions write one entry: its append's promise is the listener's, with none around it.
  const append = (tx: WriteTx, entries: EventRecord[]) =>
    entries.length === 1 ? store.append(tx, entries[0]!) : appendAll(tx, entries);
  return {
    created: (e, tx) => append(tx, logEntries.created(e)),
    claimed: (e, tx) => append(tx, logEntries.claimed(e)),
    delivered: (e, tx) => append(tx, logEntries.delivered(e)),
    retried: (e, tx) => append(tx, logEntries.retried(e)),
    failed: (e, tx) => append(tx, logEntries.failed(e)),
    cancelled: (e, tx) => append(tx, logEntries.cancelled(e)),
  };
}
