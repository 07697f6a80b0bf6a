import { TickTransaction, type TickSql } from "./tick-sql.ts";
import type { StatementRunner } from "./writer-protocol.ts";

export type FollowUp = (committed: boolean) => void;

/**
 * What a store does around a tick besides its SQL: state it keeps in memory (the small tables
 * every node caches) moves with the writes (`mark`/`rollback`) and is written before the commit
 * (`apply`); `finish` hears whether the tick committed.
 */
export interface TickPart {
  mark?(): number;
  rollback?(mark: number): void;
  /** Queues the statements of what the tick changed in memory, just before the commit. */
  apply?(tx: TickSql): void;
  /** After the commit (true) or the rollback (false). */
  finish?(committed: boolean): void;
  /** At the start of every tick, before its writes: settles what a failed tick left (see needsFollowUp). */
  begin?(tx: TickSql): void;
  /** True while a failed tick left something only a later committed tick can settle. */
  needsFollowUp?(): boolean;
}

/**
 * The write under way, as the stores see it: built first, handed to every store and to the
 * ticks (which set it while a write runs).
 */
export class TickScope {
  /** The transaction whose writes are running now (null between ticks). */
  current: TickTransaction | null = null;
  /** Follow-ups registered by the write that is running now. */
  followUps: FollowUp[] | null = null;
  /** The transaction of the next tick, begun ahead of it by a read sent early (see `upcoming`). */
  private next: TickTransaction | null = null;

  constructor(private readonly writer: StatementRunner) {}

  /**
   * The transaction the next tick to run will use: a read sent in it now (`ahead`) goes out
   * while the tick under way commits, and is answered by the time the next one needs it.
   */
  upcoming(): TickTransaction {
    return (this.next ??= new TickTransaction(this.writer));
  }

  /** The transaction for the tick (or lone write) starting now: the one begun ahead, or a new one. */
  takeNext(): TickTransaction {
    const tx = this.next ?? new TickTransaction(this.writer);
    this.next = null;
    return tx;
  }

  /** The next tick's transaction if one was begun ahead, taken away (the tick before it failed). */
  takeBegunAhead(): TickTransaction | null {
    const tx = this.next;
    this.next = null;
    return tx;
  }

  /** The tick's SQL; throws outside a write (a store's write method called outside the group commit). */
  get tx(): TickSql {
    if (!this.current) throw new Error("a PostgreSQL store was written outside a write of the group commit");
    return this.current;
  }

  /** Inside a write: `fn(true)` after the commit that stores it, `fn(false)` when it is not stored. Outside: at once. */
  afterCommit(fn: FollowUp): void {
    if (this.followUps) this.followUps.push(fn);
    else fn(true);
  }
}
