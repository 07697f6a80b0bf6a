import type { Database } from "bun:sqlite";
import type { WriteTx } from "../../store/transactor.ts";
import type { Waiter } from "../../workflows/model.ts";
import { toWaiter, waiterRowOf, type StoredWaiter, type WaiterRow } from "../../workflows/run-rows.ts";
import type { WaitStorage } from "../../workflows/storage.ts";

/** Waiting steps and kept events on SQLite. */
export class SqliteWaitStore implements WaitStorage {
  private readonly insertStmt;
  private readonly byEventStmt;
  private readonly byRunEventStmt;
  private readonly byRunStmt;
  private readonly deleteStmt;
  private readonly dueStmt;
  private readonly nextDeadlineStmt;
  private readonly keepStmt;
  private readonly keptStmt;
  private readonly dropKeptStmt;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(
      "INSERT INTO workflow_waiters (account_id, run_id, event_id, created_at, deadline, data) VALUES ($account_id, $run_id, $event_id, $created_at, $deadline, $data)",
    );
    this.byEventStmt = db.prepare<WaiterRow, [string, string]>(
      "SELECT * FROM workflow_waiters WHERE account_id = ? AND event_id = ? ORDER BY id",
    );
    this.byRunEventStmt = db.prepare<WaiterRow, [string, string, string]>(
      "SELECT * FROM workflow_waiters WHERE account_id = ? AND run_id = ? AND event_id = ? ORDER BY id",
    );
    this.byRunStmt = db.prepare<WaiterRow, [string, string]>("SELECT * FROM workflow_waiters WHERE account_id = ? AND run_id = ?");
    this.deleteStmt = db.prepare("DELETE FROM workflow_waiters WHERE id = ?");
    this.dueStmt = db.prepare<WaiterRow, [number, number]>(
      "SELECT * FROM workflow_waiters WHERE deadline <= ? ORDER BY deadline, id LIMIT ?",
    );
    this.nextDeadlineStmt = db.prepare<{ t: number | null }, []>("SELECT MIN(deadline) AS t FROM workflow_waiters");
    this.keepStmt = db.prepare(
      "INSERT INTO workflow_kept_events (account_id, run_id, event_id, created_at, data) VALUES (?, ?, ?, ?, ?)",
    );
    this.keptStmt = db.prepare<{ id: number; data: Uint8Array }, [string, string, string]>(
      "SELECT id, data FROM workflow_kept_events WHERE account_id = ? AND run_id = ? AND event_id = ? ORDER BY id LIMIT 1",
    );
    this.dropKeptStmt = db.prepare("DELETE FROM workflow_kept_events WHERE id = ?");
  }

  async insert(_tx: WriteTx, w: Waiter): Promise<void> {
    this.insertStmt.run(waiterRowOf(w));
  }

  async waiting(_tx: WriteTx, accountId: string, eventId: string, runId?: string): Promise<StoredWaiter[]> {
    const rows = runId === undefined ? this.byEventStmt.all(accountId, eventId) : this.byRunEventStmt.all(accountId, runId, eventId);
    return rows.map(toWaiter);
  }

  async readWaiting(accountId: string, eventId: string): Promise<StoredWaiter[]> {
    return this.byEventStmt.all(accountId, eventId).map(toWaiter);
  }

  async ofRun(accountId: string, runId: string): Promise<StoredWaiter[]> {
    return this.byRunStmt.all(accountId, runId).map(toWaiter);
  }

  async delete(_tx: WriteTx, id: number): Promise<boolean> {
    return this.deleteStmt.run(id).changes > 0;
  }

  async due(_tx: WriteTx, nowMs: number, limit: number): Promise<StoredWaiter[]> {
    return this.dueStmt.all(nowMs, limit).map(toWaiter);
  }

  async nextDeadline(): Promise<number | null> {
    return this.nextDeadlineStmt.get()?.t ?? null;
  }

  async keep(_tx: WriteTx, accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number) {
    this.keepStmt.run(accountId, runId, eventId, nowMs, data);
  }

  async takeKept(_tx: WriteTx, accountId: string, runId: string, eventId: string): Promise<Uint8Array | undefined> {
    const row = this.keptStmt.get(accountId, runId, eventId);
    if (!row) return undefined;
    this.dropKeptStmt.run(row.id);
    return row.data;
  }

  async deleteRun(_tx: WriteTx, accountId: string, runId: string): Promise<void> {
    this.db.query("DELETE FROM workflow_waiters WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_kept_events WHERE account_id = ? AND run_id = ?").run(accountId, runId);
  }

  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.db.query("DELETE FROM workflow_waiters WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_kept_events WHERE account_id = ?").run(accountId);
  }
}
