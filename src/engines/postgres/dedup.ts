import type { SQL } from "bun";
import type { DedupStorage } from "../../dedup/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { sqlOf } from "./tick.ts";

/** The advisory lock of deduplication lookups (a two-int lock: apart from any single-bigint lock). */
const DEDUP_LOCK = [0x64656475, 0] as const;

/**
 * Deduplication keys on PostgreSQL, as on SQLite: a lookup, then the key remembered in the same
 * transaction. Nodes publish concurrently, so a lookup first takes the one deduplication lock for
 * its transaction: a node publishing the same key waits for this tick's commit, then finds its
 * message. One lock for every key, not one per key: a tick looks its keys up in the order its
 * requests came, so two nodes' ticks naming two keys in opposite orders would each hold one and
 * wait for the other (a deadlock, found after PostgreSQL's `deadlock_timeout`, that fails a whole
 * tick). Ticks that look keys up therefore commit one at a time across the nodes; the others do
 * not wait.
 */
export class PgDedupStore implements DedupStorage {
  constructor(private readonly sql: SQL) {}

  async find(tx: WriteTx, accountId: string, key: string, nowMs: number): Promise<string | undefined> {
    const sql = sqlOf(tx);
    // A statement of its own: the lookup's snapshot must be taken once the lock is held. Taken at
    // every lookup (it is reentrant): a write undone to its savepoint releases what it took.
    sql.queue("SELECT pg_advisory_xact_lock($1, $2)", DEDUP_LOCK);
    const [row] = await sql.query(
      "SELECT message_id FROM dedup_keys WHERE account_id = $1 AND key = $2 AND expires_at > $3",
      [accountId, key, nowMs],
    );
    return row ? String(row.message_id) : undefined;
  }

  async remember(tx: WriteTx, accountId: string, key: string, messageId: string, expiresAt: number): Promise<void> {
    sqlOf(tx).queue(
      `INSERT INTO dedup_keys (account_id, key, message_id, expires_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id, key) DO UPDATE SET message_id = excluded.message_id, expires_at = excluded.expires_at`,
      [accountId, key, messageId, expiresAt],
    );
  }

  /** Expired keys are pruned by the leader's maintenance (`pruneExpired`), not by every publish. */
  async prune(_tx: WriteTx, _nowMs: number): Promise<number> {
    return 0;
  }

  async pruneExpired(nowMs: number): Promise<number> {
    return (await this.sql`DELETE FROM dedup_keys WHERE expires_at <= ${nowMs} RETURNING key`).length;
  }

  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    sqlOf(tx).queue("DELETE FROM dedup_keys WHERE account_id = $1", [accountId]);
  }
}
