import { jsonColumn } from "../store/json-column.ts";
import { HeaderPairs, MessageExtraJson } from "./columns.ts";
import { joinLabels, splitLabels } from "./labels.ts";
import type { MessageRecord, MessageState } from "./message.ts";

/**
 * A message as a row of the `messages` table (the DLQ keeps the same form as its snapshot): the
 * columns the engine filters on, plus the rest as JSON in `extra`.
 */
export type MessageRow = {
  id: string;
  account_id: string;
  kind: string;
  state: string;
  dispatch_at: number | null;
  not_before: number;
  created_at: number;
  retried: number;
  max_retries: number;
  url: string;
  method: string;
  headers: string;
  body: Uint8Array;
  topic_name: string | null;
  queue_name: string | null;
  schedule_id: string | null;
  caller_ip: string | null;
  label: string | null;
  flow_key: string | null;
  extra: string;
};

type Extra = Pick<
  MessageRecord,
  "timeoutMs" | "retryDelayExpr" | "endpointName" | "flow" | "callback" | "failureCallback" | "callbackOnce" | "workflow" | "redact"
  | "trace"
>;

export function toRow(m: MessageRecord): MessageRow {
  const extra: Extra = {
    timeoutMs: m.timeoutMs,
    retryDelayExpr: m.retryDelayExpr,
    endpointName: m.endpointName,
    flow: m.flow,
    callback: m.callback,
    failureCallback: m.failureCallback,
    callbackOnce: m.callbackOnce,
    workflow: m.workflow,
    redact: m.redact,
    trace: m.trace,
  };
  return {
    id: m.id,
    account_id: m.accountId,
    kind: m.kind,
    state: m.state,
    dispatch_at: m.dispatchAt,
    not_before: m.notBefore,
    created_at: m.createdAt,
    retried: m.retried,
    max_retries: m.maxRetries,
    url: m.url,
    method: m.method,
    headers: JSON.stringify(m.headers),
    body: m.body,
    topic_name: m.topicName ?? null,
    queue_name: m.queueName ?? null,
    schedule_id: m.scheduleId ?? null,
    caller_ip: m.callerIp ?? null,
    label: joinLabels(m.labels),
    flow_key: m.flow?.key ?? null,
    extra: JSON.stringify(extra),
  };
}

const readExtra = jsonColumn("messages.extra", MessageExtraJson);
const readHeaders = jsonColumn("messages.headers", HeaderPairs);

export function fromRow(r: MessageRow): MessageRecord {
  const extra: Extra = readExtra(r.extra);
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind as MessageRecord["kind"],
    state: r.state as MessageState,
    dispatchAt: r.dispatch_at,
    notBefore: r.not_before,
    createdAt: r.created_at,
    retried: r.retried,
    maxRetries: r.max_retries,
    url: r.url,
    method: r.method,
    headers: readHeaders(r.headers),
    body: r.body,
    topicName: r.topic_name ?? undefined,
    queueName: r.queue_name ?? undefined,
    scheduleId: r.schedule_id ?? undefined,
    callerIp: r.caller_ip ?? undefined,
    labels: splitLabels(r.label),
    ...extra,
  };
}
