import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { EventRecord } from "../../logs/model.ts";
import { EVENT_FILTER_COLUMNS, eventOf, eventRowOf, type EventRow, type EventStorage } from "../../logs/store.ts";
import { Where } from "../../store/where.ts";
import type { TickPart, Tx } from "./tick.ts";
import { bytesOrNull, num, rowOf, type RowCodec, runShared, str, strOrNull } from "./values.ts";

type Entry = ReturnType<typeof eventRowOf>;

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

/** The event log on PostgreSQL: a tick's entries go in as one multi-row INSERT. */
export class PgEventStore implements EventStorage, TickPart {
  private entries: Array<Entry | { deleteAccount: string }> = [];
  private taken: typeof this.entries = [];

  constructor(private readonly sql: SQL) {}

  append(e: EventRecord): void {
    this.entries.push(eventRowOf(e));
  }

  deleteAccount(accountId: string): void {
    this.entries.push({ deleteAccount: accountId });
  }

  async list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Array<EventRecord & { seq: number }>> {
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
  async apply(tx: Tx): Promise<void> {
    this.taken = this.entries;
    this.entries = [];
    let run: Entry[] = [];
    const flush = async () => {
      if (run.length > 0) await tx`INSERT INTO events ${tx(run)}`;
      run = [];
    };
    for (const e of this.taken) {
      if ("deleteAccount" in e) {
        await flush();
        await tx`DELETE FROM events WHERE account_id = ${e.deleteAccount}`;
      } else run.push(e);
    }
    await flush();
  }
  finish(): void {
    this.taken = [];
  }
}
