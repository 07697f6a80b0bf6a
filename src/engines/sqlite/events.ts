import type { Database, Statement } from "bun:sqlite";
import type { Filter } from "../../filters/filter.ts";
import { applyFilter } from "../../filters/sql.ts";
import type { EventRecord } from "../../logs/model.ts";
import { EVENT_FILTER_COLUMNS, eventOf, eventRowOf, type EventRow, type EventStorage } from "../../logs/storage.ts";
import type { WriteTx } from "../../store/transactor.ts";
import { Where } from "../../store/where.ts";
import type { SharedBodies } from "./bodies.ts";
import type { CommitPart } from "./group-commit.ts";

const COLUMNS = [
  "account_id", "time", "message_id", "state", "url", "topic_name", "queue_name", "schedule_id", "label", "flow_key",
  "caller_ip", "data", "body", "response_body", "shared_body",
] as const;
type Value = string | number | Uint8Array | null;
const WIDTH = COLUMNS.length;
/** Rows per INSERT, largest first: a tick's entries go in a few statements, each prepared once. */
const CHUNKS = [32, 8, 1] as const;

/** A stored log entry, with its position. */
type Entry = EventRecord & { seq: number };

/** A reset's deletion of an account's entries, waiting in line with the entries of its tick. */
class DeleteAccount {
  constructor(readonly accountId: string) {}
}

/**
 * The event log on SQLite; a CREATED entry shares its message's stored body. One row per message
 * transition makes it the hottest insert: the entries of a tick wait here (dropped with a write, or
 * a part of one, that fails) and go in just before the COMMIT as a few multi-row INSERTs, in the
 * order they were appended. Should SQLite refuse one, the group commit runs the tick's writes
 * again one at a time, each write's entries going in as it ends (`endWrite`, inside its savepoint),
 * so that a refused entry fails its write alone. Nothing reads the log inside a write (a reset's
 * deletion waits in line too).
 */
export class SqliteEventStore implements EventStorage, CommitPart {
  private readonly insertStmts: ReadonlyMap<number, Statement<unknown, Value[]>>;
  /**
   * The values of the entries waiting for the commit, one after the other (WIDTH each): a chunk's
   * parameters are then one slice of it, with no array per entry built and flattened again.
   */
  private pending: Array<Value | DeleteAccount> = [];
  /** A deletion waits among the pending entries (apply then looks for it). */
  private deletes = false;

  constructor(
    private readonly db: Database,
    /** A CREATED entry refers to its message's body stored once instead of copying it. */
    private readonly bodies: SharedBodies,
    /** True inside a write of the group commit: entries then wait for the commit (without one, none wait). */
    private readonly inWrite: () => boolean = () => false,
  ) {
    const row = `(${COLUMNS.map(() => "?").join(", ")})`;
    const insertOf = (n: number) => `INSERT INTO events (${COLUMNS.join(", ")}) VALUES ${Array(n).fill(row).join(", ")}`;
    this.insertStmts = new Map(CHUNKS.map((n) => [n, db.prepare<unknown, Value[]>(insertOf(n))]));
  }

  async append(_tx: WriteTx, e: EventRecord): Promise<void> {
    const shared = e.state === "CREATED" && e.body ? this.bodies.sharedBy(e.messageId, e.body) : null;
    const r = eventRowOf(e);
    // What the table's NOT NULL columns would refuse fails this write now, not the whole tick later.
    // (SQLite stores NaN as NULL.)
    const missing = r.account_id == null || r.message_id == null || r.state == null || r.url == null;
    if (missing || r.time == null || Number.isNaN(r.time))
      throw new Error("NOT NULL constraint failed: a log entry needs its account, time, message, state and url");
    const body = shared === null ? r.body : null;
    const at = this.pending.length;
    this.pending.push(
      r.account_id, r.time, r.message_id, r.state, r.url, r.topic_name, r.queue_name, r.schedule_id, r.label,
      r.flow_key, r.caller_ip, r.data, body, r.response_body, shared,
    );
    if (!this.inWrite()) this.insert(this.pending.splice(at, WIDTH), 0, WIDTH);
  }

