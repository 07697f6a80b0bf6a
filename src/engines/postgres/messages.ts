import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { MessageCensus, MessageStorage } from "../../messages/storage.ts";
import { fromRow } from "../../model/message-row.ts";
import type { MessageRecord, MessageState } from "../../model/message.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { Where } from "../../store/where.ts";
import { NodeAttempts } from "./message-claims.ts";
import { censusOf, insertRowOf, messageRowOf, queryShared } from "./message-rows.ts";
import { MessageTicks } from "./message-ticks.ts";
import { sqlOf, writeOf } from "./tick.ts";
import { num } from "./values.ts";

export { messageRowOf } from "./message-rows.ts";

/**
 * The live messages on PostgreSQL: every write is SQL in the tick's transaction, as on SQLite.
 * Claims record this node and the attempt number (see NodeAttempts), so an outcome of an attempt
 * the leader handed back (this node presumed dead) no longer matches. Part of every tick for what
 * it keeps in memory (MessageTicks).
 */
export class PgMessageStore extends MessageTicks implements MessageStorage {
  constructor(
    private readonly sql: SQL,
    node: string,
    /** The flow-control partitions this node delivers (all of them on a single node). */
    owned: () => number[],
    /** The server clock's time (what `dispatch_at` is measured in). */
    now: () => number,
  ) {
    super(new NodeAttempts(node, owned), now);
  }

  // --- writes (inside a write of the group commit) ---

  async insert(tx: WriteTx, m: MessageRecord): Promise<void> {
    sqlOf(tx).insert("messages", insertRowOf(m));
    const state = this.stateOf(tx);
    state.locked.add(m.id);
    this.noteIn(state, m.dispatchAt);
  }

  /** Claimed in its own INSERT: due nowhere (nor here: the claim pass need not look for it). */
  async insertClaimed(tx: WriteTx, m: MessageRecord): Promise<void> {
    this.attempts.insertClaimed(tx, m);
    this.stateOf(tx).locked.add(m.id);
  }

  /** Claims a message stored earlier (one `due` handed out is claimed already). */
  async claim(tx: WriteTx, id: string): Promise<void> {
    this.attempts.claimStored(tx, id);
  }

  async claimDue(tx: WriteTx, ids: readonly string[]): Promise<void> {
    for (const id of ids) this.attempts.claimStored(tx, id);
  }

  async reschedule(
    tx: WriteTx,
    id: string,
    state: MessageState,
    dispatchAt: number | null,
    retried: number,
  ): Promise<void> {
    sqlOf(tx).queue(
      "UPDATE messages SET state = $1, dispatch_at = $2, retried = $3, claimed_by = NULL WHERE id = $4",
      [state, dispatchAt, retried, id],
    );
    this.attempts.endOnCommit(tx, id);
    this.noteIn(this.stateOf(tx), dispatchAt);
  }

  async setDispatch(tx: WriteTx, id: string, state: MessageState, dispatchAt: number | null): Promise<void> {
    sqlOf(tx).queue("UPDATE messages SET state = $1, dispatch_at = $2, claimed_by = NULL WHERE id = $3", [
      state,
      dispatchAt,
      id,
    ]);
    this.attempts.endOnCommit(tx, id);
    this.noteIn(this.stateOf(tx), dispatchAt);
  }

  async delete(tx: WriteTx, id: string): Promise<boolean> {
    if (this.stateOf(tx).locked.delete(id)) {
      sqlOf(tx).queueEach("DELETE FROM messages WHERE id = ANY($1::text[])", id);
      this.attempts.endOnCommit(tx, id);
      return true;
    }
    const rows = await sqlOf(tx).query("DELETE FROM messages WHERE id = $1 RETURNING id", [id]);
    // Until this is committed a retried outcome of the attempt still matches it.
    this.attempts.endOnCommit(tx, id);
    return rows.length > 0;
  }

  /** Removes every live message of an account (test-double reset); returns their ids, oldest first. */
  async deleteAccount(tx: WriteTx, accountId: string): Promise<string[]> {
    const rows = await sqlOf(tx).query(
      "WITH d AS (DELETE FROM messages WHERE account_id = $1 RETURNING id, seq) SELECT id FROM d ORDER BY seq",
      [accountId],
    );
    const ids = rows.map((r) => r.id as string);
    for (const id of ids) this.attempts.endOnCommit(tx, id);
    this.stateOf(tx).locked.clear();
    return ids;
  }

