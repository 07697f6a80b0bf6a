import type { Database } from "bun:sqlite";
import { jsonColumn } from "../store/json-column.ts";
import { WaiterDataJson } from "./columns.ts";
import type { Waiter } from "./model.ts";

interface WaiterRow {
  id: number;
  account_id: string;
  run_id: string;
  event_id: string;
  created_at: number;
  deadline: number;
  data: string;
}

type WaiterData = Pick<Waiter, "url" | "headers" | "timeoutUrl" | "timeoutBody" | "timeoutHeaders" | "timeout" | "step">;

export type StoredWaiter = Waiter & { id: number };

const readData = jsonColumn("workflow_waiters.data", WaiterDataJson);

function toWaiter(r: WaiterRow): StoredWaiter {
  return {
    id: r.id,
    accountId: r.account_id,
    runId: r.run_id,
    eventId: r.event_id,
    createdAt: r.created_at,
    deadline: r.deadline,
    ...readData(r.data),
  };
}

/** Waiting steps and the events kept for runs that wait for them later. */
export class WaitStore {
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
      "INSERT INTO workflow_waiters (account_id, run_id, event_id, created_at, deadline, data) VALUES (?, ?, ?, ?, ?, ?)",
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

  insert(w: Waiter): number {
    const data: WaiterData = {
      url: w.url,
      headers: w.headers,
      timeoutUrl: w.timeoutUrl,
      timeoutBody: w.timeoutBody,
      timeoutHeaders: w.timeoutHeaders,
      timeout: w.timeout,
      step: w.step,
    };
    return Number(this.insertStmt.run(w.accountId, w.runId, w.eventId, w.createdAt, w.deadline, JSON.stringify(data)).lastInsertRowid);
  }

  /** Every waiter of an event, or only those of one run. */
  waiting(accountId: string, eventId: string, runId?: string): StoredWaiter[] {
    const rows = runId === undefined ? this.byEventStmt.all(accountId, eventId) : this.byRunEventStmt.all(accountId, runId, eventId);
    return rows.map(toWaiter);
  }

  ofRun(accountId: string, runId: string): StoredWaiter[] {
    return this.byRunStmt.all(accountId, runId).map(toWaiter);
  }

  /** False when it was already gone (notified or timed out meanwhile). */
  delete(id: number): boolean {
    return this.deleteStmt.run(id).changes > 0;
  }

  due(nowMs: number, limit: number): StoredWaiter[] {
    return this.dueStmt.all(nowMs, limit).map(toWaiter);
  }

  nextDeadline(): number | null {
    return this.nextDeadlineStmt.get()?.t ?? null;
  }

  keep(accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number): void {
    this.keepStmt.run(accountId, runId, eventId, nowMs, data);
  }

  /** Takes the oldest event kept for this run and event id, if any. */
  takeKept(accountId: string, runId: string, eventId: string): Uint8Array | undefined {
    const row = this.keptStmt.get(accountId, runId, eventId);
    if (!row) return undefined;
    this.dropKeptStmt.run(row.id);
    return row.data;
  }

  /** A run that ended waits for nothing any more. */
  deleteRun(accountId: string, runId: string): void {
    this.db.query("DELETE FROM workflow_waiters WHERE account_id = ? AND run_id = ?").run(accountId, runId);
    this.db.query("DELETE FROM workflow_kept_events WHERE account_id = ? AND run_id = ?").run(accountId, runId);
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM workflow_waiters WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM workflow_kept_events WHERE account_id = ?").run(accountId);
  }
}
