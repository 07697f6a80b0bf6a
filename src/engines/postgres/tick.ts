import { unavailable } from "../../core/errors.ts";
import { runFollowUps, type CommitCounts, type Transactor, type WriteOptions } from "../../store/transactor.ts";
import type { TickSql, TickTransaction } from "./tick-sql.ts";
import type { FollowUp, TickPart, TickScope } from "./tick-scope.ts";

export type { TickSql } from "./tick-sql.ts";
export { TickScope, type TickPart } from "./tick-scope.ts";

/** Wall-clock pause before the tick that settles what a failed one left, when no write comes sooner. */
const FOLLOW_UP_MS = 500;

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The PostgreSQL engine's group commit. The writes requested in one tick run one after the other,
 * synchronously, inside one PostgreSQL transaction held by the writer thread: a store's reads are
 * queries in that transaction (the thread waits for their answers), its writes statements queued
 * in it. Each write is a savepoint; one that throws is undone alone. Then the transaction commits
 * without blocking; writes requested meanwhile form the next tick.
 */
export class PostgresTicks implements Transactor {
  private pending: PendingWrite[] = [];
  /** How many of `pending` are early writes (at its start). */
  private early = 0;
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  private inFlightWrites = 0;
  private readonly committedObservers: Array<() => void> = [];
  private followUpTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  readonly counts: CommitCounts = { commits: 0, failedCommits: 0, writes: 0 };

  constructor(
    private readonly scope: TickScope,
    /** The stores taking part in every tick, in the order their in-memory changes are written. */
    private readonly parts: readonly TickPart[],
    /** Runs inside the tick's transaction after its writes (notifications go out with the commit). */
    private readonly beforeCommit: (tx: TickSql) => void,
  ) {}

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

  run<T>(write: () => T, { early = false }: WriteOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const item = { write, resolve: resolve as (v: unknown) => void, reject };
      // Early writes (claims, outcomes: a read each) go before the others: their reads are then
      // sent with no inserts ahead of them, which go out with the commit, without blocking.
      if (early) this.pending.splice(this.early++, 0, item);
      else this.pending.push(item);
      this.schedule();
    });
  }

  afterCommit(fn: FollowUp): void {
    this.scope.afterCommit(fn);
  }

  nested<T>(fn: () => T): T {
    if (!this.scope.current) return this.runAlone(fn);
    const tx = this.scope.current;
    const outer = this.scope.followUps!;
    this.scope.followUps = [];
    const marks = this.parts.map((p) => p.mark?.() ?? 0);
    tx.begin();
    try {
      const value = fn();
      tx.keep();
      outer.push(...this.scope.followUps);
      return value;
    } catch (error) {
      tx.undo();
      this.parts.forEach((p, i) => p.rollback?.(marks[i]!));
      runFollowUps(this.scope.followUps, false);
      throw error;
    } finally {
      this.scope.followUps = outer;
    }
  }

  get pendingWrites(): number {
    return this.pending.length + this.inFlightWrites;
  }

  /** Commits what is queued; resolves once everything queued so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.inFlight || this.pending.length > 0) {
      if (this.inFlight) await this.inFlight;
      else await this.tick();
    }
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.inFlight) void this.tick();
    });
  }

  /** A write outside any tick (start-up fixtures): a transaction of its own, committed before it returns. */
  private runAlone<T>(fn: () => T): T {
    // A transaction begun ahead is this one now: the writer's connection runs one at a time.
    const tx = this.scope.takeNext();
    const followUps: FollowUp[] = [];
    this.scope.current = tx;
    let outcome: Outcome;
    try {
      outcome = this.runWrites(tx, [fn], followUps)[0]!;
      this.scope.current = null;
      if (outcome!.ok) {
        for (const part of this.parts) part.apply?.(tx);
        tx.commitNow();
      }
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      this.scope.current = null;
    }
    if (!outcome!.ok) {
      void tx.rollback();
      for (const part of this.parts) part.finish?.(false);
      runFollowUps(followUps, false);
      throw outcome!.error;
    }
    for (const part of this.parts) part.finish?.(true);
    runFollowUps(followUps, true);
    return outcome!.value as T;
  }

  /** Runs writes in the transaction, each undone alone when it throws. Returns their outcomes. */
  private runWrites(tx: TickTransaction, writes: Array<() => unknown>, followUps: FollowUp[]): Outcome[] {
    const outcomes: Outcome[] = [];
    for (const write of writes) {
      const marks = this.parts.map((p) => p.mark?.() ?? 0);
      this.scope.followUps = [];
      tx.begin();
      try {
        const value = write();
        tx.keep();
        outcomes.push({ ok: true, value });
        followUps.push(...this.scope.followUps);
      } catch (error) {
        tx.undo();
        this.parts.forEach((p, i) => p.rollback?.(marks[i]!));
        runFollowUps(this.scope.followUps, false);
        outcomes.push({ ok: false, error });
      } finally {
        this.scope.followUps = null;
      }
    }
    return outcomes;
  }

  private tick(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.early = 0;
    this.inFlightWrites = batch.length;
    const work = this.commitTick(batch).finally(() => {
      this.inFlight = null;
      this.inFlightWrites = 0;
      if (this.pending.length > 0) this.schedule();
    });
    this.inFlight = work;
    return work;
  }

  /**
   * A failed tick may have committed after all (the connection broke during COMMIT): its claims are
   * then held by no attempt until a later tick releases them. Nothing else may write on this node
   * for a long time (a publish that claimed at once is not retried), so an empty tick goes soon.
   */
  private followUpIfNeeded(): void {
    if (this.closed || this.followUpTimer || !this.parts.some((p) => p.needsFollowUp?.())) return;
    this.followUpTimer = setTimeout(() => {
      this.followUpTimer = null;
      if (!this.closed) void this.run(() => undefined).catch(() => {});
    }, FOLLOW_UP_MS);
  }

  private async commitTick(batch: PendingWrite[]): Promise<void> {
    if (batch.length === 0) return;
    const followUps: FollowUp[] = [];
    const tx = this.scope.takeNext();
    let outcomes: Outcome[] = [];
    try {
      this.scope.current = tx;
      try {
        for (const part of this.parts) part.begin?.(tx);
        outcomes = this.runWrites(
          tx,
          batch.map((b) => b.write),
          followUps,
        );
        for (const part of this.parts) part.apply?.(tx);
        this.beforeCommit(tx);
      } finally {
        this.scope.current = null;
      }
      await tx.commit();
    } catch (error) {
      // The next tick's transaction may have begun behind this one on the connection (a read sent
      // ahead): it is rolled back too, in order, and that tick begins anew.
      const ahead = this.scope.takeBegunAhead();
      const rolledBack = tx.rollback();
      await Promise.all([rolledBack, ahead?.discard()]);
      this.inFlightWrites = 0;
      for (const part of this.parts) part.finish?.(false);
      runFollowUps(followUps, false);
      const failure = unavailable(`storage unavailable: ${(error as Error)?.message ?? error}`);
      for (const item of batch) item.reject(failure);
      this.counts.failedCommits++;
      this.followUpIfNeeded();
      return;
    }
    this.counts.commits++;
    for (const outcome of outcomes) if (outcome.ok) this.counts.writes++;
    // Settled before anyone hears of it: a caller resumed by this commit (the idle probe) must not
    // count these writes as still pending.
    this.inFlightWrites = 0;
    for (const part of this.parts) part.finish?.(true);
    runFollowUps(followUps, true);
    for (const observe of this.committedObservers) observe();
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