  mark(): number {
    return this.pending.length;
  }
  rollback(mark: number): void {
    this.pending.length = mark;
  }
  discard(): void {
    this.pending = [];
    this.deletes = false;
  }
  /** The entries of the write that ended go in within its savepoint: a refused one fails that write alone (see above). */
  endWrite(): void {
    this.apply();
  }
  apply(): void {
    const values = this.pending;
    const deletes = this.deletes;
    this.pending = [];
    this.deletes = false;
    if (!deletes) return this.insert(values, 0, values.length);
    // An entry starts with its account id (a string); a deletion is one item of its own.
    let from = 0;
    for (let i = 0; i < values.length; ) {
      const item = values[i];
      if (!(item instanceof DeleteAccount)) {
        i += WIDTH;
        continue;
      }
      this.insert(values, from, i);
      this.deleteNow(item.accountId);
      from = ++i;
    }
    this.insert(values, from, values.length);
  }

  /** Inserts the entries whose values are `values[from..to)` (no deletion among them: apply cuts there). */
  private insert(values: Array<Value | DeleteAccount>, from: number, to: number): void {
    let i = from;
    for (const n of CHUNKS) {
      const stmt = this.insertStmts.get(n)!;
      for (const size = n * WIDTH; to - i >= size; i += size) stmt.run(...(values.slice(i, i + size) as Value[]));
    }
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  async list(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Array<Entry>> {
    return [...this.rows(accountId, f, beforeSeq, limit)];
  }

  /** As `list`, but rows are read as they are taken (a page stops at its byte budget). */
  async newest(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Promise<Iterable<Entry>> {
    return this.rows(accountId, f, beforeSeq, limit);
  }

  private *rows(accountId: string, f: Filter, beforeSeq: number | null, limit: number): Generator<Entry> {
    const { sql, params } = applyFilter(new Where("account_id", accountId), f, EVENT_FILTER_COLUMNS)
      .add("seq", "<", beforeSeq ?? undefined)
      .select("events", "seq DESC", limit);
    for (const r of this.db.query<EventRow, Record<string, string | number>>(sql).iterate(params)) {
      if (r.shared_body != null) r.body = this.bodies.read(r.shared_body);
      yield eventOf(r);
    }
  }

  /**
   * Drops entries older than `beforeMs` for one account, a bounded batch at a time, oldest first.
   * Entries are appended in time order, so when the oldest one is recent enough there is nothing
   * to do: the check reads one index entry instead of walking a large log for nothing.
   */
  async prune(accountId: string, beforeMs: number, batch = 5000): Promise<number> {
    const oldest = this.db
      .query<{ time: number }, [string]>("SELECT time FROM events WHERE account_id = ? ORDER BY seq LIMIT 1")
      .get(accountId);
    if (!oldest || oldest.time >= beforeMs) return 0;
    const last = this.db
      .query<{ seq: number }, [string, number, number]>(
        "SELECT MAX(seq) AS seq FROM (SELECT seq FROM events WHERE account_id = ? AND time < ? ORDER BY seq LIMIT ?)",
      )
      .get(accountId, beforeMs, batch)?.seq;
    if (last == null) return 0;
    const batchOf = "account_id = $account AND time < $before AND seq <= $last";
    return this.db.transaction(() => {
      this.releaseBodies(batchOf, { account: accountId, before: beforeMs, last });
      return this.db.query(`DELETE FROM events WHERE ${batchOf}`).run({ account: accountId, before: beforeMs, last }).changes;
    })();
  }

  /** Inside a write, in line with the entries appended before and after it. */
  async deleteAccount(_tx: WriteTx, accountId: string): Promise<void> {
    if (!this.inWrite()) return this.deleteNow(accountId);
    this.pending.push(new DeleteAccount(accountId));
    this.deletes = true;
  }

  private deleteNow(accountId: string): void {
    this.releaseBodies("account_id = $account", { account: accountId });
    this.db.query("DELETE FROM events WHERE account_id = ?").run(accountId);
  }

  /**
   * Before the entries matching `where` go: the bodies they hold (bodies.ts) are dropped when
   * their message is gone too; a message still waiting becomes its body's last holder.
   */
  private releaseBodies(where: string, params: Record<string, string | number>): void {
    this.db
      .query(`UPDATE messages SET body_alone = 1 WHERE id IN (SELECT message_id FROM events WHERE ${where} AND shared_body IS NOT NULL)`)
      .run(params);
    this.db
      .query(
        `DELETE FROM message_bodies WHERE body_id IN (
           SELECT e.shared_body FROM events e WHERE ${where} AND e.shared_body IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = e.message_id))`,
      )
      .run(params);
  }
}
