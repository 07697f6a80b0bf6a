import type { Database } from "bun:sqlite";
import { dueAgainState } from "../../model/message.ts";
import { queueUpdate, queueUpsert, type QueueChange, type QueueRow, type QueueStorage } from "../../queues/storage.ts";
import { sqlitePlaceholder, type SqlValue } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";

interface ParkedRow {
  id: string;
  retried: number;
  not_before: number;
}

/** Queues, and the queries over the `messages` table that make a queue a FIFO. */
export class SqliteQueueStore implements QueueStorage {
  private readonly getStmt;
  private readonly listStmt;
  private readonly countStmt;
  private readonly deleteStmt;
  private readonly deleteAccountStmt;
  private readonly activeStmt;
  private readonly hasParkedStmt;
  private readonly lagStmt;
  private readonly nextParkedStmt;
  private readonly promoteStmt;

  constructor(private readonly db: Database) {
    this.getStmt = db.prepare<QueueRow, [string, string]>("SELECT * FROM queues WHERE account_id = ? AND name = ?");
    this.listStmt = db.prepare<QueueRow, [string]>("SELECT * FROM queues WHERE account_id = ? ORDER BY name");
    this.countStmt = db.prepare<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM queues WHERE account_id = ?");
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
    this.promoteStmt = db.prepare("UPDATE messages SET state = ?, dispatch_at = ? WHERE id = ?");
  }

  async get(_tx: WriteTx | null, accountId: string, name: string): Promise<QueueRow | undefined> {
    return this.getStmt.get(accountId, name) ?? undefined;
  }
  async hold(_tx: WriteTx, accountId: string, name: string): Promise<QueueRow | undefined> {
    return this.getStmt.get(accountId, name) ?? undefined;
  }
  async list(accountId: string): Promise<QueueRow[]> {
    return this.listStmt.all(accountId);
  }
  async count(_tx: WriteTx | null, accountId: string): Promise<number> {
    return this.countStmt.get(accountId)?.n ?? 0;
  }
  async upsert(
    _tx: WriteTx,
    accountId: string,
    name: string,
    change: QueueChange,
    created: Required<QueueChange>,
    nowMs: number,
  ): Promise<QueueRow> {
    const { text, params } = queueUpsert(accountId, name, change, created, nowMs, sqlitePlaceholder);
    return this.db.query<QueueRow, SqlValue[]>(text).get(...params)!;
  }
  async update(_tx: WriteTx, accountId: string, name: string, change: QueueChange, nowMs: number) {
    const statement = queueUpdate(accountId, name, change, nowMs, sqlitePlaceholder);
    if (!statement) return this.getStmt.get(accountId, name) ?? undefined;
    return this.db.query<QueueRow, SqlValue[]>(statement.text).get(...statement.params) ?? undefined;
  }
  async delete(_tx: WriteTx, accountId: string, name: string): Promise<boolean> {
    return this.deleteStmt.run(accountId, name).changes > 0;
  }
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.deleteAccountStmt.run(accountId);
  }
  async mustWait(_tx: WriteTx, accountId: string, name: string, parallelism: number): Promise<boolean> {
    return this.hasParked(accountId, name) || this.activeCount(accountId, name) >= parallelism;
  }
  async promote(_tx: WriteTx, accountId: string, name: string, parallelism: number, nowMs: number): Promise<number> {
    const room = parallelism - this.activeCount(accountId, name);
    if (room <= 0) return 0;
    const next = this.nextParked(accountId, name, room);
    // A delayed message still waits for its own time once it is at the head.
    for (const p of next) this.promoteStmt.run(dueAgainState(p.retried), Math.max(nowMs, p.not_before), p.id);
    return next.length;
  }
  activeCount(accountId: string, name: string): number {
    return this.activeStmt.get(accountId, name)?.n ?? 0;
  }
  hasParked(accountId: string, name: string): boolean {
    return (this.hasParkedStmt.get(accountId, name)?.found ?? 0) === 1;
  }
  /** Messages of the queue not yet delivered, failed or cancelled. */
  async lag(accountId: string, name: string): Promise<number> {
    return this.lagStmt.get(accountId, name)?.n ?? 0;
  }
  /** The queue's head: its oldest parked messages, in publish order. */
  nextParked(accountId: string, name: string, limit: number): ParkedRow[] {
    return this.nextParkedStmt.all(accountId, name, limit);
  }
}
