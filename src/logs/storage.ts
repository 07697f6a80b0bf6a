import { Type } from "@sinclair/typebox";
import { HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";
import type { Filter } from "../filters/filter.ts";
import type { WriteTx } from "../store/transactor.ts";
import { joinLabels, splitLabels } from "../model/labels.ts";
import type { EventRecord, EventState } from "./model.ts";

export interface EventRow {
  seq: number;
  account_id: string;
  time: number;
  message_id: string;
  state: string;
  url: string;
  topic_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  label: string | null;
  flow_key: string | null;
  caller_ip: string | null;
  data: string;
  body: Uint8Array | null;
  response_body: Uint8Array | null;
  /** SQLite engine: the body stored once with the message (engines/sqlite/bodies.ts), instead of `body`. */
  shared_body?: number | null;
}

type EventData = Pick<
  EventRecord,
  | "error" | "nextDeliveryTime" | "endpointName" | "method" | "maxRetries" | "header" | "responseStatus" | "retryDelayExpr"
  | "responseHeaders" | "callback" | "callbackHeaders" | "failureCallback" | "failureCallbackHeaders" | "timeoutMs"
  | "fault" | "traceId"
>;

/** What readers rely on in the `data` column (the rest of EventData is optional and shown as stored). */
const readData = jsonColumn(
  "events.data",
  Type.Object({
    error: Type.Optional(Type.String()),
    nextDeliveryTime: Type.Optional(Type.Number()),
    method: Type.Optional(Type.String()),
    maxRetries: Type.Optional(Type.Number()),
    header: Type.Optional(HeaderPairs),
    responseStatus: Type.Optional(Type.Number()),
    fault: Type.Optional(Type.Object({ kind: Type.String(), rule: Type.String() })),
  }),
);

/** Log responses are kept up to this size; the full answer stays in the DLQ entry. */
const MAX_LOGGED_RESPONSE = 64 * 1024;

/** The filter columns of the event log. */
export const EVENT_FILTER_COLUMNS = { messageId: "message_id", time: "time", state: "state" };

/** The columns of a log entry (every engine stores the same). */
export function eventRowOf(e: EventRecord) {
  const data: EventData = {
    error: e.error,
    nextDeliveryTime: e.nextDeliveryTime,
    endpointName: e.endpointName,
    method: e.method,
    maxRetries: e.maxRetries,
    header: e.header,
    responseStatus: e.responseStatus,
    retryDelayExpr: e.retryDelayExpr,
    responseHeaders: e.responseHeaders,
    callback: e.callback,
    callbackHeaders: e.callbackHeaders,
    failureCallback: e.failureCallback,
    failureCallbackHeaders: e.failureCallbackHeaders,
    timeoutMs: e.timeoutMs,
    fault: e.fault,
    traceId: e.traceId,
  };
  return {
    account_id: e.accountId,
    time: e.time,
    message_id: e.messageId,
    state: e.state,
    url: e.url,
    topic_name: e.topicName ?? null,
    queue_name: e.queueName ?? null,
    schedule_id: e.scheduleId ?? null,
    label: joinLabels(e.labels),
    flow_key: e.flowControlKey ?? null,
    caller_ip: e.callerIp ?? null,
    data: JSON.stringify(data),
    body: e.body ?? null,
    response_body: e.responseBody ? e.responseBody.subarray(0, MAX_LOGGED_RESPONSE) : null,
  };
}

export function eventOf(r: EventRow): EventRecord & { seq: number } {
  return {
    seq: r.seq,
    time: r.time,
    accountId: r.account_id,
    messageId: r.message_id,
    state: r.state as EventState,
    url: r.url,
    topicName: r.topic_name ?? undefined,
    queueName: r.queue_name ?? undefined,
    scheduleId: r.schedule_id ?? undefined,
    labels: splitLabels(r.label),
    flowControlKey: r.flow_key ?? undefined,
    callerIp: r.caller_ip ?? undefined,
    body: r.body ?? undefined,
    responseBody: r.response_body ?? undefined,
    ...(readData(r.data) as EventData),
  };
}

/** A stored log entry, with its position in the log. */
export type StoredEvent = EventRecord & { seq: number };

/** The event log as every engine keeps it: `append` and `deleteAccount` inside a write (`tx`), the rest outside. */
export interface EventStorage {
  append(tx: WriteTx, e: EventRecord): Promise<void>;
  list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<StoredEvent[]>;
  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Iterable<StoredEvent>>;
  prune(accountId: string, beforeMs: number): Promise<number>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
}
