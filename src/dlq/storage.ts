import { joinLabels } from "../model/labels.ts";
import { HeaderPairs, MessageSnapshotJson } from "../model/columns.ts";
import { fromRow, toRow, type MessageRow } from "../model/message-row.ts";
import { jsonColumn } from "../store/json-column.ts";
import type { FailureCallbackState, MessageRecord } from "../model/message.ts";
import type { Filter } from "../filters/filter.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { DlqEntry } from "./model.ts";

export interface DlqRow {
  seq: number;
  dlq_id: string;
  failed_at: number;
  message: string;
  body: Uint8Array;
  response_status: number | null;
  response_headers: string | null;
  response_body: Uint8Array | null;
  error: string | null;
  workflow_created_at: number | null;
  failure_function_state: string | null;
}

const readSnapshot = jsonColumn("dlq.message", MessageSnapshotJson);
const readResponseHeaders = jsonColumn("dlq.response_headers", HeaderPairs);

export function toEntry(r: DlqRow): DlqEntry {
  // The snapshot is a message row without its body: fromRow checks its JSON columns in turn.
  const stored = readSnapshot(r.message) as Omit<MessageRow, "body">;
  return {
    seq: r.seq,
    dlqId: r.dlq_id,
    failedAt: r.failed_at,
    message: fromRow({ ...stored, body: r.body }),
    responseStatus: r.response_status ?? undefined,
    responseHeaders: r.response_headers ? readResponseHeaders(r.response_headers) : undefined,
    responseBody: r.response_body ?? undefined,
    error: r.error ?? undefined,
    workflowCreatedAt: r.workflow_created_at ?? undefined,
    failureFunctionState: (r.failure_function_state as FailureCallbackState | null) ?? undefined,
  };
}

/** The workflow run a failed message fails: a run's step (or a call's answer on its way back to the run). */
function failedRun(m: MessageRecord): string | undefined {
  const tag = m.workflow;
  return tag && (tag.callType === "step" || tag.callType === "fromCallback") ? tag.runId : undefined;
}

/** The columns of a new DLQ entry (every engine stores the same). */
export function dlqRowOf(entry: Omit<DlqEntry, "seq">) {
  const m: MessageRecord = entry.message;
  const { body, ...rest } = toRow(m);
  return {
    dlq_id: entry.dlqId,
    account_id: m.accountId,
    message_id: m.id,
    failed_at: entry.failedAt,
    url: m.url,
    topic_name: m.topicName ?? null,
    queue_name: m.queueName ?? null,
    schedule_id: m.scheduleId ?? null,
    label: joinLabels(m.labels),
    flow_key: m.flow?.key ?? null,
    caller_ip: m.callerIp ?? null,
    response_status: entry.responseStatus ?? null,
    message: JSON.stringify(rest),
    body,
    response_headers: entry.responseHeaders ? JSON.stringify(entry.responseHeaders) : null,
    response_body: entry.responseBody ?? null,
    error: entry.error ?? null,
    workflow_run_id: failedRun(m) ?? null,
    workflow_created_at: entry.workflowCreatedAt ?? null,
    failure_function_state: entry.failureFunctionState ?? null,
  };
}

/** The filter columns of the DLQ table. */
export const DLQ_FILTER_COLUMNS = {
  messageId: "message_id",
  time: "failed_at",
  dlqId: "dlq_id",
  workflowRunId: "workflow_run_id",
  workflowCreatedAt: "workflow_created_at",
  failureFunctionState: "failure_function_state",
  responseStatus: "COALESCE(response_status, 0)",
};

/**
 * The DLQ as every engine keeps it: `get`, `oldest`, `exists` and the writes inside a write (`tx`);
 * `read`, `newest`, `readOldest`, `count` and `prune` outside.
 */
export interface DlqStorage {
  insert(tx: WriteTx, entry: Omit<DlqEntry, "seq">): Promise<void>;
  get(tx: WriteTx, accountId: string, dlqId: string): Promise<DlqEntry | undefined>;
  read(accountId: string, dlqId: string): Promise<DlqEntry | undefined>;
  delete(tx: WriteTx, accountId: string, dlqId: string): Promise<boolean>;
  /** A failed workflow run's failure function moved on (its entry shows and filters by it). */
  setFailureFunctionState(tx: WriteTx, accountId: string, dlqId: string, state: FailureCallbackState): Promise<void>;
  /** Whether an id is taken already (an engine whose ids cannot collide answers false). */
  exists(tx: WriteTx, dlqId: string): Promise<boolean>;
  count(accountId: string): Promise<number>;
  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Iterable<DlqEntry>>;
  oldest(tx: WriteTx, accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]>;
  /** As `oldest`, outside a write. */
  readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): Promise<DlqEntry[]>;
  prune(accountId: string, beforeMs: number): Promise<number>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
}
