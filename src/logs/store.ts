import type { Database } from "bun:sqlite";
import { Type } from "@sinclair/typebox";
import { HeaderPairs } from "../model/columns.ts";
import { jsonColumn } from "../store/json-column.ts";
import { applyFilter } from "../filters/sql.ts";
import type { Filter } from "../filters/filter.ts";
import type { SharedBodies } from "../store/bodies.ts";
import { Where } from "../store/where.ts";
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
  /** SQLite engine: the body stored once with the message (store/bodies.ts), instead of `body`. */
  shared_body?: number | null;
}

type EventData = Pick<
  EventRecord,
  | "error" | "nextDeliveryTime" | "endpointName" | "method" | "maxRetries" | "header" | "responseStatus" | "retryDelayExpr"
  | "responseHeaders" | "callback" | "callbackHeaders" | "failureCallback" | "failureCallbackHeaders" | "timeoutMs"
  | "fault"
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

/** The event log as every engine keeps it: `append` and `deleteAccount` inside a write, the rest outside. */
export interface EventStorage {
  append(e: EventRecord): void;
  list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Array<EventRecord & { seq: number }> | Promise<Array<EventRecord & { seq: number }>>;
  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Iterable<EventRecord & { seq: number }> | Promise<Iterable<EventRecord & { seq: number }>>;
  prune(accountId: string, beforeMs: number): number | Promise<number>;
  deleteAccount(accountId: string): void;
}

export class EventStore implements EventStorage {
  private readonly insertStmt;

  constructor(
    private readonly db: Database,
    /** A CREATED entry refers to its message's body stored once instead of copying it. */
    private readonly bodies: SharedBodies,
  ) {
    this.insertStmt = db.prepare(
      `INSERT INTO events (account_id, time, message_id, state, url, topic_name, queue_name, schedule_id, label, flow_key, caller_ip, data, body, response_body, shared_body)
       VALUES ($account_id, $time, $message_id, $state, $url, $topic_name, $queue_name, $schedule_id, $label, $flow_key, $caller_ip, $data, $body, $response_body, $shared_body)`,
    );
  }

  append(e: EventRecord): void {
    const shared = e.state === "CREATED" && e.body ? this.bodies.sharedBy(e.messageId, e.body) : null;
    const row = Object.assign(eventRowOf(e), { shared_body: shared });
    if (shared !== null) row.body = null;
    this.insertStmt.run(row);
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Array<EventRecord & { seq: number }> {
    return [...this.newest(accountId, f, beforeSeq, limit)];
  }

  /** As `list`, but rows are read as they are taken (a page stops at its byte budget). */
  *newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Generator<EventRecord & { seq: number }> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, EVENT_FILTER_COLUMNS)
      .add("seq", "<", beforeSeq ?? undefined)
      .select("events", "seq DESC", limit);
    for (const r of this.db.query<EventRow, Record<string, string | number>>(sql).iterate(params)) {
      if (r.shared_body != null) r.body = this.bodies.read(r.shared_body);
      yield eventOf(r);
    }
  }

  /**
   * Drops entries older than `beforeMs` for one account, a bounded batch at a time, oldest first.
   * Entries are appended in time order, so when the oldest one is recent enough there is nothing
   * to do: the check reads one index entry instead of walking a large log for nothing.
   */
  prune(accountId: string, beforeMs: number, batch = 5000): number {
    const oldest = this.db
      .query<{ time: number }, [string]>("SELECT time FROM events WHERE account_id = ? ORDER BY seq LIMIT 1")
      .get(accountId);
    if (!oldest || oldest.time >= beforeMs) return 0;
    const last = this.db
      .query<{ seq: number }, [string, number, number]>(
        "SELECT MAX(seq) AS seq FROM (SELECT seq FROM events WHERE account_id = ? AND time < ? ORDER BY seq LIMIT ?)",
      )
      .get(accountId, beforeMs, batch)?.seq;
    if (last == null) return 0;
    const batchOf = "account_id = $account AND time < $before AND seq <= $last";
    return this.db.transaction(() => {
      this.releaseBodies(batchOf, { account: accountId, before: beforeMs, last });
      return this.db.query(`DELETE FROM events WHERE ${batchOf}`).run({ account: accountId, before: beforeMs, last }).changes;
    })();
  }

  deleteAccount(accountId: string): void {
    this.releaseBodies("account_id = $account", { account: accountId });
    this.db.query("DELETE FROM events WHERE account_id = ?").run(accountId);
  }

  /**
   * Before the entries matching `where` go: the bodies they hold (store/bodies.ts) are dropped when
   * their message is gone too; a message still waiting becomes its body's last holder.
   */
  private releaseBodies(where: string, params: Record<string, string | number>): void {
    this.db
      .query(`UPDATE messages SET body_alone = 1 WHERE id IN (SELECT message_id FROM events WHERE ${where} AND shared_body IS NOT NULL)`)
      .run(params);
    this.db
      .query(
        `DELETE FROM message_bodies WHERE body_id IN (
           SELECT e.shared_body FROM events e WHERE ${where} AND e.shared_body IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id))`,
      )
      .run(params);
  }
}
