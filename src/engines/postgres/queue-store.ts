import type { SQL } from "bun";
import { dueAgainStateSql } from "../../model/message.ts";
import { queueUpdate, queueUpsert, type QueueChange, type QueueRow, type QueueStorage } from "../../queues/storage.ts";
import { postgresPlaceholder } from "../../store/patch.ts";
import type { WriteTx } from "../../store/transactor.ts";
import type { CachedTable } from "./cached-table.ts";
import type { TickPart, TxSql } from "./tick.ts";
import { TickLists } from "./tick-lists.ts";
import type { TickTransaction } from "./tick-tx.ts";
import { num } from "./values.ts";

/**
 * Queue promotions: on PostgreSQL a queued message is always stored waiting (PARKED) and the
 * queue's head goes once the tick's messages are written, in two statements: the queues are
 * locked (FOR UPDATE), then — with a snapshot taken after the lock, so another node's promotion
 * committed meanwhile is counted — the oldest parked messages go while fewer than `parallelism`
 * have started. Promotions of one queue are thereby serialised across nodes: its parallelism is
 * never exceeded, whichever node publishes or delivers.
 */
export class PgQueuePromotions implements TickPart {
  private readonly wanted = new TickLists<{ accountId: string; name: string; nowMs: number }>();

  constructor(
    /**
     * Messages became due at `earliestDue` or later: called once the promotion's answer comes,
     * inside the tick's transaction before it commits.
     */
    private readonly onDue: (tick: TickTransaction, earliestDue: number) => void,
  ) {}

  request(tx: WriteTx, accountId: string, name: string, nowMs: number): void {
    this.wanted.add(tx, { accountId, name, nowMs });
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
    const unique = [...new Map(wanted.map((w) => [`${w.accountId}\u0000${w.name}`, w])).values()];
    const accounts = unique.map((w) => w.accountId);
    const names = unique.map((w) => w.name);
    const nowMs = Math.max(...wanted.map((w) => w.nowMs));
    // A statement of its own: the promotion's snapshot is taken once the lock is held.
    tx.queue(
      `SELECT 1 FROM queues q JOIN unnest($1::text[], $2::text[]) AS w(account_id, name)
         ON q.account_id = w.account_id AND q.name = w.name
       ORDER BY q.account_id, q.name FOR UPDATE OF q`,
      [accounts, names],
    );
    const [promoted] = await tx.query(
      `WITH q AS (
        SELECT q.account_id, q.name, q.parallelism FROM queues q
        JOIN unnest($1::text[], $2::text[]) AS w(account_id, name) ON q.account_id = w.account_id AND q.name = w.name
        WHERE q.paused = 0
      ), room AS (
        SELECT q.account_id, q.name, q.parallelism - (
          SELECT count(*) FROM messages m
          WHERE m.account_id = q.account_id AND m.queue_name = q.name AND m.state <> 'PARKED'
        ) AS room FROM q
      ), heads AS (
        SELECT m.id, r.room, row_number() OVER (PARTITION BY m.account_id, m.queue_name ORDER BY m.seq) AS rn
        FROM messages m JOIN room r ON m.account_id = r.account_id AND m.queue_name = r.name
        WHERE m.state = 'PARKED' AND r.room > 0
      ), done AS (
        UPDATE messages m SET state = ${dueAgainStateSql("m")}, dispatch_at = greatest($3::bigint, m.not_before)
        FROM heads h WHERE m.id = h.id AND h.rn <= h.room
        RETURNING m.dispatch_at
      )
      SELECT min(dispatch_at) AS due FROM done`,
      [accounts, names, nowMs],
    );
    if (promoted?.due !== null && promoted?.due !== undefined) this.onDue(tick, num(promoted.due));
  }
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** Queues, kept in memory on every node; their messages' promotions go after the tick's writes (above). */
export class PgQueueStore implements QueueStorage {
  constructor(
    private readonly sql: SQL,
    readonly table: CachedTable<QueueRow & Record<string, unknown>>,
    private readonly promotions: PgQueuePromotions,
  ) {}
  private key(accountId: string, name: string) {
    return `${accountId}\u0000${name}`;
  }
  async get(tx: WriteTx | null, accountId: string, name: string): Promise<QueueRow | undefined> {
    return this.table.get(tx, this.key(accountId, name));
  }
  async hold(tx: WriteTx, accountId: string, name: string): Promise<QueueRow | undefined> {
    const where = "account_id = $1 AND name = $2";
    return (await this.table.lock(tx, where, [accountId, name], (q) => this.isQueue(q, accountId, name)))[0];
  }
  async list(accountId: string): Promise<QueueRow[]> {
    return this.table.where(null, (q) => q.account_id === accountId).sort(byName);
  }
  async count(tx: WriteTx | null, accountId: string): Promise<number> {
    return this.table.where(tx, (q) => q.account_id === accountId).length;
  }
  async upsert(
    tx: WriteTx,
    accountId: string,
    name: string,
    change: QueueChange,
    created: Required<QueueChange>,
    nowMs: number,
  ): Promise<QueueRow> {
    const { text, params } = queueUpsert(accountId, name, change, created, nowMs, postgresPlaceholder);
    return (await this.table.returning(tx, text, params))[0]!;
  }
  async update(tx: WriteTx, accountId: string, name: string, change: QueueChange, nowMs: number) {
    const statement = queueUpdate(accountId, name, change, nowMs, postgresPlaceholder);
    if (!statement) return this.hold(tx, accountId, name);
    return (await this.table.returning(tx, statement.text, statement.params))[0];
  }
  async delete(tx: WriteTx, accountId: string, name: string): Promise<boolean> {
    const text = "DELETE FROM queues WHERE account_id = $1 AND name = $2 RETURNING *";
    return (await this.table.deleting(tx, text, [accountId, name], (q) => this.isQueue(q, accountId, name))) > 0;
  }
  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    const text = "DELETE FROM queues WHERE account_id = $1 RETURNING *";
    await this.table.deleting(tx, text, [accountId], (q) => q.account_id === accountId);
  }
  private isQueue(q: QueueRow, accountId: string, name: string): boolean {
    return q.account_id === accountId && q.name === name;
  }
  /** Always waits: the promotion after the tick's writes lets it go if there is room. */
  async mustWait(tx: WriteTx, accountId: string, name: string, _parallelism: number, nowMs: number): Promise<boolean> {
    this.promotions.request(tx, accountId, name, nowMs);
    return true;
  }
  async promote(tx: WriteTx, accountId: string, name: string, _parallelism: number, nowMs: number): Promise<number> {
    this.promotions.request(tx, accountId, name, nowMs);
    return 1;
  }
  async lag(accountId: string, name: string): Promise<number> {
    const [row] = await this.sql`
      SELECT count(*) AS n FROM messages WHERE account_id = ${accountId} AND queue_name = ${name}`;
    return num(row.n);
  }
}
