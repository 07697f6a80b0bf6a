import type { MessageCensus } from "../../messages/storage.ts";
import { toRow, type MessageRow } from "../../model/message-row.ts";
import type { MessageRecord } from "../../model/message.ts";
import { PARTITIONS } from "./schema.ts";
import type { TxSql } from "./tick.ts";
import type { PgRow } from "./pipeline.ts";
import { bytes, num, numOrNull, partitionOf, positional } from "./values.ts";

/** A message row as PostgreSQL returns it (BIGINT as text, BYTEA as a Buffer) → the shared row form. */
export function messageRowOf(r: PgRow): MessageRow {
  return {
    id: r.id as string,
    account_id: r.account_id as string,
    kind: r.kind as string,
    state: r.state as string,
    dispatch_at: numOrNull(r.dispatch_at),
    not_before: num(r.not_before),
    created_at: num(r.created_at),
    retried: num(r.retried),
    max_retries: num(r.max_retries),
    url: r.url as string,
    method: r.method as string,
    headers: r.headers as string,
    body: bytes(r.body),
    topic_name: (r.topic_name as string | null) ?? null,
    queue_name: (r.queue_name as string | null) ?? null,
    schedule_id: (r.schedule_id as string | null) ?? null,
    caller_ip: (r.caller_ip as string | null) ?? null,
    label: (r.label as string | null) ?? null,
    flow_key: (r.flow_key as string | null) ?? null,
    extra: r.extra as string,
  };
}

/** The flow-control partition of a message (null: no flow key, any node delivers it). */
export function partOf(m: MessageRecord): number | null {
  return m.flow ? partitionOf(m.accountId, m.flow.key, PARTITIONS) : null;
}

/**
 * A new message's row: the shared columns, then the engine's own (its partition, and no claim).
 * Always the same keys in the same order, so the tick's inserts of messages go as one statement.
 */
export function insertRowOf(m: MessageRecord): PgRow {
  return { ...toRow(m), part: partOf(m), claimed_by: null, attempt: 0 };
}

export function censusOf(r: PgRow): MessageCensus {
  const [due, delayed, active, total] = [num(r.due), num(r.delayed), num(r.active), num(r.total)];
  return { due, delayed, inFlight: active, waiting: total - due - delayed - active };
}

/** Runs SQL of the shared query builder in the write's transaction (see `positional`). */
export function queryShared(sql: TxSql, text: string, named: Record<string, string | number>): Promise<PgRow[]> {
  const q = positional(text, named);
  return sql.query(q.text, q.params);
}
