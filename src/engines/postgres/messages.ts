import type { SQL } from "bun";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { MessageCensus, MessageStorage } from "../../messages/storage.ts";
import { fromRow } from "../../model/message-row.ts";
import type { MessageRecord, MessageState } from "../../model/message.ts";
import { Where } from "../../store/where.ts";
import { NodeAttempts } from "./message-claims.ts";
import { censusOf, insertRowOf, messageRowOf, querySharedNow } from "./message-rows.ts";
import type { TickPart, TickScope } from "./tick.ts";
import type { QueuedRow, TickSql } from "./tick-sql.ts";
import { num } from "./values.ts";

export { messageRowOf } from "./message-rows.ts";

/**
 * The live messages on PostgreSQL: every write is SQL in the tick's transaction, as on SQLite.
 * Claims record this node and the attempt number (see NodeAttempts), so an outcome of an attempt
 * the leader handed back (this node presumed dead) no longer matches. Part of every tick for what
 * it keeps in memory: the earliest dispatch time the tick wrote (the other nodes are told before
 * the commit) and the reconcile after a failed tick.
 */
export class PgMessageStore implements MessageStorage, TickPart {
  private readonly attempts: NodeAttempts;
  /** The earliest dispatch time the tick under way wrote (the other nodes are told). */
  private tickDue: number | null = null;
  /**
   * The message the tick stored last, with the tick's earliest dispatch time before it and the
   * earliest one written since: claimed at once (publish), its time is not told to the others.
   */
  private lastStored: { id: string; row: QueuedRow; before: number | null; next: number | null; since: number | null } | null =
    null;
  private nextDue: number | null = null;
  /**
   * `nextDue` is a lower bound of every due time in this node's partitions: the last claim read
   * it, and every write or wake-up that makes a message due since noted it. Until then (and after
   * a failed tick) it is unknown, and a claim pass asks PostgreSQL.
   */
  private nextDueKnown = false;
  /**
   * A tick failed: whether it committed is unknown when the connection broke during COMMIT, so
   * rows it claimed may be ACTIVE under this node with no attempt behind them. The next tick
   * reconciles (`releaseForgotten`); "running" until that tick's commit is confirmed.
   */
  private reconcile: "none" | "needed" | "running" = "none";
  /** When the tick being committed released forgotten claims: due then, on this node too. */
  private releasedAt: number | null = null;
  /**
   * Rows this tick's transaction holds: inserted by it, or read by it with a lock. Nobody else can
   * delete them before the commit, so deleting one needs no answer (one statement fewer to wait
   * for per delivered message). Emptied when a write is undone (a row it inserted is gone again).
   */
  private readonly locked = new Set<string>();

  constructor(
    private readonly sql: SQL,
    private readonly scope: TickScope,
    node: string,
    /** The flow-control partitions this node delivers (all of them on a single node). */
    owned: () => number[],
    /** The server clock's time (what `dispatch_at` is measured in). */
    private readonly now: () => number,
  ) {
    this.attempts = new NodeAttempts(scope, node, owned);
  }

  // --- writes (inside a write of the group commit) ---

  insert(m: MessageRecord): void {
    const row = this.scope.tx.insert("messages", insertRowOf(m));
    this.locked.add(m.id);
    const before = this.tickDue;
    const next = this.nextDue;
    this.noteWritten(m.dispatchAt);
    this.lastStored = { id: m.id, row, before, next, since: null };
  }

  /** The claim goes into the queued INSERT itself (see `claim`). */
  insertClaimed(m: MessageRecord): void {
    this.insert(m);
    this.claim(m.id);
  }

  /** Claims a message this tick stored (one `due` handed out is claimed already). */
  claim(id: string): void {
    const stored = this.lastStored?.id === id ? this.lastStored : null;
    this.attempts.claimStored(id, stored?.row ?? null);
    if (!stored) return;
    // Claimed in its own INSERT: due nowhere (nor here: the claim pass need not look for it).
    const { before, next, since } = stored;
    this.tickDue = before === null ? since : since === null ? before : Math.min(before, since);
    this.nextDue = next === null ? since : since === null ? next : Math.min(next, since);
    this.lastStored = null;
  }

  claimDue(ids: readonly string[]): void {
    for (const id of ids) this.claim(id);
  }

  reschedule(id: string, state: MessageState, dispatchAt: number | null, retried: number): void {
    this.scope.tx.queue(
      "UPDATE messages SET state = $1, dispatch_at = $2, retried = $3, claimed_by = NULL WHERE id = $4",
      [state, dispatchAt, retried, id],
    );
    this.attempts.endOnCommit(id);
    this.noteWritten(dispatchAt);
  }

  setDispatch(id: string, state: MessageState, dispatchAt: number | null): void {
    this.scope.tx.queue("UPDATE messages SET state = $1, dispatch_at = $2, claimed_by = NULL WHERE id = $3", [
      state,
      dispatchAt,
      id,
    ]);
    this.attempts.endOnCommit(id);
    this.noteWritten(dispatchAt);
  }

  delete(id: string): boolean {
    if (this.locked.delete(id)) {
      this.scope.tx.queueEach("DELETE FROM messages WHERE id = ANY($1::text[])", id);
      this.attempts.endOnCommit(id);
      return true;
    }
    const rows = this.scope.tx.query("DELETE FROM messages WHERE id = $1 RETURNING id", [id]);
    // Until this is committed a retried outcome of the attempt still matches it.
    this.attempts.endOnCommit(id);
    return rows.length > 0;
  }

