import { fromRow } from "../../model/message-row.ts";
import { dueAgainStateSql, type MessageRecord } from "../../model/message.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { insertRowOf, messageRowOf, partOf } from "./message-rows.ts";
import { sqlOf, type TxSql } from "./tick.ts";
import { num, numOrNull } from "./values.ts";

/**
 * Whether an older message of a claimed row's flow-control key is held: its release may be in
 * flight in another tick (of this node or not) that this claim cannot see yet, and the key's
 * messages go in publish order (the gate holds this one too).
 */
const BEHIND_HELD = `(m.flow_key IS NOT NULL AND EXISTS (
  SELECT 1 FROM messages h WHERE h.account_id = m.account_id AND h.flow_key = m.flow_key
    AND h.state = 'HELD' AND h.seq < m.seq)) AS behind_held`;

/**
 * Claims up to $4 messages due at $2 in the partitions $3 this node delivers, only while node $1
 * is registered (one presumed dead takes nothing until it registered again: the leader hands back
 * what unregistered nodes hold). Each row comes back as it was when due, with the earliest
 * dispatch time of those partitions that is left (on every row, and alone when nothing was due).
 */
const CLAIM_DUE = `
  WITH c AS (
    UPDATE messages m SET state = 'ACTIVE', dispatch_at = NULL, claimed_by = $1, attempt = m.attempt + 1
    FROM (
      SELECT id, state AS prev_state, dispatch_at AS prev_at FROM messages
      WHERE dispatch_at <= $2 AND (part IS NULL OR part = ANY($3::int[]))
        AND EXISTS (SELECT 1 FROM cluster_nodes WHERE node_id = $1)
      ORDER BY dispatch_at, seq LIMIT $4 FOR UPDATE SKIP LOCKED
    ) p
    WHERE m.id = p.id
    RETURNING m.*, p.prev_state, p.prev_at, ${BEHIND_HELD}
  )
  SELECT c.*, n.next_due FROM (
    SELECT min(dispatch_at) AS next_due FROM messages
    WHERE dispatch_at IS NOT NULL AND (part IS NULL OR part = ANY($3::int[])) AND id NOT IN (SELECT id FROM c)
  ) n LEFT JOIN c ON true`;

/**
 * The rows of messages $1 still on attempts $2, locked until the tick ends (no hand-back races the
 * outcome). Found by id alone, and the node compared by the caller: a condition on claimed_by let
 * the planner read every row this node holds (thousands while deliveries lag publishes) through
 * its index.
 */
const CHECK_HELD = `
  SELECT m.id, m.claimed_by FROM messages m JOIN unnest($1::text[], $2::int[]) AS c(id, attempt)
    ON m.id = c.id AND m.attempt = c.attempt
  WHERE m.id = ANY($1::text[]) ORDER BY m.id FOR UPDATE OF m`;

/**
 * The attempts this node holds, by message: the attempt number its claim recorded in the row (an
 * outcome is recorded only while the row still carries this node and that number: a row handed
 * back to the others while this node was presumed dead no longer does), and the flow-control
 * partition of each (kept by this node until the attempt is over).
 *
 * A claim is held from the write that took it; it is forgotten when that write or its tick is
 * not committed, or once a write ending the attempt (delete, reschedule, hold) is committed.
 */
export class NodeAttempts {
  private readonly numbers = new Map<string, number>();
  private readonly parts = new Map<string, number>();

  constructor(
    private readonly node: string,
    /** The flow-control partitions this node delivers (all of them on a single node). */
    private readonly owned: () => number[],
  ) {}

