import type { SQL } from "bun";
import {
  scheduleUpsertParams,
  scheduleUpsertSql,
  type ScheduleMessageState as MessageState,
  type ScheduleRow,
  type ScheduleStorage,
} from "../../schedules/storage.ts";
import { postgresPlaceholder } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { CachedTable } from "./cached-table.ts";
import { sqlOf, type TickPart } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";
import { bytes, num, numOrNull, rowOf, type RowCodec, str, strOrNull } from "./values.ts";

type Raw = Record<string, unknown>;

const SCHEDULE_COLUMNS: RowCodec<ScheduleRow> = {
  account_id: str,
  id: str,
  revision: num,
  created_at: num,
  cron: str,
  destination_kind: (v) => (v === "group" ? "group" : "url"),
  destination: str,
  headers: str,
  query: str,
  body: bytes,
  caller_ip: strOrNull,
  settings: str,
  paused: num,
  last_schedule_time: numOrNull,
  next_schedule_time: numOrNull,
  last_states: str,
};

/** A schedule as PostgreSQL returns it, as the store hands it out (the cached table reads rows through it too). */
export const scheduleRowOfPg = (r: Raw): ScheduleRow & Raw => rowOf(r, SCHEDULE_COLUMNS);

const UPSERT = scheduleUpsertSql(postgresPlaceholder);

/**
 * Schedules on PostgreSQL. Every node keeps the definitions in memory (its scheduler arms a timer
 * for each; the writes read them there) and reloads them when another node changes one. A write
 * changes the table with statements in the tick's transaction and its in-memory copy alike (the
 * cached table's changes move with the writes and are applied to it once the tick commits).
 * Listings read PostgreSQL, so the states of the last trigger's messages are the same from every
 * node. A trigger fires once per slot across nodes: the trigger's write locks the schedule's row
 * while its next run time is still the slot; a node that fired the slot first moved it.
 */
export class PgScheduleStore implements ScheduleStorage, TickPart {
  constructor(
    private readonly sql: SQL,
    readonly table: CachedTable<ScheduleRow & Raw>,
  ) {}

  private key(accountId: string, id: string) {
    return `${accountId}\u0000${id}`;
  }

  async get(tx: WriteTx | null, accountId: string, id: string): Promise<ScheduleRow | undefined> {
    return this.table.get(tx, this.key(accountId, id));
  }
  async list(accountId: string): Promise<ScheduleRow[]> {
    return this.table.where(null, (r) => r.account_id === accountId).sort(byCreation);
  }
  async all(): Promise<ScheduleRow[]> {
    return this.table.all(null);
  }
  async count(tx: WriteTx, accountId: string): Promise<number> {
    return this.table.where(tx, (r) => r.account_id === accountId).length;
  }

  async readList(accountId: string): Promise<ScheduleRow[]> {
    const rows = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return rows.map(scheduleRowOfPg);
  }
  async read(accountId: string, id: string): Promise<ScheduleRow | undefined> {
    const [row] = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? scheduleRowOfPg(row) : undefined;
  }

  async upsert(tx: WriteTx, row: ScheduleRow): Promise<ScheduleRow> {
    return (await this.table.returning(tx, UPSERT, scheduleUpsertParams(row)))[0]!;
  }
  async delete(tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    const text = "DELETE FROM schedules WHERE account_id = $1 AND id = $2 RETURNING *";
    return (await this.table.deleting(tx, text, [accountId, id], (r) => r.account_id === accountId && r.id === id)) > 0;
  }
  async setPaused(tx: WriteTx, accountId: string, id: string, paused: boolean): Promise<boolean> {
    const text = "UPDATE schedules SET paused = $1 WHERE account_id = $2 AND id = $3 RETURNING *";
    const found = (await this.table.returning(tx, text, [paused ? 1 : 0, accountId, id])).length > 0;
    if (!found && this.table.get(tx, this.key(accountId, id))) this.table.recordDeleted(tx, this.key(accountId, id));
    return found;
  }
  async setNext(tx: WriteTx, accountId: string, id: string, revision: number, next: number | null): Promise<void> {
    const text = "UPDATE schedules SET next_schedule_time = $1 WHERE account_id = $2 AND id = $3 AND revision = $4 RETURNING *";
    await this.table.returning(tx, text, [next, accountId, id, revision]);
  }
  async recordTrigger(
    tx: WriteTx,
    accountId: string,
    id: string,
    revision: number,
    last: number,
    next: number | null,
    states: string,
  ): Promise<void> {
    await this.table.returning(
      tx,
      `UPDATE schedules SET last_schedule_time = $1, next_schedule_time = $2, last_states = $3
       WHERE account_id = $4 AND id = $5 AND revision = $6 RETURNING *`,
      [last, next, states, accountId, id, revision],
    );
  }
  /** Only a message of the last trigger is tracked; the states are read from PostgreSQL, not the cache. */
  async setMessageState(tx: WriteTx, accountId: string, scheduleId: string, messageId: string, state: MessageState) {
    sqlOf(tx).queue(
      `UPDATE schedules SET last_states = jsonb_set(last_states::jsonb, ARRAY[$1::text], to_jsonb($2::text))::text
       WHERE account_id = $3 AND id = $4 AND (last_states::jsonb) ? $1`,
      [messageId, state, accountId, scheduleId],
    );
  }
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    const text = "DELETE FROM schedules WHERE account_id = $1 RETURNING *";
    await this.table.deleting(tx, text, [accountId], (r) => r.account_id === accountId);
  }

  /** The tick changed a definition (trigger states alone are not cached). */
  changedIn(tick: TickTransaction): boolean {
    return this.table.changedIn(tick);
  }

  /**
   * Locks the schedule's row while the slot is still to fire: another node's trigger of the slot
   * waits for this tick, then finds the next run time moved.
   */
  async takeTrigger(tx: WriteTx, accountId: string, id: string, revision: number, plannedAt: number): Promise<boolean> {
    const rows = await sqlOf(tx).query(
      "SELECT id FROM schedules WHERE account_id = $1 AND id = $2 AND revision = $3 AND next_schedule_time = $4 FOR UPDATE",
      [accountId, id, revision, plannedAt],
    );
    return rows.length > 0;
  }

  mark(tick: TickTransaction): number {
    return this.table.mark(tick);
  }
  rollback(tick: TickTransaction, mark: number): void {
    this.table.rollback(tick, mark);
  }
  drop(tick: TickTransaction, write: number): void {
    this.table.drop(tick, write);
  }
  finish(tick: TickTransaction, committed: boolean): void {
    this.table.finish(tick, committed);
  }
}

const byCreation = (a: ScheduleRow, b: ScheduleRow) =>
  a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