  /** Removes every live message of an account (test-double reset); returns their ids, oldest first. */
  deleteAccount(accountId: string): string[] {
    const rows = this.scope.tx.query(
      "WITH d AS (DELETE FROM messages WHERE account_id = $1 RETURNING id, seq) SELECT id FROM d ORDER BY seq",
      [accountId],
    );
    const ids = rows.map((r) => r.id as string);
    for (const id of ids) this.attempts.endOnCommit(id);
    this.locked.clear();
    return ids;
  }

  // --- reads inside a write (the rows are locked until the tick commits) ---

  get(accountId: string, id: string): MessageRecord | undefined {
    const [row] = this.scope.tx.query("SELECT * FROM messages WHERE id = $1 AND account_id = $2 FOR UPDATE", [
      id,
      accountId,
    ]);
    if (!row) return undefined;
    this.locked.add(id);
    return fromRow(messageRowOf(row));
  }

  /** Claims the due messages of this node's partitions, skipping rows another transaction holds. */
  due(nowMs: number, limit: number): MessageRecord[] {
    // Nothing can be due yet: no claim to wait for (most passes, while messages are claimed in their INSERT).
    if (this.nextDueKnown && (this.nextDue === null || this.nextDue > nowMs)) return [];
    const { due, nextDue } = this.attempts.claimDue(nowMs, limit);
    for (const m of due) this.locked.add(m.id);
    this.nextDue = nextDue;
    this.nextDueKnown = true;
    return due;
  }

  checkClaimsAhead(ids: readonly string[]): void {
    this.attempts.checkAhead(ids);
  }

  stillClaimed(ids: readonly string[]): Set<string> {
    const held = this.attempts.stillClaimed(ids);
    for (const id of held) this.locked.add(id);
    return held;
  }

  find(accountId: string, f: Filter, afterSeq: number | null, limit: number): Array<MessageRecord & { seq: number }> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, { messageId: "id", time: "created_at" })
      .add("seq", ">", afterSeq ?? undefined)
      .select("messages", "seq", limit);
    return querySharedNow(this.scope.tx, `${sql} FOR UPDATE`, params).map((row) => {
      this.locked.add(row.id as string);
      return Object.assign(fromRow(messageRowOf(row)), { seq: num(row.seq) });
    });
  }

  /** Nothing to recover here: the leader hands back what dead nodes held (see cluster.ts). */
  recoverInFlight(_nowMs: number): number {
    return 0;
  }

  /** The earliest dispatch time of this node's partitions, as the last claim read it (or sooner, as noted since). */
  nextDueAt(): number | null {
    return this.nextDue;
  }

  /** Partitions with an attempt of this node under way (never given to another node meanwhile). */
  busyPartitions(): Set<number> {
    return this.attempts.busyPartitions();
  }

  /** The earliest dispatch time the tick being committed wrote, once (sent to the other nodes with it). */
  takeTickDue(): number | null {
    const due = this.tickDue;
    this.tickDue = null;
    return due;
  }

  /** A message became due at `atMs` (written here, or by another node's notification). */
  noteDue(atMs: number | null | undefined): void {
    if (atMs === null || atMs === undefined) return;
    if (this.nextDue === null || atMs < this.nextDue) this.nextDue = atMs;
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

  // --- the tick ---

  /** Settles what a failed tick may have left, before the writes of this one. */
  begin(tx: TickSql): void {
    this.tickDue = null;
    this.lastStored = null;
    this.locked.clear();
    if (this.reconcile === "none") return;
    const nowMs = this.now();
    const released = this.attempts.releaseForgotten(tx, nowMs);
    this.reconcile = "running";
    if (released) {
      this.noteWritten(nowMs);
      this.releasedAt = nowMs;
    }
  }

  /** Where the tick's earliest dispatch time stood (-1: none yet), for a write that is undone. */
  mark(): number {
    return this.tickDue ?? -1;
  }

  rollback(mark: number): void {
    this.tickDue = mark < 0 ? null : mark;
    this.lastStored = null;
    // An undone claim's rows are due again, earlier than the claim read.
    this.nextDueKnown = false;
    this.locked.clear();
  }

  finish(committed: boolean): void {
    this.tickDue = null;
    this.lastStored = null;
    if (committed) {
      if (this.reconcile === "running") this.reconcile = "none";
      return;
    }
    // Claims of a tick that was rolled back are forgotten (NodeAttempts); if it committed after all
    // (the connection broke during COMMIT), the next tick releases them.
    this.reconcile = "needed";
    this.nextDueKnown = false;
    this.releasedAt = null;
  }

  needsFollowUp(): boolean {
    return this.reconcile !== "none";
  }

  /** When the committed tick released forgotten claims (the other nodes hear it; this one must too). */
  takeReleased(): number | null {
    const at = this.releasedAt;
    this.releasedAt = null;
    return at;
  }

  /**
   * The tick wrote a dispatch time (here, or in the set-based statements other stores run before
   * the commit: promotions, releases): due here then, and the other nodes are told with the commit.
   */
  noteWritten(atMs: number | null): void {
    this.noteDue(atMs);
    if (atMs === null) return;
    if (this.tickDue === null || atMs < this.tickDue) this.tickDue = atMs;
    const stored = this.lastStored;
    if (stored && (stored.since === null || atMs < stored.since)) stored.since = atMs;
  }
}
