import type { SQL } from "bun";
import type { WriteTx } from "../../store/transactor.ts";
import type { Waiter } from "../../workflows/model.ts";
import { waiterRowOf, type StoredWaiter } from "../../workflows/run-rows.ts";
import type { WaitStorage } from "../../workflows/storage.ts";
import { sqlOf, writeOf, type TickPart } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";
import { bytes, numOrNull } from "./values.ts";
import { waiterOfPg } from "./workflow-rows.ts";

const WAITING = "SELECT * FROM workflow_waiters WHERE account_id = $1 AND event_id = $2 ORDER BY id FOR UPDATE";
const WAITING_OF_RUN = `SELECT * FROM workflow_waiters WHERE account_id = $1 AND run_id = $2 AND event_id = $3
  ORDER BY id FOR UPDATE`;
const DUE = "SELECT * FROM workflow_waiters WHERE deadline <= $1 ORDER BY deadline, id LIMIT $2 FOR UPDATE SKIP LOCKED";
/** The oldest event kept for a run and event id, taken in one statement (locked: two takers never get the same one). */
const TAKE_KEPT = `DELETE FROM workflow_kept_events WHERE id = (
    SELECT id FROM workflow_kept_events WHERE account_id = $1 AND run_id = $2 AND event_id = $3
    ORDER BY id LIMIT 1 FOR UPDATE)
  RETURNING data`;
const DELETE_RUN = `WITH w AS (DELETE FROM workflow_waiters WHERE account_id = $1 AND run_id = $2)
  DELETE FROM workflow_kept_events WHERE account_id = $1 AND run_id = $2`;
const DELETE_ACCOUNT = `WITH w AS (DELETE FROM workflow_waiters WHERE account_id = $1)
  DELETE FROM workflow_kept_events WHERE account_id = $1`;

/**
 * Waiters and kept events on PostgreSQL: SQL in the tick's transaction (SqliteWaitStore's
 * statements). The waiters of an event are locked when read (the write takes them); due waiters
 * are claimed skipping those another node's tick holds (it is firing them). A tick part only to
 * tell the engine that waiters were stored: the other nodes hear of it with the commit, as a new
 * deadline may be theirs to fire.
 */
export class PgWaitStore implements WaitStorage, TickPart {
  /** Ticks in flight that stored waiters (the other nodes are told with their commit). */
  private readonly inserted = new WeakSet<TickTransaction>();

  constructor(private readonly sql: SQL) {}

  /** The tick stored waiters (read before its commit). */
  waitersChangedIn(tick: TickTransaction): boolean {
    return this.inserted.has(tick);
  }

  finish(tick: TickTransaction): void {
    this.inserted.delete(tick);
  }

  async insert(tx: WriteTx, w: Waiter): Promise<void> {
    sqlOf(tx).insert("workflow_waiters", waiterRowOf(w));
    this.inserted.add(writeOf(tx).tick);
  }

  async waiting(tx: WriteTx, accountId: string, eventId: string, runId?: string): Promise<StoredWaiter[]> {
    const rows =
      runId === undefined
        ? await sqlOf(tx).query(WAITING, [accountId, eventId])
        : await sqlOf(tx).query(WAITING_OF_RUN, [accountId, runId, eventId]);
    return rows.map(waiterOfPg);
  }

  async delete(tx: WriteTx, id: number): Promise<boolean> {
    return (await sqlOf(tx).query("DELETE FROM workflow_waiters WHERE id = $1 RETURNING id", [id])).length > 0;
  }

  async due(tx: WriteTx, nowMs: number, limit: number): Promise<StoredWaiter[]> {
    return (await sqlOf(tx).query(DUE, [nowMs, limit])).map(waiterOfPg);
  }

  async keep(tx: WriteTx, accountId: string, runId: string, eventId: string, data: Uint8Array, nowMs: number) {
    const row = { account_id: accountId, run_id: runId, event_id: eventId, created_at: nowMs, data };
    sqlOf(tx).insert("workflow_kept_events", row);
  }

  async takeKept(tx: WriteTx, accountId: string, runId: string, eventId: string): Promise<Uint8Array | undefined> {
    const [row] = await sqlOf(tx).query(TAKE_KEPT, [accountId, runId, eventId]);
    return row ? bytes(row.data) : undefined;
  }

  async deleteRun(tx: WriteTx, accountId: string, runId: string): Promise<void> {
    sqlOf(tx).queue(DELETE_RUN, [accountId, runId]);
  }

  async deleteAccount(tx: WriteTx, accountId: string): Promise<void> {
    sqlOf(tx).queue(DELETE_ACCOUNT, [accountId]);
  }

  async readWaiting(accountId: string, eventId: string): Promise<StoredWaiter[]> {
    const rows = await this.sql`
      SELECT * FROM workflow_waiters WHERE account_id = ${accountId} AND event_id = ${eventId} ORDER BY id`;
    return rows.map(waiterOfPg);
  }

  async ofRun(accountId: string, runId: string): Promise<StoredWaiter[]> {
    const rows = await this.sql`SELECT * FROM workflow_waiters WHERE account_id = ${accountId} AND run_id = ${runId}`;
    return rows.map(waiterOfPg);
  }

  async nextDeadline(): Promise<number | null> {
    const [row] = await this.sql`SELECT min(deadline) AS t FROM workflow_waiters`;
    return numOrNull(row?.t);
  }
}
