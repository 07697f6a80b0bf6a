import type { MessageEventMap, MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { EventRecord, EventState } from "./model.ts";
import type { EventStorage } from "./store.ts";

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
    ...extra,
  };
}

const answer = (e: { outcome: { status?: number; body?: Uint8Array; fault?: { kind: string; rule: string } } }) => ({
  responseStatus: e.outcome.status,
  responseBody: e.outcome.body,
  fault: e.outcome.fault,
});

/** The log entries (`GET /v2/logs`) each lifecycle event writes, oldest first. */
export const logEntries = {
  created: ({ message: m, atMs }: MessageEventMap["created"]) => [
    entry(m, "CREATED", atMs, { header: m.headers, body: m.body, method: m.method, maxRetries: m.maxRetries }),
  ],
  claimed: ({ message: m, atMs }: MessageEventMap["claimed"]) => [entry(m, "ACTIVE", atMs)],
  delivered: (e: MessageEventMap["delivered"]) => [entry(e.message, "DELIVERED", e.atMs, answer(e))],
  retried: (e: MessageEventMap["retried"]) => [
    entry(e.message, "ERROR", e.atMs, { error: e.error, nextDeliveryTime: e.nextDeliveryAt, ...answer(e) }),
    entry(e.message, "RETRY", e.atMs, { nextDeliveryTime: e.nextDeliveryAt }),
  ],
  failed: (e: MessageEventMap["failed"]) => [
    entry(e.message, "ERROR", e.atMs, { error: e.error, ...answer(e) }),
    entry(e.message, "FAILED", e.atMs, { error: e.error, ...answer(e) }),
  ],
  cancelled: ({ message: m, atMs }: MessageEventMap["cancelled"]) => [
    entry(m, "CANCEL_REQUESTED", atMs),
    entry(m, "CANCELED", atMs),
  ],
};

/** Writes every transition of every message to the event log, in the write that makes it. */
export function eventLogListener(store: EventStorage): MessageListener {
  const append = (entries: EventRecord[]) => {
    for (const e of entries) store.append(e);
  };
  return {
    created: (e) => append(logEntries.created(e)),
    claimed: (e) => append(logEntries.claimed(e)),
    delivered: (e) => append(logEntries.delivered(e)),
    retried: (e) => append(logEntries.retried(e)),
    failed: (e) => append(logEntries.failed(e)),
    cancelled: (e) => append(logEntries.cancelled(e)),
  };
}
