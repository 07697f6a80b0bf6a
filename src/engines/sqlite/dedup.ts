import type { Database } from "bun:sqlite";
import type { DedupStorage } from "../../dedup/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";

/** Deduplication keys of recently published messages, each with the id of the first message. */
export class SqliteDedupStore implements DedupStorage {
  private readonly findStmt;
  private readonly rememberStmt;
  private readonly pruneStmt;
  private readonly deleteAccountStmt;

  constructor(db: Database) {
    this.findStmt = db.prepare<{ message_id: string }, [string, string, number]>(
      "SELECT message_id FROM dedup_keys WHERE account_id = ? AND key = ? AND expires_at > ?",
    );
    this.rememberStmt = db.prepare(
      "INSERT OR REPLACE INTO dedup_keys (account_id, key, message_id, expires_at) VALUES (?, ?, ?, ?)",
    );
    this.pruneStmt = db.prepare("DELETE FROM dedup_keys WHERE expires_at <= ?");
    this.deleteAccountStmt = db.prepare("DELETE FROM dedup_keys WHERE account_id = ?");
  }

  /** The original message id, while the key's window is open. */
  async find(_tx: WriteTx, accountId: string, key: string, nowMs: number): Promise<string | undefined> {
    return this.findStmt.get(accountId, key, nowMs)?.message_id;
  }
  async remember(_tx: WriteTx, accountId: string, key: string, messageId: string, expiresAt: number): Promise<void> {
    this.rememberStmt.run(accountId, key, messageId, expiresAt);
  }
  async prune(_tx: WriteTx, nowMs: number): Promise<number> {
    return this.pruneStmt.run(nowMs).changes;
  }
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.deleteAccountStmt.run(accountId);
  }
}
