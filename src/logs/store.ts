import type { Database } from "bun:sqlite";
import type { EventFilter, EventRecord, EventState } from "./model.ts";

interface EventRow {
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
  data: string;
  body: Uint8Array | null;
  response_body: Uint8Array | null;
}

type EventData = Pick<EventRecord, "error" | "nextDeliveryTime" | "endpointName" | "method" | "maxRetries" | "header" | "responseStatus">;

/** Log responses are kept up to this size; the full answer stays in the DLQ entry. */
const MAX_LOGGED_RESPONSE = 64 * 1024;

export class EventStore {
  private readonly insertStmt;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(
      `INSERT INTO events (account_id, time, message_id, state, url, topic_name, queue_name, schedule_id, label, flow_key, data, body, response_body)
       VALUES ($account_id, $time, $message_id, $state, $url, $topic_name, $queue_name, $schedule_id, $label, $flow_key, $data, $body, $response_body)`,
    );
  }

  append(e: EventRecord): void {
    const data: EventData = {
      error: e.error,
      nextDeliveryTime: e.nextDeliveryTime,
      endpointName: e.endpointName,
      method: e.method,
      maxRetries: e.maxRetries,
      header: e.header,
      responseStatus: e.responseStatus,
    };
    this.insertStmt.run({
      account_id: e.accountId,
      time: e.time,
      message_id: e.messageId,
      state: e.state,
      url: e.url,
      topic_name: e.topicName ?? null,
      queue_name: e.queueName ?? null,
      schedule_id: e.scheduleId ?? null,
      label: e.label ?? null,
      flow_key: e.flowControlKey ?? null,
      data: JSON.stringify(data),
      body: e.body ?? null,
      response_body: e.responseBody ? e.responseBody.subarray(0, MAX_LOGGED_RESPONSE) : null,
    } as never);
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  list(accountId: string, filter: EventFilter, beforeSeq: number | null, limit: number): Array<EventRecord & { seq: number }> {
    const where = ["account_id = $account"];
    const params: Record<string, string | number> = { account: accountId, limit };
    const eq = (column: string, key: keyof EventFilter) => {
      const value = filter[key];
      if (value === undefined) return;
      where.push(`${column} = $${key}`);
      params[key] = value as string;
    };
    eq("message_id", "messageId");
    eq("url", "url");
    eq("topic_name", "topicName");
    eq("schedule_id", "scheduleId");
    eq("queue_name", "queueName");
    eq("label", "label");
    eq("flow_key", "flowControlKey");
    if (filter.fromDate !== undefined) {
      where.push("time >= $fromDate");
      params.fromDate = filter.fromDate;
    }
    if (filter.toDate !== undefined) {
      where.push("time <= $toDate");
      params.toDate = filter.toDate;
    }
    if (filter.states?.length) {
      where.push(`state IN (${filter.states.map((_, i) => `$s${i}`).join(", ")})`);
      filter.states.forEach((s, i) => (params[`s${i}`] = s));
    }
    if (beforeSeq !== null) {
      where.push("seq < $before");
      params.before = beforeSeq;
    }
    const sql = `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT $limit`;
    return this.db
      .query<EventRow, Record<string, string | number>>(sql)
      .all(params)
      .map((r) => ({
        seq: r.seq,
        time: r.time,
        accountId: r.account_id,
        messageId: r.message_id,
        state: r.state as EventState,
        url: r.url,
        topicName: r.topic_name ?? undefined,
        queueName: r.queue_name ?? undefined,
        scheduleId: r.schedule_id ?? undefined,
        label: r.label ?? undefined,
        flowControlKey: r.flow_key ?? undefined,
        body: r.body ?? undefined,
        responseBody: r.response_body ?? undefined,
        ...(JSON.parse(r.data) as EventData),
      }));
  }

  /** Drops entries older than `beforeMs` for one account, a bounded batch at a time. */
  prune(accountId: string, beforeMs: number, batch = 5000): number {
    return this.db
      .query("DELETE FROM events WHERE seq IN (SELECT seq FROM events WHERE account_id = ? AND time < ? LIMIT ?)")
      .run(accountId, beforeMs, batch).changes;
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM events WHERE account_id = ?").run(accountId);
  }
}
