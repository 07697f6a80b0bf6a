import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { EventRecord } from "../../logs/model.ts";
import { EVENT_FILTER_COLUMNS, eventOf, eventRowOf, type EventRow, type EventStorage } from "../../logs/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { Where } from "../../store/where.ts";
import type { TickPart, TxSql } from "./tick.ts";
import { TickLists } from "./tick-lists.ts";
import type { TickTransaction } from "./tick-tx.ts";
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
  private readonly entries = new TickLists<Entry | { deleteAccount: string }>();

  constructor(private readonly sql: SQL) {}

  async append(tx: WriteTx, e: EventRecord): Promise<void> {
    this.entries.add(tx, eventRowOf(e));
  }

  /** In order with the appends: an entry appended after the reset stays. */
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    this.entries.add(tx, { deleteAccount: accountId });
  }

  async list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Array<EventRecord & Seq>> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, EVENT_FILTER_COLUMNS)
      .add("seq", "<", beforeSeq ?? undefined)
      .select("events", "seq DESC", limit);
    return (await runShared<Record<string, unknown>>(this.sql, sql, params)).map((r) => eventOf(eventRowOfPg(r)));
  }

  newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Array<EventRecord & Seq>> {
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

  mark(tick: TickTransaction): number {
    return this.entries.mark(tick);
  }
  rollback(tick: TickTransaction, mark: number): void {
    this.entries.rollback(tick, mark);
  }
  drop(tick: TickTransaction, write: number): void {
    this.entries.drop(tick, write);
  }
  /** A write that read something settles alone: its rows go with it. */
  endWrite(tick: TickTransaction, write: number, sql: TxSql): void {
    for (const entry of this.entries.takeOf(tick, write)) {
      if ("deleteAccount" in entry) sql.queue("DELETE FROM events WHERE account_id = $1", [entry.deleteAccount]);
      else sql.insert("events", entry);
    }
  }
  /**
   * Before a batch goes out: the rows of the writes that ended go with their statements (the
   * write under way keeps its own, which go when it ends).
   */
  flushEnded(tick: TickTransaction, sql: TxSql): void {
    this.send(this.entries.takeOthers(tick, tick.currentWrite), sql);
  }
  /** The rows go on behalf of the writes that appended them: a write PostgreSQL refuses takes its rows along. */
  apply(tick: TickTransaction, sql: TxSql): void {
    this.send(this.entries.takeWithWrites(tick), sql);
  }
  private send(entries: Array<{ write: number; entry: Entry | { deleteAccount: string } }>, sql: TxSql): void {
    for (const { write, entry } of entries) {
      if ("deleteAccount" in entry) sql.of(write).queue("DELETE FROM events WHERE account_id = $1", [entry.deleteAccount]);
      else sql.of(write).insert("events", entry);
    }
  }
  /** A tick that failed before its entries were taken leaves none behind. */
  finish(tick: TickTransaction): void {
    this.entries.forget(tick);
  }
}
