import type { SQL } from "bun";
import { DEDUP_READS, type DedupClaim, type DedupStorage } from "../../dedup/store.ts";
import type { Read } from "../../store/group-commit.ts";
import type { TickPart, Tx } from "./tick.ts";

/**
 * Deduplication by the table's unique key: before a tick's publishes run, their keys are taken
 * (INSERT ... ON CONFLICT: a live key of another message, from any node, is left alone and
 * answered as the original). A taken key whose message the tick does not store is given back.
 */
export class PgDedupStore implements DedupStorage, TickPart {
  /** key → the message holding it (this tick's candidate, or the original). */
  private holders = new Map<string, string>();
  /** Keys this tick took for a candidate. */
  private takenForTick = new Map<string, DedupClaim>();
  private remembered: string[] = [];
  private deletedAccounts: string[] = [];
  private applied: { remembered: string[]; deleted: string[] } = { remembered: [], deleted: [] };

  constructor(private readonly sql: SQL) {}

  find(accountId: string, key: string, _nowMs: number, candidate?: string): string | undefined {
    const holder = this.holders.get(`${accountId}\u0000${key}`);
    if (holder === undefined || holder === candidate) return undefined;
    // Taken by an earlier publish of this tick: only if that one was stored.
    const claim = this.takenForTick.get(`${accountId}\u0000${key}`);
    if (claim && claim.messageId === holder && !this.remembered.includes(`${accountId}\u0000${key}`)) return undefined;
    return holder;
  }

  remember(accountId: string, key: string, messageId: string, _expiresAt: number): void {
    const id = `${accountId}\u0000${key}`;
    this.remembered.push(id);
    // A key not taken ahead (a publish that declared no reads) is taken when the tick applies.
    if (!this.takenForTick.has(id)) this.takenForTick.set(id, { accountId, key, messageId, expiresAt: _expiresAt });
    this.holders.set(id, messageId);
  }

  /** Expired keys are pruned by the leader's maintenance. */
  prune(_nowMs: number): number {
    return 0;
  }

  async pruneExpired(nowMs: number): Promise<number> {
    return (await this.sql`DELETE FROM dedup_keys WHERE expires_at <= ${nowMs} RETURNING key`).length;
  }

  deleteAccount(accountId: string): void {
    this.deletedAccounts.push(accountId);
  }

  async preload(tx: Tx, reads: readonly Read[]): Promise<void> {
    const claims = new Map<string, DedupClaim>();
    let nowMs = 0;
    for (const r of reads) {
      if (r.kind !== DEDUP_READS.keys) continue;
      const read = r as unknown as { claims: DedupClaim[]; nowMs: number };
      nowMs = Math.max(nowMs, read.nowMs);
      for (const c of read.claims) {
        const id = `${c.accountId}\u0000${c.key}`;
        if (!claims.has(id)) claims.set(id, c);
      }
    }
    if (claims.size === 0) return;
    const list = [...claims.values()];
    const won = await tx`
      INSERT INTO dedup_keys (account_id, key, message_id, expires_at)
      SELECT * FROM unnest(${list.map((c) => c.accountId)}::text[], ${list.map((c) => c.key)}::text[],
                           ${list.map((c) => c.messageId)}::text[], ${list.map((c) => c.expiresAt)}::bigint[])
      ON CONFLICT (account_id, key) DO UPDATE SET message_id = excluded.message_id, expires_at = excluded.expires_at
        WHERE dedup_keys.expires_at <= ${nowMs}
      RETURNING account_id, key`;
    const wonIds = new Set(won.map((r: { account_id: string; key: string }) => `${r.account_id}\u0000${r.key}`));
    for (const [id, c] of claims) {
      if (wonIds.has(id)) {
        this.holders.set(id, c.messageId);
        this.takenForTick.set(id, c);
      }
    }
    const lost = list.filter((c) => !wonIds.has(`${c.accountId}\u0000${c.key}`));
    if (lost.length > 0) {
      const rows = await tx`
        SELECT d.account_id, d.key, d.message_id FROM dedup_keys d
        JOIN unnest(${lost.map((c) => c.accountId)}::text[], ${lost.map((c) => c.key)}::text[]) AS l(account_id, key)
          ON d.account_id = l.account_id AND d.key = l.key`;
      for (const r of rows) this.holders.set(`${r.account_id}\u0000${r.key}`, r.message_id);
    }
  }

  mark(): number {
    return this.remembered.length;
  }
  rollback(mark: number): void {
    this.remembered.length = mark;
  }

  async apply(tx: Tx): Promise<void> {
    const remembered = new Set(this.remembered);
    const keep: DedupClaim[] = [];
    const giveBack: DedupClaim[] = [];
    for (const [id, claim] of this.takenForTick) (remembered.has(id) ? keep : giveBack).push(claim);
    // Taken ahead but not stored (its publish failed): the key is free again.
    if (giveBack.length > 0)
      await tx`
        DELETE FROM dedup_keys d USING unnest(${giveBack.map((c) => c.accountId)}::text[], ${giveBack.map((c) => c.key)}::text[],
          ${giveBack.map((c) => c.messageId)}::text[]) AS g(account_id, key, message_id)
        WHERE d.account_id = g.account_id AND d.key = g.key AND d.message_id = g.message_id`;
    if (keep.length > 0)
      await tx`
        INSERT INTO dedup_keys (account_id, key, message_id, expires_at)
        SELECT * FROM unnest(${keep.map((c) => c.accountId)}::text[], ${keep.map((c) => c.key)}::text[],
                             ${keep.map((c) => c.messageId)}::text[], ${keep.map((c) => c.expiresAt)}::bigint[])
        ON CONFLICT (account_id, key) DO NOTHING`;
    for (const accountId of this.deletedAccounts) await tx`DELETE FROM dedup_keys WHERE account_id = ${accountId}`;
    this.applied = { remembered: this.remembered, deleted: this.deletedAccounts };
    this.remembered = [];
    this.deletedAccounts = [];
  }

  finish(): void {
    this.holders.clear();
    this.takenForTick.clear();
    this.applied = { remembered: [], deleted: [] };
  }
}