  // --- reads inside a write (the rows are locked until the tick commits) ---

  async get(tx: WriteTx, accountId: string, id: string): Promise<MessageRecord | undefined> {
    const [row] = await sqlOf(tx).query("SELECT * FROM messages WHERE id = $1 AND account_id = $2 FOR UPDATE", [
      id,
      accountId,
    ]);
    if (!row) return undefined;
    this.stateOf(tx).locked.add(id);
    return fromRow(messageRowOf(row));
  }

  /** Claims the due messages of this node's partitions, skipping rows another transaction holds. */
  async due(tx: WriteTx, nowMs: number, limit: number): Promise<MessageRecord[]> {
    // Nothing can be due yet: no claim to wait for (most passes, while messages are claimed in their INSERT).
    if (this.nextDueKnown && (this.nextDue === null || this.nextDue > nowMs)) return [];
    const { due, behindHeld } = await this.readingNextDue(writeOf(tx).tick, () => this.attempts.claimDue(tx, nowMs, limit));
    const state = this.stateOf(tx);
    for (const m of due) state.locked.add(m.id);
    for (const id of behindHeld) state.behindHeld.add(id);
    return due;
  }

  async stillClaimed(tx: WriteTx, ids: readonly string[]): Promise<Set<string>> {
    const held = await this.attempts.stillClaimed(tx, ids);
    const { locked } = this.stateOf(tx);
    for (const id of held) locked.add(id);
    return held;
  }

  async find(
    tx: WriteTx,
    accountId: string,
    f: Filter,
    afterSeq: number | null,
    limit: number,
  ): Promise<Array<MessageRecord & { seq: number }>> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, { messageId: "id", time: "created_at" })
      .add("seq", ">", afterSeq ?? undefined)
      .select("messages", "seq", limit);
    // Locked in id order, as every write that locks several messages does: two ticks (of this node
    // or another) locking the same messages then never wait for each other in a circle.
    const locking = `SELECT * FROM messages WHERE id IN (SELECT id FROM (${sql}) page) ORDER BY id FOR UPDATE`;
    const rows = await queryShared(sqlOf(tx), locking, params);
    const { locked } = this.stateOf(tx);
    const found = rows.map((row) => {
      locked.add(row.id as string);
      return Object.assign(fromRow(messageRowOf(row)), { seq: num(row.seq) });
    });
    return found.sort((a, b) => a.seq - b.seq);
  }

  /** Nothing to recover here: the leader hands back what dead nodes held (see cluster.ts). */
  async recoverInFlight(_tx: WriteTx, _nowMs: number): Promise<number> {
    return 0;
  }

  /** The earliest dispatch time of this node's partitions, as the last claim read it (or sooner, as noted since). */
  async nextDueAt(): Promise<number | null> {
    return this.nextDue;
  }

  // --- reads outside a write ---

  async census(nowMs: number): Promise<MessageCensus> {
    const [r] = await this.sql`
      SELECT count(*) FILTER (WHERE dispatch_at <= ${nowMs}) AS due,
             count(*) FILTER (WHERE dispatch_at > ${nowMs}) AS delayed,
             count(*) FILTER (WHERE state = 'ACTIVE') AS active, count(*) AS total
      FROM messages`;
    return censusOf(r);
  }

  async accountCensus(accountId: string, nowMs: number): Promise<MessageCensus> {
    const [r] = await this.sql`
      SELECT count(*) FILTER (WHERE dispatch_at <= ${nowMs}) AS due,
             count(*) FILTER (WHERE dispatch_at > ${nowMs}) AS delayed,
             count(*) FILTER (WHERE state = 'ACTIVE') AS active, count(*) AS total
      FROM messages WHERE account_id = ${accountId}`;
    return censusOf(r);
  }

  async read(accountId: string, id: string): Promise<MessageRecord | undefined> {
    const [row] = await this.sql`SELECT * FROM messages WHERE id = ${id} AND account_id = ${accountId}`;
    return row ? fromRow(messageRowOf(row)) : undefined;
  }
}
