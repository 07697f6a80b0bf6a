import type { Database } from "bun:sqlite";
import type { DedupStorage } from "../../dedup/storage.ts";

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
  find(accountId: string, key: string, nowMs: number): string | undefined {
    return this.findStmt.get(accountId, key, nowMs)?.message_id;
  }
  remember(accountId: string, key: string, messageId: string, expiresAt: number): void {
    this.rememberStmt.run(accountId, key, messageId, expiresAt);
  }
  prune(nowMs: number): number {
    return this.pruneStmt.run(nowMs).changes;
  }
  deleteAccount(accountId: string): void {
    this.deleteAccountStmt.run(accountId);
  }
}
