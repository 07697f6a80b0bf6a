import type { Database } from "bun:sqlite";
import {
  keySettingsChange,
  keySettingsOf,
  readFlow,
  type FlowKeyRow,
  type FlowKeyStorage,
  type FlowStorage,
  type KeySettings,
  type KeySettingsChange,
} from "../../flow-control/storage.ts";
import { sqlitePlaceholder, type SqlValue } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { dueAgainState, dueAgainStateSql, type FlowControl } from "../../model/message.ts";

/** Statements over `messages` for flow control: holding and releasing a key's messages. */
export class SqliteFlowStore implements FlowStorage {
  private readonly holdStmt;
  private readonly oldestHeldStmt;
  private readonly releaseAllStmt;
  private readonly heldCountStmt;
  private readonly keysStmt;
  private readonly latestStmt;
  private readonly releaseStmt;

  constructor(db: Database) {
    this.holdStmt = db.prepare("UPDATE messages SET state = 'HELD', dispatch_at = NULL WHERE id = ?");
    this.oldestHeldStmt = db.prepare<{ id: string; retried: number }, [string, string, number]>(
      "SELECT id, retried FROM messages WHERE account_id = ? AND flow_key = ? AND state = 'HELD' ORDER BY rowid LIMIT ?",
    );
    // A released message is due since it was published (never later than now), not since its
    // release: the claim pass goes by due time, and a newer message of the key that is due but not
    // yet claimed must not pass it (the key's order would break).
    this.releaseAllStmt = db.prepare(
      `UPDATE messages SET state = ${dueAgainStateSql()}, dispatch_at = MIN(created_at, ?) WHERE state = 'HELD'`,
    );
    this.heldCountStmt = db.prepare<{ n: number }, [string, string]>(
      "SELECT COUNT(*) AS n FROM messages WHERE account_id = ? AND flow_key = ? AND state = 'HELD'",
    );
    this.keysStmt = db.prepare<{ key: string }, [string]>(
      "SELECT DISTINCT flow_key AS key FROM messages WHERE account_id = ? AND flow_key IS NOT NULL ORDER BY flow_key",
    );
    this.latestStmt = db.prepare<{ extra: string }, [string, string]>(
      "SELECT extra FROM messages WHERE account_id = ? AND flow_key = ? ORDER BY rowid DESC LIMIT 1",
    );
    this.releaseStmt = db.prepare("UPDATE messages SET state = ?, dispatch_at = MIN(created_at, ?) WHERE id = ?");
  }

  async hold(_tx: WriteTx, id: string): Promise<void> {
    this.holdStmt.run(id);
  }
  /** The key's `limit` oldest held messages. */
  oldestHeld(accountId: string, key: string, limit: number): Array<{ id: string; retried: number }> {
    return this.oldestHeldStmt.all(accountId, key, limit);
  }

  async releaseHeld(_tx: WriteTx, accountId: string, key: string, count: number, nowMs: number): Promise<number> {
    const next = this.oldestHeld(accountId, key, count);
    for (const m of next) this.releaseStmt.run(dueAgainState(m.retried), nowMs, m.id);
    return next.length;
  }
  /** Released inline: a claim later in the same transaction sees them due. */
  async unseenReleases(): Promise<number> {
    return 0;
  }
  /** One writer: a release is seen at once. */
  async behindHeld(): Promise<boolean> {
    return false;
  }
  /** Every held message is due again at `nowMs`; returns how many. */
  async releaseAll(_tx: WriteTx, nowMs: number): Promise<number> {
    return this.releaseAllStmt.run(nowMs).changes;
  }
  async heldCount(accountId: string, key: string): Promise<number> {
    return this.heldCountStmt.get(accountId, key)?.n ?? 0;
  }
  /** Keys of the account's live messages. */
  async keys(accountId: string): Promise<string[]> {
    return this.keysStmt.all(accountId).map((r) => r.key);
  }
  /** The limits carried by the key's most recent live message. */
  async latestLimits(accountId: string, key: string): Promise<FlowControl | undefined> {
    const row = this.latestStmt.get(accountId, key);
    return row ? readFlow(row.extra).flow : undefined;
  }
}

/** Flow-control keys' settings and recent delivery starts, so both survive a restart. */
export class SqliteFlowKeyStore implements FlowKeyStorage {
  private readonly addStartStmt;
  private readonly pruneStartsStmt;
  private readonly clearStartsStmt;

  constructor(private readonly db: Database) {
    this.addStartStmt = db.prepare("INSERT INTO flow_rate_starts (account_id, key, started_at, counts_until) VALUES (?, ?, ?, ?)");
    this.pruneStartsStmt = db.prepare("DELETE FROM flow_rate_starts WHERE account_id = ? AND key = ? AND counts_until <= ?");
    this.clearStartsStmt = db.prepare("DELETE FROM flow_rate_starts WHERE account_id = ? AND key = ?");
  }

  async all(): Promise<Array<{ accountId: string; key: string; settings: KeySettings }>> {
    return this.db
      .query<FlowKeyRow, []>("SELECT * FROM flow_keys")
      .all()
      .map((r) => ({ accountId: r.account_id, key: r.key, settings: keySettingsOf(r) }));
  }

  async change(_tx: WriteTx, accountId: string, key: string, change: KeySettingsChange): Promise<KeySettings> {
    const { text, params } = keySettingsChange(accountId, key, change, sqlitePlaceholder);
    return keySettingsOf(this.db.query<FlowKeyRow, SqlValue[]>(text).get(...params)!);
  }

  /** A delivery of a rate-limited key started at `startedAt`; it counts until `countsUntil`. */
  async addStart(_tx: WriteTx, accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number) {
    this.pruneStartsStmt.run(accountId, key, nowMs);
    this.addStartStmt.run(accountId, key, startedAt, countsUntil);
  }

  async clearStarts(_tx: WriteTx, accountId: string, key: string): Promise<void> {
    this.clearStartsStmt.run(accountId, key);
  }

  /** Starts still counting at `nowMs`, per key, oldest first. */
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }> {
    const byKey = new Map<string, { accountId: string; key: string; starts: number[] }>();
    const rows = this.db
      .query<{ account_id: string; key: string; started_at: number }, [number]>(
        "SELECT account_id, key, started_at FROM flow_rate_starts WHERE counts_until > ? ORDER BY account_id, key, started_at",
      )
      .all(nowMs);
    for (const r of rows) {
      const id = `${r.account_id}/${r.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: r.account_id, key: r.key, starts: [] }).get(id)!;
      entry.starts.push(r.started_at);
    }
    return [...byKey.values()];
  }

  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    this.db.query("DELETE FROM flow_keys WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM flow_rate_starts WHERE account_id = ?").run(accountId);
  }
}
