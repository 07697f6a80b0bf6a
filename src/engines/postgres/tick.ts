import type { SQL } from "bun";
import { unavailable } from "../../core/errors.ts";
import { isStorageUnavailable } from "../../store/errors.ts";
import { runFollowUps, type CommitCounts, type Transactor, type Write, type WriteTx } from "../../store/transactor.ts";
import { lostLockConflict } from "./pipeline.ts";
import { mayRunAgain, type Outcome, type PendingWrite } from "./tick-pending.ts";
import { TickTransaction } from "./tick-tx.ts";
import { PgWrite, sqlIn, type TickPart, type TxSql } from "./tick-write.ts";

export { sqlOf, writeOf, PgWrite, type TickPart, type TxSql } from "./tick-write.ts";

/** Wall-clock pause before the tick that settles what a failed one left, when no write comes sooner. */
const FOLLOW_UP_MS = 500;

export interface PostgresTicksOptions {
  /** The connections the ticks take theirs from (one each while it runs). */
  pool: SQL;
  /** Ticks in flight at once (their writes run side by side, each tick's one after the other). */
  maxInFlight: number;
  /** The stores taking part in every tick, in the order their in-memory changes are written. */
  parts: readonly TickPart[];
  /** Runs inside each tick's transaction after its writes (notifications go out with the commit). */
  beforeCommit: (tick: TickTransaction, sql: TxSql) => void;
}

/**
 * The PostgreSQL engine's group commit. The writes requested while a tick can start run in one
 * PostgreSQL transaction on a connection of its own, one after the other, each in a savepoint (one
 * that throws, or whose statements PostgreSQL refuses, is undone alone); their statements go out
 * pipelined, and nothing but the write that reads waits for an answer. Up to `maxInFlight` ticks
 * run at once, so the main thread builds one while PostgreSQL runs another; a lock wait holds only
 * the tick that needs the row.
 */
export class PostgresTicks implements Transactor {
  private pending: PendingWrite[] = [];
  /**
   * Writes that lost a lock conflict, to run again each in a tick of its own: the row one waits
   * for may still be held, and a tick waits as long as its slowest write (and, when a statement
   * of the tick's own lost, which write made it wait is not known).
   */
  private retrying: PendingWrite[] = [];
  /** Ticks of `retrying` writes in flight: they leave one tick for new writes (see `startReady`). */
  private retryTicks = 0;
  /** Whether the last tick started ran a write again (with one tick at a time, they take turns). */
  private lastStartedRetry = false;
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** A tick that must run alone is in flight (see `canStart`). */
  private alone = false;
  private inFlightWrites = 0;
  private readonly committedObservers: Array<() => void> = [];
  private followUpTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  readonly counts: CommitCounts = { commits: 0, failedCommits: 0, writes: 0, refusedWrites: 0, retriedWrites: 0 };

  constructor(private readonly o: PostgresTicksOptions) {}

  /** No tick starts after this (the engine closes its connections next). */
  close(): void {
    this.closed = true;
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    this.followUpTimer = null;
  }

  /** Called after every committed tick. */
  onCommitted(fn: () => void): void {
    this.committedObservers.push(fn);
  }

