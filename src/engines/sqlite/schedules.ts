import type { Database } from "bun:sqlite";
import {
  scheduleUpsertParams,
  scheduleUpsertSql,
  type ScheduleMessageState,
  type ScheduleRow,
  type ScheduleStorage,
} from "../../schedules/storage.ts";
import { sqlitePlaceholder, type SqlValue } from "../../store/patch.ts";

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

  get(accountId: string, id: string): ScheduleRow | undefined {
    return this.getStmt.get(accountId, id) ?? undefined;
  }
  read(accountId: string, id: string): ScheduleRow | undefined {
    return this.get(accountId, id);
  }
  readList(accountId: string): ScheduleRow[] {
    return this.list(accountId);
  }
  /** One process fires every trigger: the revision check of the write is all it takes. */
  takeTrigger(): boolean {
    return true;
  }
  list(accountId: string): ScheduleRow[] {
    return this.listStmt.all(accountId);
  }
  all(): ScheduleRow[] {
    return this.allStmt.all();
  }
  count(accountId: string): number {
    return this.countStmt.get(accountId)?.n ?? 0;
  }
  upsert(row: ScheduleRow): ScheduleRow {
    return this.upsertStmt.get(...scheduleUpsertParams(row))!;
  }
  delete(accountId: string, id: string): boolean {
    return this.deleteStmt.run(accountId, id).changes > 0;
  }
  setPaused(accountId: string, id: string, paused: boolean): boolean {
    return this.setPausedStmt.run(paused ? 1 : 0, accountId, id).changes > 0;
  }
  setNext(accountId: string, id: string, revision: number, next: number | null): void {
    this.setNextStmt.run(next, accountId, id, revision);
  }
  recordTrigger(accountId: string, id: string, revision: number, last: number, next: number | null, states: string): void {
    this.recordTriggerStmt.run(last, next, states, accountId, id, revision);
  }
  setMessageState(accountId: string, scheduleId: string, messageId: string, state: ScheduleMessageState): void {
    this.setStateStmt.run({ path: `$."${messageId}"`, state, account: accountId, id: scheduleId });
  }
  deleteAccount(accountId: string): void {
    this.deleteAccountStmt.run(accountId);
  }
}
