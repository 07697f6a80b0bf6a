import type { Database } from "bun:sqlite";
import { joinLabels } from "../model/labels.ts";
import { HeaderPairs, MessageSnapshotJson } from "../model/columns.ts";
import { fromRow, toRow, type MessageRow } from "../model/message-row.ts";
import { jsonColumn } from "../store/json-column.ts";
import type { FailureCallbackState, MessageRecord } from "../model/message.ts";
import type { Filter } from "../filters/filter.ts";
import { applyFilter } from "../filters/sql.ts";
import { Where } from "../store/where.ts";
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

/** The DLQ as every engine keeps it: `get`, `oldest` and the writes inside a write; `read`, `newest`, `count` outside. */
export interface DlqStorage {
  insert(entry: Omit<DlqEntry, "seq">): void;
  get(accountId: string, dlqId: string): DlqEntry | undefined;
  read(accountId: string, dlqId: string): DlqEntry | undefined | Promise<DlqEntry | undefined>;
  delete(accountId: string, dlqId: string): boolean;
  /** A failed workflow run's failure function moved on (its entry shows and filters by it). */
  setFailureFunctionState(accountId: string, dlqId: string, state: FailureCallbackState): void;
  /** Whether an id is taken already (an engine whose ids cannot collide answers false). */
  exists(dlqId: string): boolean;
  count(accountId: string): number | Promise<number>;
  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Iterable<DlqEntry> | Promise<Iterable<DlqEntry>>;
  oldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[];
  /** As `oldest`, outside a write. */
  readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[] | Promise<DlqEntry[]>;
  prune(accountId: string, beforeMs: number): number | Promise<number>;
  deleteAccount(accountId: string): void;
}

export class DlqStore implements DlqStorage {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly deleteStmt;
  private readonly countStmt;
  private readonly existsStmt;
  private readonly failureStateStmt;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(
      `INSERT INTO dlq (dlq_id, account_id, message_id, failed_at, url, topic_name, queue_name, schedule_id, label, flow_key, caller_ip, response_status, message, body, response_headers, response_body, error, workflow_run_id, workflow_created_at, failure_function_state)
       VALUES ($dlq_id, $account_id, $message_id, $failed_at, $url, $topic_name, $queue_name, $schedule_id, $label, $flow_key, $caller_ip, $response_status, $message, $body, $response_headers, $response_body, $error, $workflow_run_id, $workflow_created_at, $failure_function_state)`,
    );
    this.failureStateStmt = db.prepare("UPDATE dlq SET failure_function_state = ? WHERE dlq_id = ? AND account_id = ?");
    this.getStmt = db.prepare<DlqRow, [string, string]>("SELECT * FROM dlq WHERE dlq_id = ? AND account_id = ?");
    this.deleteStmt = db.prepare("DELETE FROM dlq WHERE dlq_id = ? AND account_id = ?");
    this.existsStmt = db.prepare<{ one: number }, [string]>("SELECT 1 AS one FROM dlq WHERE dlq_id = ?");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM dlq WHERE account_id = ?");
  }

  insert(entry: Omit<DlqEntry, "seq">): void {
    this.insertStmt.run(dlqRowOf(entry));
  }

  get(accountId: string, dlqId: string): DlqEntry | undefined {
    const row = this.getStmt.get(dlqId, accountId);
    return row ? toEntry(row) : undefined;
  }

  read(accountId: string, dlqId: string): DlqEntry | undefined {
    return this.get(accountId, dlqId);
  }

  delete(accountId: string, dlqId: string): boolean {
    return this.deleteStmt.run(dlqId, accountId).changes > 0;
  }

  setFailureFunctionState(accountId: string, dlqId: string, state: FailureCallbackState): void {
    this.failureStateStmt.run(state, dlqId, accountId);
  }

  exists(dlqId: string): boolean {
    return this.existsStmt.get(dlqId) !== null;
  }

  count(accountId: string): number {
    return this.countStmt.get(accountId)?.n ?? 0;
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. Rows are read as they are taken. */
  *newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Generator<DlqEntry> {
    const { sql, params } = this.where(accountId, f).add("seq", "<", beforeSeq ?? undefined).select("dlq", "seq DESC", limit);
    for (const row of this.db.query<DlqRow, Record<string, string | number>>(sql).iterate(params)) yield toEntry(row);
  }

  /** Oldest first, after `afterSeq`: the order bulk operations act in. */
  oldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[] {
    return this.select(this.where(accountId, f).add("seq", ">", afterSeq ?? undefined), "seq", limit);
  }

  readOldest(accountId: string, f: Filter, afterSeq: number | null, limit: number): DlqEntry[] {
    return this.oldest(accountId, f, afterSeq, limit);
  }

  private where(accountId: string, f: Filter): Where {
    return applyFilter(new Where("account_id", accountId), f, DLQ_FILTER_COLUMNS);
  }

  private select(where: Where, order: string, limit: number): DlqEntry[] {
    const { sql, params } = where.select("dlq", order, limit);
    return this.db.query<DlqRow, Record<string, string | number>>(sql).all(params).map(toEntry);
  }

  /** Drops entries that failed before `beforeMs` (plan retention), for one account. */
  prune(accountId: string, beforeMs: number): number {
    return this.db.query("DELETE FROM dlq WHERE account_id = ? AND failed_at < ?").run(accountId, beforeMs).changes;
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM dlq WHERE account_id = ?").run(accountId);
  }
}
