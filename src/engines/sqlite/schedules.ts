import type { Database } from "bun:sqlite";
import {
  scheduleUpsertParams,
  scheduleUpsertSql,
  type ScheduleMessageState as MessageState,
  type ScheduleRow,
  type ScheduleStorage,
} from "../../schedules/storage.ts";
import { sqlitePlaceholder, type SqlValue } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";

/** Schedules on SQLite. */
export class SqliteScheduleStore implements ScheduleStorage {
  private readonly getStmt;
  private readonly listStmt;
  private readonly allStmt;
  private readonly countStmt;
  private readonly upsertStmt;
  private readonly deleteStmt;
  private readonly setPausedStmt;
  private readonly setNextStmt;
  private readonly recordTriggerStmt;
  private readonly setStateStmt;
  private readonly deleteAccountStmt;

  constructor(db: Database) {
    this.getStmt = db.prepare<ScheduleRow, [string, string]>("SELECT * FROM schedules WHERE account_id = ? AND id = ?");
    this.listStmt = db.prepare<ScheduleRow, [string]>("SELECT * FROM schedules WHERE account_id = ? ORDER BY created_at, id");
    this.allStmt = db.prepare<ScheduleRow, []>("SELECT * FROM schedules");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM schedules WHERE account_id = ?");
    this.upsertStmt = db.prepare<ScheduleRow, SqlValue[]>(scheduleUpsertSql(sqlitePlaceholder));
    this.deleteStmt = db.prepare("DELETE FROM schedules WHERE account_id = ? AND id = ?");
    this.setPausedStmt = db.prepare("UPDATE schedules SET paused = ? WHERE account_id = ? AND id = ?");
    this.setNextStmt = db.prepare(
      "UPDATE schedules SET next_schedule_time = ? WHERE account_id = ? AND id = ? AND revision = ?",
    );
    this.recordTriggerStmt = db.prepare(
      `UPDATE schedules SET last_schedule_time = ?, next_schedule_time = ?, last_states = ?
       WHERE account_id = ? AND id = ? AND revision = ?`,
    );
    // Only a message of the last trigger is tracked: json_extract is NULL for any other id.
    this.setStateStmt = db.prepare(
      `UPDATE schedules SET last_states = json_set(last_states, $path, $state)
       WHERE account_id = $account AND id = $id AND json_extract(last_states, $path) IS NOT NULL`,
    );
    this.deleteAccountStmt = db.prepare("DELETE FROM schedules WHERE account_id = ?");
  }

  async get(_tx: WriteTx | null, accountId: string, id: string): Promise<ScheduleRow | undefined> {
    return this.getStmt.get(accountId, id) ?? undefined;
  }
  async read(accountId: string, id: string): Promise<ScheduleRow | undefined> {
    return this.getStmt.get(accountId, id) ?? undefined;
  }
  async readList(accountId: string): Promise<ScheduleRow[]> {
    return this.listStmt.all(accountId);
  }
  /** One process fires every trigger: the revision check of the write is all it takes. */
  async takeTrigger(): Promise<boolean> {
    return true;
  }
  async list(accountId: string): Promise<ScheduleRow[]> {
    return this.listStmt.all(accountId);
  }
  async all(): Promise<ScheduleRow[]> {
    return this.allStmt.all();
  }
  async count(_tx: WriteTx, accountId: string): Promise<number> {
    return this.countStmt.get(accountId)?.n ?? 0;
  }
  async upsert(_tx: WriteTx, row: ScheduleRow): Promise<ScheduleRow> {
    return this.upsertStmt.get(...scheduleUpsertParams(row))!;
  }
  async delete(_tx: WriteTx, accountId: string, id: string): Promise<boolean> {
    return this.deleteStmt.run(accountId, id).changes > 0;
  }
  async setPaused(_tx: WriteTx, accountId: string, id: string, paused: boolean): Promise<boolean> {
    return this.setPausedStmt.run(paused ? 1 : 0, accountId, id).changes > 0;
  }
  async setNext(_tx: WriteTx, accountId: string, id: string, revision: number, next: number | null): Promise<void> {
    this.setNextStmt.run(next, accountId, id, revision);
  }
  async recordTrigger(
    _tx: WriteTx,
    accountId: string,
    id: string,
    revision: number,
    last: number,
    next: number | null,
    states: string,
  ): Promise<void> {
    this.recordTriggerStmt.run(last, next, states, accountId, id, revision);
  }
  async setMessageState(_tx: WriteTx, accountId: string, scheduleId: string, messageId: string, state: MessageState) {
    this.setStateStmt.run({ path: `$."${messageId}"`, state, account: accountId, id: scheduleId });
  }
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.deleteAccountStmt.run(accountId);
  }
}
