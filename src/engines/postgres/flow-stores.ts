import type { SQL } from "bun";
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
import { postgresPlaceholder } from "../../store/patch.ts";
import { dueAgainStateSql, type FlowControl } from "../../model/message.ts";
import type { MessageStorage } from "../../messages/storage.ts";
import type { CachedTable } from "./cached-table.ts";
import type { TickPart, TickScope, TickSql } from "./tick.ts";
import { num, str } from "./values.ts";

type Raw = Record<string, unknown>;

/** Releases of held messages, written after the tick's messages (see PgQueuePromotions). */
export class PgFlowReleases implements TickPart {
  private wanted: Array<{ accountId: string; key: string; count: number; nowMs: number }> = [];

  constructor(
    /** Held messages became due at `atMs`: called in `apply`, inside the tick's transaction before it commits. */
    private readonly onDue: (atMs: number) => void,
  ) {}

  request(accountId: string, key: string, count: number, nowMs: number): void {
    this.wanted.push({ accountId, key, count, nowMs });
  }
  /** Held messages of the key this tick releases: due only after its writes, whose claims cannot see them. */
  pending(accountId: string, key: string): number {
    let n = 0;
    for (const w of this.wanted) if (w.key === key && w.accountId === accountId) n += w.count;
    return n;
  }
  mark(): number {
    return this.wanted.length;
  }
  rollback(mark: number): void {
    this.wanted.length = mark;
  }
  apply(tx: TickSql): void {
    const wanted = this.wanted;
    this.wanted = [];
    if (wanted.length === 0) return;
    const byKey = new Map<string, { accountId: string; key: string; count: number }>();
    for (const w of wanted) {
      const id = `${w.accountId}\u0000${w.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: w.accountId, key: w.key, count: 0 }).get(id)!;
      entry.count += w.count;
    }
    const list = [...byKey.values()];
    const nowMs = Math.max(...wanted.map((w) => w.nowMs));
    const [released] = tx.query(
      `WITH want AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[]) AS w(account_id, key, n)),
      held AS (
        SELECT m.id, w.n, row_number() OVER (PARTITION BY m.account_id, m.flow_key ORDER BY m.seq) AS rn
        FROM messages m JOIN want w ON m.account_id = w.account_id AND m.flow_key = w.key WHERE m.state = 'HELD'
      ), done AS (
        UPDATE messages m SET state = ${dueAgainStateSql("m")}, dispatch_at = LEAST(m.created_at, $4::bigint)
        FROM held h WHERE m.id = h.id AND h.rn <= h.n
        RETURNING 1
      )
      SELECT count(*) AS n FROM done`,
      [list.map((l) => l.accountId), list.map((l) => l.key), list.map((l) => l.count), nowMs],
    );
    if (num(released?.n ?? 0) > 0) this.onDue(nowMs);
  }
}

/** Flow control's view of the messages: holds go through the message store, releases after the tick's writes. */
export class PgFlowStore implements FlowStorage {
  constructor(
    private readonly sql: SQL,
    private readonly messages: Pick<MessageStorage, "setDispatch">,
    private readonly releases: PgFlowReleases,
  ) {}
  hold(id: string): void {
    this.messages.setDispatch(id, "HELD", null);
  }
  releaseHeld(accountId: string, key: string, count: number, nowMs: number): number {
    this.releases.request(accountId, key, count, nowMs);
    return count;
  }
  unseenReleases(accountId: string, key: string): number {
    return this.releases.pending(accountId, key);
  }
  /** Held messages are released when their partition is taken over (see cluster.ts), not at start. */
  releaseAll(_nowMs: number): number {
    return 0;
  }
  async heldCount(accountId: string, key: string): Promise<number> {
    const [row] = await this.sql`
      SELECT count(*) AS n FROM messages WHERE account_id = ${accountId} AND flow_key = ${key} AND state = 'HELD'`;
    return num(row.n);
  }
  async keys(accountId: string): Promise<string[]> {
    const rows = await this.sql`
      SELECT DISTINCT flow_key AS key FROM messages
      WHERE account_id = ${accountId} AND flow_key IS NOT NULL ORDER BY flow_key`;
    return rows.map((r: { key: string }) => r.key);
  }
  async latestLimits(accountId: string, key: string): Promise<FlowControl | undefined> {
    const [row] = await this.sql`
      SELECT extra FROM messages WHERE account_id = ${accountId} AND flow_key = ${key} ORDER BY seq DESC LIMIT 1`;
    return row ? readFlow(str(row.extra)).flow : undefined;
  }
}

export interface RateStartRow {
  id: string;
  account_id: string;
  key: string;
  started_at: number;
  counts_until: number;
}

/**
 * Flow-control keys' settings and rate windows, kept in memory on every node. Settings change
 * field by field in PostgreSQL; a rate window's starts are rows of their own, each inserted once
 * and deleted once it no longer counts.
 */
export class PgFlowKeyStore implements FlowKeyStorage {
  constructor(
    private readonly scope: TickScope,
    readonly keysTable: CachedTable<FlowKeyRow & Raw>,
    readonly startsTable: CachedTable<RateStartRow & Raw>,
  ) {}
  all(): Array<{ accountId: string; key: string; settings: KeySettings }> {
    return this.keysTable.all().map((r) => ({ accountId: r.account_id, key: r.key, settings: keySettingsOf(r) }));
  }
  change(accountId: string, key: string, change: KeySettingsChange): KeySettings {
    const { text, params } = keySettingsChange(accountId, key, change, postgresPlaceholder);
    return keySettingsOf(this.keysTable.returning(text, params)[0]!);
  }
  addStart(accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number): void {
    const tx = this.scope.tx;
    for (const r of this.startsOf(accountId, key)) {
      if (r.counts_until > nowMs) continue;
      tx.queueEach("DELETE FROM flow_rate_starts WHERE id = ANY($1::text[])", r.id);
      this.startsTable.recordDeleted(r.id);
    }
    // Unique across nodes without a round trip.
    const row = { id: crypto.randomUUID(), account_id: accountId, key, started_at: startedAt, counts_until: countsUntil };
    tx.insert("flow_rate_starts", row);
    this.startsTable.record(row);
  }
  clearStarts(accountId: string, key: string): void {
    this.scope.tx.queue("DELETE FROM flow_rate_starts WHERE account_id = $1 AND key = $2", [accountId, key]);
    for (const r of this.startsOf(accountId, key)) this.startsTable.recordDeleted(r.id);
  }
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }> {
    const byKey = new Map<string, { accountId: string; key: string; starts: number[] }>();
    const live = this.startsTable.where((r) => r.counts_until > nowMs).sort((a, b) => a.started_at - b.started_at);
    for (const r of live) {
      const id = `${r.account_id}/${r.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: r.account_id, key: r.key, starts: [] }).get(id)!;
      entry.starts.push(r.started_at);
    }
    return [...byKey.values()];
  }
  deleteAccount(accountId: string): void {
    const ofAccount = (r: { account_id: string }) => r.account_id === accountId;
    this.keysTable.deleting("DELETE FROM flow_keys WHERE account_id = $1 RETURNING *", [accountId], ofAccount);
    this.scope.tx.queue("DELETE FROM flow_rate_starts WHERE account_id = $1", [accountId]);
    for (const r of this.startsTable.where(ofAccount)) this.startsTable.recordDeleted(r.id);
  }
  private startsOf(accountId: string, key: string): RateStartRow[] {
    return this.startsTable.where((r) => r.account_id === accountId && r.key === key);
  }
}
