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
import type { WriteTx } from "../../store/transactor.ts";
import { dueAgainStateSql, type FlowControl } from "../../model/message.ts";
import type { MessageStorage } from "../../messages/storage.ts";
import type { CachedTable } from "./cached-table.ts";
import { sqlOf, writeOf, type TickPart, type TxSql } from "./tick.ts";
import { TickLists } from "./tick-lists.ts";
import type { TickTransaction } from "./tick-tx.ts";
import type { PgRow } from "./pipeline.ts";
import { num, str } from "./values.ts";
import { stableHash } from "../../util/stable-hash.ts";

type Raw = Record<string, unknown>;

/** The class of the advisory locks of flow-control releases (two-int locks: apart from any single-bigint lock). */
const FLOW_RELEASE_LOCK = 0x666c6f77;

/** A flow-control key's lock number (a collision only makes two keys wait for each other). */
const keyLock = (accountId: string, key: string): number => stableHash(`${accountId}\u0000${key}`) | 0;

/** Releases of held messages, written after the tick's messages (see PgQueuePromotions). */
export class PgFlowReleases implements TickPart {
  private readonly wanted = new TickLists<{ accountId: string; key: string; count: number; nowMs: number }>();

  constructor(
    /** Held messages became due at `atMs`: called once the release's answer comes, inside the tick's transaction. */
    private readonly onDue: (tick: TickTransaction, atMs: number) => void,
  ) {}

  request(tx: WriteTx, accountId: string, key: string, count: number, nowMs: number): void {
    this.wanted.add(tx, { accountId, key, count, nowMs });
  }
  /** Held messages of the key the write's tick releases: due only after its writes, whose claims cannot see them. */
  pending(tx: WriteTx, accountId: string, key: string): number {
    let n = 0;
    for (const w of this.wanted.of(writeOf(tx).tick)) if (w.key === key && w.accountId === accountId) n += w.count;
    return n;
  }
  mark(tick: TickTransaction): number {
    return this.wanted.mark(tick);
  }
  rollback(tick: TickTransaction, mark: number): void {
    this.wanted.rollback(tick, mark);
  }
  drop(tick: TickTransaction, write: number): void {
    this.wanted.drop(tick, write);
  }
  finish(tick: TickTransaction): void {
    this.wanted.forget(tick);
  }
  async apply(tick: TickTransaction, tx: TxSql): Promise<void> {
    const wanted = this.wanted.take(tick);
    if (wanted.length === 0) return;
    const byKey = new Map<string, { accountId: string; key: string; count: number }>();
    for (const w of wanted) {
      const id = `${w.accountId}\u0000${w.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: w.accountId, key: w.key, count: 0 }).get(id)!;
      entry.count += w.count;
    }
    const list = [...byKey.values()];
    const nowMs = Math.max(...wanted.map((w) => w.nowMs));
    // Each key's lock first, in statements of their own, so that the release's snapshot is taken
    // once they are held: another tick (of this node or another) releasing the same key commits
    // first, and this one then sees its rows no longer HELD, instead of releasing them a second
    // time after a claim took them (one message delivered twice). In one order, so that two ticks
    // never hold one key each and wait for the other.
    for (const lock of [...new Set(list.map((l) => keyLock(l.accountId, l.key)))].sort((a, b) => a - b)) {
      tx.queue("SELECT pg_advisory_xact_lock($1, $2)", [FLOW_RELEASE_LOCK, lock]);
    }
    const [released] = await tx.query(
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
    if (num(released?.n ?? 0) > 0) this.onDue(tick, nowMs);
  }
}

/** Flow control's view of the messages: holds go through the message store, releases after the tick's writes. */
export class PgFlowStore implements FlowStorage {
  constructor(
    private readonly sql: SQL,
    private readonly messages: Pick<MessageStorage, "setDispatch"> & { behindHeld(tx: WriteTx, id: string): boolean },
    private readonly releases: PgFlowReleases,
  ) {}
  async hold(tx: WriteTx, id: string): Promise<void> {
    await this.messages.setDispatch(tx, id, "HELD", null);
  }
  async releaseHeld(tx: WriteTx, accountId: string, key: string, count: number, nowMs: number): Promise<number> {
    this.releases.request(tx, accountId, key, count, nowMs);
    return count;
  }
  async unseenReleases(tx: WriteTx, accountId: string, key: string): Promise<number> {
    return this.releases.pending(tx, accountId, key);
  }
  async behindHeld(tx: WriteTx, messageId: string): Promise<boolean> {
    return this.messages.behindHeld(tx, messageId);
  }
  /** Held messages are released when their partition is taken over (see cluster.ts), not at start. */
  async releaseAll(_tx: WriteTx, _nowMs: number): Promise<number> {
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
    readonly keysTable: CachedTable<FlowKeyRow & Raw>,
    readonly startsTable: CachedTable<RateStartRow & Raw>,
  ) {}
  async all(): Promise<Array<{ accountId: string; key: string; settings: KeySettings }>> {
    return this.keysTable.all(null).map((r) => ({ accountId: r.account_id, key: r.key, settings: keySettingsOf(r) }));
  }
  async change(tx: WriteTx, accountId: string, key: string, change: KeySettingsChange): Promise<KeySettings> {
    const { text, params } = keySettingsChange(accountId, key, change, postgresPlaceholder);
    return keySettingsOf((await this.keysTable.returning(tx, text, params))[0]!);
  }
  async addStart(tx: WriteTx, accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number) {
    const sql = sqlOf(tx);
    for (const r of this.startsOf(tx, accountId, key)) {
      if (r.counts_until > nowMs) continue;
      sql.queueEach("DELETE FROM flow_rate_starts WHERE id = ANY($1::text[])", r.id);
      this.startsTable.recordDeleted(tx, r.id);
    }
    // Unique across nodes without a round trip.
    const row = { id: crypto.randomUUID(), account_id: accountId, key, started_at: startedAt, counts_until: countsUntil };
    sql.insert("flow_rate_starts", row);
    this.startsTable.record(tx, row);
  }
  async clearStarts(tx: WriteTx, accountId: string, key: string): Promise<void> {
    sqlOf(tx).queue("DELETE FROM flow_rate_starts WHERE account_id = $1 AND key = $2", [accountId, key]);
    for (const r of this.startsOf(tx, accountId, key)) this.startsTable.recordDeleted(tx, r.id);
  }
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }> {
    const byKey = new Map<string, { accountId: string; key: string; starts: number[] }>();
    const live = this.startsTable.where(null, (r) => r.counts_until > nowMs);
    live.sort((a, b) => a.started_at - b.started_at);
    for (const r of live) {
      const id = `${r.account_id}/${r.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: r.account_id, key: r.key, starts: [] }).get(id)!;
      entry.starts.push(r.started_at);
    }
    return [...byKey.values()];
  }
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    const ofAccount = (r: { account_id: string }) => r.account_id === accountId;
    const text = "DELETE FROM flow_keys WHERE account_id = $1 RETURNING *";
    await this.keysTable.deleting(tx, text, [accountId], ofAccount);
    sqlOf(tx).queue("DELETE FROM flow_rate_starts WHERE account_id = $1", [accountId]);
    for (const r of this.startsTable.where(tx, ofAccount)) this.startsTable.recordDeleted(tx, r.id);
  }
  private startsOf(tx: WriteTx, accountId: string, key: string): RateStartRow[] {
    return this.startsTable.where(tx, (r) => r.account_id === accountId && r.key === key);
  }
}
