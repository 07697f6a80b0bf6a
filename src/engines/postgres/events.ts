import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { EventRecord } from "../../logs/model.ts";
import { EVENT_FILTER_COLUMNS, eventOf, eventRowOf, type EventRow, type EventStorage } from "../../logs/storage.ts";
import { Where } from "../../store/where.ts";
import type { TickPart, TickSql } from "./tick.ts";
import { bytesOrNull, num, rowOf, type RowCodec, runShared, str, strOrNull } from "./values.ts";

type Entry = ReturnType<typeof eventRowOf>;
type Seq = { seq: number };

const EVENT_COLUMNS: RowCodec<EventRow> = {
  seq: num,
  account_id: str,
  time: num,
  message_id: str,
  state: str,
  url: str,
  topic_name: strOrNull,
  queue_name: strOrNull,
  schedule_id: strOrNull,
  label: strOrNull,
  flow_key: strOrNull,
  caller_ip: strOrNull,
  data: str,
  body: bytesOrNull,
  response_body: bytesOrNull,
};

export const eventRowOfPg = (r: Record<string, unknown>): EventRow => rowOf(r, EVENT_COLUMNS);

/**
 * The event log on PostgreSQL. One row per message transition makes it the hottest insert: the
 * rows of a tick's writes wait here (dropped with a write that fails) and go in with the commit
 * as one multi-row INSERT. Nothing reads the log inside a write, so no write misses them.
 */
export class PgEventStore implements EventStorage, TickPart {
  private entries: Array<Entry | { deleteAccount: string }> = [];

  constructor(private readonly sql: SQL) {}

  append(e: EventRecord): void {
    this.entries.push(eventRowOf(e));
  }

  /** In order with the appends: an entry appended after the reset stays. */
  deleteAccount(accountId: string): void {
    this.entries.push({ deleteAccount: accountId });
  }

  async list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Array<EventRecord & Seq>> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, EVENT_FILTER_COLUMNS)
      .add("seq", "<", beforeSeq ?? undefined)
      .select("events", "seq DESC", limit);
    return (await runShared<Record<string, unknown>>(this.sql, sql, params)).map((r) => eventOf(eventRowOfPg(r)));
  }

  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number) {
    return this.list(accountId, f, beforeSeq, limit);
  }

  /** Oldest first, a bounded batch at a time (the leader runs retention). */
  async prune(accountId: string, beforeMs: number, batch = 5000): Promise<number> {
    const rows = await this.sql`
      DELETE FROM events WHERE seq IN (
        SELECT seq FROM events WHERE account_id = ${accountId} AND time < ${beforeMs} ORDER BY seq LIMIT ${batch})
      RETURNING seq`;
    return rows.length;
  }

  mark(): number {
    return this.entries.length;
  }
  rollback(mark: number): void {
    this.entries.length = mark;
  }
  apply(tx: TickSql): void {
    const taken = this.entries;
    this.entries = [];
    for (const e of taken) {
      if ("deleteAccount" in e) tx.queue("DELETE FROM events WHERE account_id = $1", [e.deleteAccount]);
      else tx.insert("events", e);
    }
  }
  /** A tick that failed before its entries were taken leaves none for the next. */
  finish(): void {
    this.entries = [];
  }
}
