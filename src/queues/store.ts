import type { Database } from "bun:sqlite";

export interface QueueRow {
  account_id: string;
  name: string;
  created_at: number;
  updated_at: number;
  parallelism: number;
  paused: number;
}

export interface ParkedRow {
  id: string;
  retried: number;
  not_before: number;
}

/** Queues, and the queries over the `messages` table that make a queue a FIFO. */
export class QueueStore {
  private readonly getStmt;
  private readonly listStmt;
  private readonly countStmt;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly deleteAccountStmt;
  private readonly activeStmt;
  private readonly hasParkedStmt;
  private readonly lagStmt;
  private readonly nextParkedStmt;

  constructor(db: Database) {
    this.getStmt = db.prepare<QueueRow, [string, string]>("SELECT * FROM queues WHERE account_id = ? AND name = ?");
    this.listStmt = db.prepare<QueueRow, [string]>("SELECT * FROM queues WHERE account_id = ? ORDER BY name");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM queues WHERE account_id = ?");
    this.insertStmt = db.prepare(
      "INSERT INTO queues (account_id, name, created_at, updated_at, parallelism, paused) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.updateStmt = db.prepare(
      "UPDATE queues SET parallelism = ?, paused = ?, updated_at = ? WHERE account_id = ? AND name = ?",
    );
    this.deleteStmt = db.prepare("DELETE FROM queues WHERE account_id = ? AND name = ?");
    this.deleteAccountStmt = db.prepare("DELETE FROM queues WHERE account_id = ?");
    // Started and not finished: waiting for an attempt, in flight, retrying or held by flow control.
    this.activeStmt = db.prepare<{ n: number }, [string, string]>(
      "SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND queue_name = ? AND state != 'PARKED'",
    );
    this.hasParkedStmt = db.prepare<{ found: number }, [string, string]>(
      "SELECT EXISTS (SELECT 1 FROM messages WHERE account_id = ? AND queue_name = ? AND state = 'PARKED') AS found",
    );
    this.lagStmt = db.prepare<{ n: number }, [string, string]>(
      "SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND queue_name = ?",
    );
    this.nextParkedStmt = db.prepare<ParkedRow, [string, string, number]>(
      `SELECT id, retried, not_before FROM messages
       WHERE account_id = ? AND queue_name = ? AND state = 'PARKED' ORDER BY rowid LIMIT ?`,
    );
  }

  get(accountId: string, name: string): QueueRow | undefined {
    return this.getStmt.get(accountId, name) ?? undefined;
  }
  list(accountId: string): QueueRow[] {
    return this.listStmt.all(accountId);
  }
  count(accountId: string): number {
    return this.countStmt.get(accountId)?.n ?? 0;
  }
  insert(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void {
    this.insertStmt.run(accountId, name, nowMs, nowMs, parallelism, paused ? 1 : 0);
  }
  update(accountId: string, name: string, parallelism: number, paused: boolean, nowMs: number): void {
    this.updateStmt.run(parallelism, paused ? 1 : 0, nowMs, accountId, name);
  }
  delete(accountId: string, name: string): boolean {
    return this.deleteStmt.run(accountId, name).changes > 0;
  }
  deleteAccount(accountId: string): void {
    this.deleteAccountStmt.run(accountId);
  }
  activeCount(accountId: string, name: string): number {
    return this.activeStmt.get(accountId, name)?.n ?? 0;
  }
  hasParked(accountId: string, name: string): boolean {
    return (this.hasParkedStmt.get(accountId, name)?.found ?? 0) === 1;
  }
  /** Messages of the queue not yet delivered, failed or cancelled. */
  lag(accountId: string, name: string): number {
    return this.lagStmt.get(accountId, name)?.n ?? 0;
  }
  /** The queue's head: its oldest parked messages, in publish order. */
  nextParked(accountId: string, name: string, limit: number): ParkedRow[] {
    return this.nextParkedStmt.all(accountId, name, limit);
  }
}
