import type { WriteTx } from "../../store/transactor.ts";
import type { PgRow } from "./pipeline.ts";
import type { PostgresTicks } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";

type FollowUp = (committed: boolean) => void;

/**
 * SQL inside the transaction of a write: what a PostgreSQL store's in-write methods use (through
 * `sqlOf(tx)`). Statements run in the order given; a write sees what the earlier writes of its
 * tick did.
 */
export interface TxSql {
  /** Runs the statement (after everything queued before it) and resolves with its rows. */
  query(text: string, params?: readonly unknown[]): Promise<PgRow[]>;
  /** Runs the statement with the next `query` or the commit, whichever comes first (no rows come back). */
  queue(text: string, params?: readonly unknown[]): void;
  /**
   * Inserts a row, as `queue` does; rows inserted one after another into the same table, with the
   * same columns and `suffix` (e.g. `ON CONFLICT DO NOTHING`), go as one multi-row INSERT.
   */
  insert(table: string, row: PgRow, suffix?: string): void;
  /**
   * Runs `text` for `key`, as `queue` does: `text` takes the keys as its one parameter, an array
   * (`DELETE FROM t WHERE id = ANY($1::text[])`); calls one after another with the same text go
   * as one statement with all their keys.
   */
  queueEach(text: string, key: unknown): void;
  /**
   * The SQL of write `n` of the tick, for statements a store queues on its behalf after it ended
   * (rows written just before the commit): they are undone with it, should PostgreSQL refuse it.
   */
  of(write: number): Pick<TxSql, "queue" | "insert">;
}

/**
 * What a store keeps in memory per tick besides its SQL (rows it writes just before the commit,
 * the small tables' changes): it moves with the writes of `tick` (`mark`/`rollback` around a write
 * or a nested part of one; `drop` of a write PostgreSQL refused after it ended), is written before
 * the commit (`apply`), and hears whether the tick committed (`finish`). Several ticks may be in
 * flight at once: a part keeps each tick's state apart.
 */
export interface TickPart {
  mark?(tick: TickTransaction): number;
  rollback?(tick: TickTransaction, mark: number): void;
  drop?(tick: TickTransaction, write: number): void;
  /**
   * Write `write` ended well after reading something (its statements settle now, before the next
   * write begins): what it left for the tick's end goes now, with them, so that it is undone with
   * the write should PostgreSQL refuse one of them.
   */
  endWrite?(tick: TickTransaction, write: number, sql: TxSql): void;
  /**
   * Statements are about to go out (a read, or before the commit): what the writes of the tick that
   * ended left for its end goes now, on their behalf (`sql.of(write)`), with their statements.
   */
  flushEnded?(tick: TickTransaction, sql: TxSql): void;
  /** Before the commit, after the tick's writes: may read (a set-based statement whose answer it needs). */
  apply?(tick: TickTransaction, sql: TxSql): void | Promise<void>;
  /**
   * The tick ended: committed, or not. `uncertain`: it failed in a way that may leave open whether
   * PostgreSQL committed it after all (the connection broke during COMMIT); a lost lock conflict
   * (a lock that timed out, a deadlock) leaves nothing open: the transaction was rolled back.
   */
  finish?(tick: TickTransaction, committed: boolean, uncertain?: boolean): void;
  /** At the start of every tick, before its writes: settles what a failed tick left (see needsFollowUp). */
  begin?(tick: TickTransaction, sql: TxSql): void;
  /** True while a failed tick left something only a later committed tick can settle. */
  needsFollowUp?(): boolean;
}

/** A write of a PostgreSQL tick, as its stores get it: its tick, its number in it, its SQL. */
export class PgWrite implements WriteTx {
  followUps: FollowUp[] = [];
  readonly sql: TxSql;

  constructor(
    private readonly ticks: PostgresTicks,
    readonly tick: TickTransaction,
    readonly number: number,
  ) {
    this.sql = sqlIn(tick);
  }

  afterCommit(fn: FollowUp): void {
    this.followUps.push(fn);
  }

  nested<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.ticks.savepoint(this, fn);
  }
}

/** The SQL of a PostgreSQL write; throws when given another engine's. */
export function sqlOf(tx: WriteTx): TxSql {
  if (!(tx instanceof PgWrite)) throw new Error("a PostgreSQL store was given a write of another engine");
  return tx.sql;
}

/** The tick and write number of a PostgreSQL write (what a TickPart keys its state by). */
export function writeOf(tx: WriteTx): PgWrite {
  if (!(tx instanceof PgWrite)) throw new Error("a PostgreSQL store was given a write of another engine");
  return tx;
}

/** The SQL of a tick, for what its writes and its stores' parts queue. */
export function sqlIn(tick: TickTransaction): TxSql {
  return {
    query: (text, params) => tick.query(text, params),
    queue: (text, params) => tick.queue(text, params),
    insert: (table, row, suffix) => tick.insert(table, row, suffix),
    queueEach: (text, key) => tick.queueEach(text, key),
    of: (write) => ({
      queue: (text, params) => tick.queue(text, params, write),
      insert: (table, row, suffix) => tick.insert(table, row, suffix, write),
    }),
  };
}