  run<T>(write: Write<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, conflicts: 0, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Counts, as one more, what a failed tick left to settle: until a tick has, claims may stand with no attempt. */
  get pendingWrites(): number {
    const settling = this.o.parts.some((p) => p.needsFollowUp?.()) ? 1 : 0;
    return this.pending.length + this.retrying.length + this.inFlightWrites + settling;
  }

  /** Commits what is queued; resolves once everything queued so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight.size > 0 || this.pending.length > 0 || this.retrying.length > 0) {
      if (!this.startReady()) await Promise.race(this.inFlight);
    }
  }

  /**
   * Starts ticks of the writes that wait, each one running again first and alone, but in at most
   * all ticks but one while new writes wait (a burst of them, each waiting for a held row, would
   * keep every new write out for as long; with one tick, the two take turns); false when none started.
   */
  private startReady(): boolean {
    let started = false;
    const retrySlots = () =>
      this.pending.length === 0 ? Infinity : this.o.maxInFlight > 1 ? this.o.maxInFlight - 1 : this.lastStartedRetry ? 0 : 1;
    while (this.retrying.length > 0 && this.canStart() && this.retryTicks < retrySlots()) {
      this.startTick([this.retrying.shift()!], true);
      started = true;
    }
    if (this.pending.length > 0 && this.canStart()) {
      const batch = this.pending;
      this.pending = [];
      this.startTick(batch);
      started = true;
    }
    return started;
  }

  /**
   * Whether a tick may start now. After a failed tick, the next one settles what it left (its
   * claims committed without this node knowing, released again) from what this node holds now:
   * it runs alone, or a claim of another tick in flight could be taken for one of those.
   */
  private canStart(): boolean {
    if (this.inFlight.size === 0) return true;
    if (this.alone || this.inFlight.size >= this.o.maxInFlight) return false;
    return !this.o.parts.some((p) => p.needsFollowUp?.());
  }

  /** Runs `fn` inside a savepoint of `write`: rolled back alone when it throws. */
  async savepoint<T>(write: PgWrite, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    const outer = write.followUps;
    write.followUps = [];
    const marks = this.marks(write.tick);
    write.tick.begin();
    try {
      const value = await fn(write);
      write.tick.keep();
      outer.push(...write.followUps);
      return value;
    } catch (error) {
      write.tick.undo();
      this.rollbackParts(write.tick, marks);
      runFollowUps(write.followUps, false);
      throw error;
    } finally {
      write.followUps = outer;
    }
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    // Every write requested in this turn of the event loop joins the tick.
    setImmediate(() => {
      this.scheduled = false;
      this.startReady();
    });
  }

  private startTick(batch: PendingWrite[], retry = false): void {
    this.inFlightWrites += batch.length;
    if (retry) this.retryTicks++;
    this.lastStartedRetry = retry;
    const alone = this.o.parts.some((p) => p.needsFollowUp?.());
    if (alone) this.alone = true;
    const work: Promise<void> = this.commitTick(batch).finally(() => {
      this.inFlight.delete(work);
      if (retry) this.retryTicks--;
      if (alone) this.alone = false;
      if (this.pending.length > 0 || this.retrying.length > 0) this.schedule();
    });
    this.inFlight.add(work);
  }

  private marks(tick: TickTransaction): number[] {
    return this.o.parts.map((p) => p.mark?.(tick) ?? 0);
  }

  private rollbackParts(tick: TickTransaction, marks: number[]): void {
    this.o.parts.forEach((p, i) => p.rollback?.(tick, marks[i]!));
  }

  /** Runs the writes in the tick's transaction, each undone alone when it throws. */
  private async runWrites(tick: TickTransaction, batch: PendingWrite[]): Promise<{ outcomes: Outcome[]; writes: PgWrite[] }> {
    const outcomes: Outcome[] = [];
    const writes: PgWrite[] = [];
    for (const [n, item] of batch.entries()) {
      const marks = this.marks(tick);
      const write = new PgWrite(this, tick, n);
      writes.push(write);
      tick.beginWrite(n);
      let outcome: Outcome;
      try {
        outcome = { ok: true, value: await item.write(write) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      if (outcome.ok && tick.settlesAlone) for (const part of this.o.parts) part.endWrite?.(tick, n, write.sql);
      // A statement of the write PostgreSQL refused once it ended fails it too.
      const refused = await tick.endWrite(outcome.ok);
      if (refused) outcome = { ok: false, error: refused };
      if (!outcome.ok) {
        this.rollbackParts(tick, marks);
        runFollowUps(write.followUps, false);
        write.followUps = [];
      }
      outcomes.push(outcome);
    }
    return { outcomes, writes };
  }

  /**
   * A failed tick may have committed after all (the connection broke during COMMIT): its claims
   * are then held by no attempt until a later tick releases them. Nothing else may write on this
   * node for a long time (a publish that claimed at once is not retried), so an empty tick goes soon.
   */
  private followUpIfNeeded(): void {
    if (this.closed || this.followUpTimer || !this.o.parts.some((p) => p.needsFollowUp?.())) return;
    this.followUpTimer = setTimeout(() => {
      this.followUpTimer = null;
      if (!this.closed) void this.run(async () => undefined).catch(() => {});
    }, FOLLOW_UP_MS);
  }

  private async commitTick(batch: PendingWrite[]): Promise<void> {
    let conn: Awaited<ReturnType<SQL["reserve"]>> | null = null;
    let tick: TickTransaction | null = null;
    let ran: { outcomes: Outcome[]; writes: PgWrite[] } = { outcomes: [], writes: [] };
    try {
      conn = await this.o.pool.reserve();
      const flushEnded = () => {
        for (const part of this.o.parts) part.flushEnded?.(opened, sql);
      };
      const opened: TickTransaction = new TickTransaction(conn, flushEnded);
      const sql = sqlIn(opened);
      tick = opened;
      for (const part of this.o.parts) part.begin?.(tick, sql);
      ran = await this.runWrites(tick, batch);
      // Writes PostgreSQL refused after they ended leave nothing for the commit either.
      for (const n of tick.failedWrites.keys()) for (const part of this.o.parts) part.drop?.(tick, n);
      for (const part of this.o.parts) await part.apply?.(tick, sql);
      this.o.beforeCommit(tick, sql);
      await tick.commit();
    } catch (error) {
      if (tick) await tick.rollback();
      conn?.release();
      this.failTick(tick, batch, ran.writes, error);
      return;
    }
    conn.release();
    // Writes that ended well but whose statements PostgreSQL refused later: undone alone.
    for (const [n, error] of tick.failedWrites) {
      for (const part of this.o.parts) part.drop?.(tick, n);
      runFollowUps(ran.writes[n]!.followUps, false);
      ran.writes[n]!.followUps = [];
      ran.outcomes[n] = { ok: false, error };
    }
    this.counts.commits++;
    // Settled before anyone hears of it: a caller resumed by this commit (the idle probe) must not
    // count these writes as still pending.
    this.inFlightWrites -= batch.length;
    for (const part of this.o.parts) part.finish?.(tick, true);
    for (const write of ran.writes) runFollowUps(write.followUps, true);
    for (const observe of this.committedObservers) observe();
    const again: PendingWrite[] = [];
    batch.forEach((item, i) => {
      const outcome = ran.outcomes[i]!;
      if (outcome.ok) {
        this.counts.writes++;
        item.resolve(outcome.value);
      } else if (mayRunAgain(item, outcome.error)) again.push(item);
      else {
        if (isStorageUnavailable(outcome.error)) this.counts.refusedWrites++;
        item.reject(outcome.error);
      }
    });
    this.runAgain(again);
  }

  /** Writes that lost a lock conflict run again, each in a tick of its own (see `retrying`). */
  private runAgain(items: PendingWrite[]): void {
    if (items.length === 0) return;
    for (const item of items) item.conflicts++;
    this.counts.retriedWrites += items.length;
    this.retrying.push(...items);
    this.schedule();
  }

  private failTick(tick: TickTransaction | null, batch: PendingWrite[], writes: PgWrite[], error: unknown): void {
    this.inFlightWrites -= batch.length;
    // Only a lost lock conflict is known to leave nothing committed for sure (PostgreSQL ended the
    // statement, the tick rolled back); anything else is settled as if the COMMIT may have gone through.
    const uncertain = !lostLockConflict(error);
    if (tick) for (const part of this.o.parts) part.finish?.(tick, false, uncertain);
    for (const write of writes) runFollowUps(write.followUps, false);
    const failure = unavailable(`storage unavailable: ${(error as Error)?.message ?? error}`);
    // A lock conflict outside the writes (a queue's promotion waiting for its row) undid the whole tick.
    const again = batch.filter((item) => mayRunAgain(item, error));
    for (const item of batch) if (!again.includes(item)) item.reject(failure);
    this.counts.failedCommits++;
    this.runAgain(again);
    this.followUpIfNeeded();
  }
}
