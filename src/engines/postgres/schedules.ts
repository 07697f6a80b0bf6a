import type { SQL } from "bun";
import {
  scheduleUpsertParams,
  scheduleUpsertSql,
  type ScheduleMessageState,
  type ScheduleRow,
  type ScheduleStorage,
} from "../../schedules/storage.ts";
import { postgresPlaceholder } from "../../store/patch.ts";
import { CachedTable } from "./cached-table.ts";
import type { TickPart, TickScope } from "./tick.ts";
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
    private readonly scope: TickScope,
    readonly table: CachedTable<ScheduleRow & Raw>,
  ) {}

  private key(accountId: string, id: string) {
    return `${accountId}\u0000${id}`;
  }

  get(accountId: string, id: string): ScheduleRow | undefined {
    return this.table.get(this.key(accountId, id));
  }
  list(accountId: string): ScheduleRow[] {
    return this.table.where((r) => r.account_id === accountId).sort(byCreation);
  }
  all(): ScheduleRow[] {
    return this.table.all();
  }
  count(accountId: string): number {
    return this.table.where((r) => r.account_id === accountId).length;
  }

  async readList(accountId: string): Promise<ScheduleRow[]> {
    const rows = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} ORDER BY created_at, id`;
    return rows.map(scheduleRowOfPg);
  }
  async read(accountId: string, id: string): Promise<ScheduleRow | undefined> {
    const [row] = await this.sql`SELECT * FROM schedules WHERE account_id = ${accountId} AND id = ${id}`;
    return row ? scheduleRowOfPg(row) : undefined;
  }

  upsert(row: ScheduleRow): ScheduleRow {
    return this.table.returning(UPSERT, scheduleUpsertParams(row))[0]!;
  }
  delete(accountId: string, id: string): boolean {
    const text = "DELETE FROM schedules WHERE account_id = $1 AND id = $2 RETURNING *";
    return this.table.deleting(text, [accountId, id], (r) => r.account_id === accountId && r.id === id) > 0;
  }
  setPaused(accountId: string, id: string, paused: boolean): boolean {
    const text = "UPDATE schedules SET paused = $1 WHERE account_id = $2 AND id = $3 RETURNING *";
    const found = this.table.returning(text, [paused ? 1 : 0, accountId, id]).length > 0;
    if (!found && this.get(accountId, id)) this.table.recordDeleted(this.key(accountId, id));
    return found;
  }
  setNext(accountId: string, id: string, revision: number, next: number | null): void {
    const text = "UPDATE schedules SET next_schedule_time = $1 WHERE account_id = $2 AND id = $3 AND revision = $4 RETURNING *";
    this.table.returning(text, [next, accountId, id, revision]);
  }
  recordTrigger(accountId: string, id: string, revision: number, last: number, next: number | null, states: string): void {
    this.table.returning(
      `UPDATE schedules SET last_schedule_time = $1, next_schedule_time = $2, last_states = $3
       WHERE account_id = $4 AND id = $5 AND revision = $6 RETURNING *`,
      [last, next, states, accountId, id, revision],
    );
  }
  /** Only a message of the last trigger is tracked; the states are read from PostgreSQL, not the cache. */
  setMessageState(accountId: string, scheduleId: string, messageId: string, state: ScheduleMessageState): void {
    this.scope.tx.queue(
      `UPDATE schedules SET last_states = jsonb_set(last_states::jsonb, ARRAY[$1::text], to_jsonb($2::text))::text
       WHERE account_id = $3 AND id = $4 AND (last_states::jsonb) ? $1`,
      [messageId, state, accountId, scheduleId],
    );
  }
  deleteAccount(accountId: string): void {
    const text = "DELETE FROM schedules WHERE account_id = $1 RETURNING *";
    this.table.deleting(text, [accountId], (r) => r.account_id === accountId);
  }

  /** The tick being committed changed a definition (trigger states alone are not cached). */
  get changedInTick(): boolean {
    return this.table.changedInTick;
  }

  /**
   * Locks the schedule's row while the slot is still to fire: another node's trigger of the slot
   * waits for this tick, then finds the next run time moved.
   */
  takeTrigger(accountId: string, id: string, revision: number, plannedAt: number): boolean {
    const rows = this.scope.tx.query(
      "SELECT id FROM schedules WHERE account_id = $1 AND id = $2 AND revision = $3 AND next_schedule_time = $4 FOR UPDATE",
      [accountId, id, revision, plannedAt],
    );
    return rows.length > 0;
  }

  mark(): number {
    return this.table.mark();
  }
  rollback(mark: number): void {
    this.table.rollback(mark);
  }
  finish(committed: boolean): void {
    this.table.finish(committed);
  }
}

const byCreation = (a: ScheduleRow, b: ScheduleRow) =>
  a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