  /** Claims due messages, oldest due first, as they were when due; and the earliest due time left. */
  async claimDue(
    tx: WriteTx,
    nowMs: number,
    limit: number,
  ): Promise<{ due: MessageRecord[]; nextDue: number | null; behindHeld: string[] }> {
    const rows = await sqlOf(tx).query(CLAIM_DUE, [this.node, nowMs, this.owned(), limit]);
    const nextDue = numOrNull(rows[0]?.next_due);
    const claimed = rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        // The record as it was when due (the lifecycle's `claimed` event carries that).
        m: fromRow(messageRowOf({ ...row, state: row.prev_state, dispatch_at: row.prev_at })),
        attempt: num(row.attempt),
        seq: num(row.seq),
        behindHeld: row.behind_held === true,
      }));
    // RETURNING follows no order: the claim's own (due time, then insertion) is restored here.
    claimed.sort((a, b) => a.m.dispatchAt! - b.m.dispatchAt! || a.seq - b.seq);
    for (const c of claimed) this.hold(tx, c.m.id, c.attempt, partOf(c.m));
    return { due: claimed.map((c) => c.m), nextDue, behindHeld: claimed.filter((c) => c.behindHeld).map((c) => c.m.id) };
  }

  /** Inserts a new message claimed (its first attempt) in the row itself: ACTIVE, due nowhere. */
  insertClaimed(tx: WriteTx, m: MessageRecord): void {
    const row = insertRowOf(m);
    row.state = "ACTIVE";
    row.dispatch_at = null;
    row.claimed_by = this.node;
    row.attempt = 1;
    sqlOf(tx).insert("messages", row);
    this.hold(tx, m.id, 1, null);
  }

  /** Claims a message stored earlier (its first attempt), unless this node holds it already. */
  claimStored(tx: WriteTx, id: string): void {
    if (this.numbers.has(id)) return;
    sqlOf(tx).queue(
      "UPDATE messages SET state = 'ACTIVE', dispatch_at = NULL, claimed_by = $1, attempt = 1 WHERE id = $2",
      [this.node, id],
    );
    this.hold(tx, id, 1, null);
  }

  /** Those of the messages whose attempt this node holds is still the row's (locked: no hand-back races the outcome). */
  async stillClaimed(tx: WriteTx, ids: readonly string[]): Promise<Set<string>> {
    const held = new Set<string>();
    const known = ids.filter((id) => this.numbers.has(id));
    if (known.length > 0) {
      const rows = await sqlOf(tx).query(CHECK_HELD, [known, known.map((id) => this.numbers.get(id)!)]);
      for (const r of rows) if (r.claimed_by === this.node) held.add(r.id as string);
    }
    // Handed back, cancelled elsewhere, or recorded by a commit this node was told had failed: its
    // outcome is not recorded, and its partition is no longer busy here (once this is committed:
    // an earlier write of the tick may have been what took it away).
    for (const id of ids) if (!held.has(id)) this.endOnCommit(tx, id);
    return held;
  }

  /** The write `tx` ends the attempt on `id` (if this node holds one): over once it is committed. */
  endOnCommit(tx: WriteTx, id: string): void {
    // Only that attempt: a later write of the same tick may have claimed the message again (a
    // retry due at once), and that claim's attempt is this node's once the tick commits.
    const attempt = this.numbers.get(id);
    if (attempt === undefined) return;
    tx.afterCommit((committed) => {
      if (committed) this.forget(id, attempt);
    });
  }

  /** Partitions with an attempt of this node under way (never given to another node meanwhile). */
  busyPartitions(): Set<number> {
    return new Set(this.parts.values());
  }

  /**
   * Rows ACTIVE under this node that no attempt of it holds (claimed by a tick whose commit was
   * reported failed but went through) are due again at `nowMs`, as a dead node's are: each claim
   * is either attempted and its outcome recorded, or released. Queued in the tick's transaction.
   */
  releaseForgotten(sql: TxSql, nowMs: number): void {
    sql.queue(
      `UPDATE messages SET state = ${dueAgainStateSql()}, dispatch_at = $1, claimed_by = NULL
       WHERE claimed_by = $2 AND state = 'ACTIVE'
         AND (id, attempt) NOT IN (SELECT * FROM unnest($3::text[], $4::int[]))`,
      [nowMs, this.node, [...this.numbers.keys()], [...this.numbers.values()]],
    );
  }

  private hold(tx: WriteTx, id: string, attempt: number, part: number | null): void {
    this.numbers.set(id, attempt);
    if (part !== null) this.parts.set(id, part);
    // Not stored after all: the row is not this node's (if the tick committed anyway, the next one releases it).
    tx.afterCommit((committed) => {
      if (!committed) this.forget(id, attempt);
    });
  }

  /** Forgets the attempt on `id` if it is still `attempt` (a later claim of the message is another). */
  private forget(id: string, attempt: number): void {
    if (this.numbers.get(id) !== attempt) return;
    this.numbers.delete(id);
    this.parts.delete(id);
  }
}
