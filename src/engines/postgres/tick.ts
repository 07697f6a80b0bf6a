import type { SQL } from "bun";
import { unavailable } from "../../core/errors.ts";
import { runFollowUps, type Read, type Transactor } from "../../store/group-commit.ts";

/** A connection inside the tick's transaction. */
export type Tx = SQL;

/**
 * A store's share of a tick. Writes only record changes in memory (reads inside the tick see
 * them); `apply` takes everything recorded so far and writes it as a few multi-row statements
 * (changes recorded after that belong to the next tick); `finish` keeps or drops what it took.
 */
export interface TickPart {
  /** Loads, inside the tick's transaction, what the tick's writes declared they read. */
  preload?(tx: Tx, reads: readonly Read[]): Promise<void>;
  /** A savepoint: what `rollback` returns to when one write of the tick fails. */
  mark(): number;
  rollback(mark: number): void;
  apply(tx: Tx): Promise<void>;
  /** After the commit (true) or the rollback (false): forget the tick, keep what was committed. */
  finish(committed: boolean): void;
  /** True while a failed tick left something only a later committed tick can settle. */
  needsFollowUp?(): boolean;
}

/** Wall-clock pause before the tick that settles what a failed one left, when no write comes sooner. */
const FOLLOW_UP_MS = 500;

interface PendingWrite {
  write: () => unknown;
  reads: readonly Read[];
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type FollowUp = (committed: boolean) => void;

/**
 * The PostgreSQL engine's group commit. The writes requested in one tick run one after the other,
 * synchronously, against the stores' in-memory view of the tick (what was preloaded plus what the
 * earlier writes of the tick changed); then every store writes its changes in a few statements
 * and the transaction commits. A write that throws is undone in memory only: nothing of it ever
 * reached PostgreSQL. One tick is in flight at a time; writes requested meanwhile form the next.
 */
export class PostgresTicks implements Transactor {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  private inFlightWrites = 0;
  /** Follow-ups registered by the write that is running now. */
  private followUps: FollowUp[] | null = null;
  /** True while the tick's writes run (stores record changes only then). */
  private writing = false;
  private parts: TickPart[] = [];
  private readonly committedObservers: Array<() => void> = [];
  /** Runs inside the tick's transaction after its changes are written (notifications go out with the commit). */
  beforeCommit: ((tx: Tx) => Promise<void>) | null = null;

  private followUpTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;

  constructor(private readonly sql: SQL) {}

  /** No tick starts after this (the engine closes its connections next). */
  close(): void {
    this.closed = true;
    if (this.followUpTimer) clearTimeout(this.followUpTimer);
    this.followUpTimer = null;
  }

  /** The stores taking part in every tick, in the order their changes are written. */
  register(parts: TickPart[]): void {
    this.parts = parts;
  }

  /** Called after every committed tick (the engine notifies the other nodes from here). */
  onCommitted(fn: () => void): void {
    this.committedObservers.push(fn);
  }

  get inWrite(): boolean {
    return this.writing;
  }

  run<T>(write: () => T, reads: readonly Read[] = []): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, reads, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  afterCommit(fn: FollowUp): void {
    if (this.followUps) this.followUps.push(fn);
    else fn(true);
  }

  nested<T>(fn: () => T): T {
    if (!this.writing) {
      // Outside a tick (construction-time fixtures): runs now against the stores' view and is
      // committed with the next tick; a failure undoes it in memory and is thrown at once.
      let value!: T;
      let failure: unknown;
      let failed = false;
      void this.run(() => {
        try {
          value = fn();
        } catch (error) {
          failed = true;
          failure = error;
          throw error;
        }
      }).catch(() => {});
      this.runPendingNow();
      if (failed) throw failure;
      return value;
    }
    const outer = this.followUps!;
    this.followUps = [];
    const marks = this.parts.map((p) => p.mark());
    try {
      const value = fn();
      outer.push(...this.followUps);
      return value;
    } catch (error) {
      this.parts.forEach((p, i) => p.rollback(marks[i]!));
      runFollowUps(this.followUps, false);
      throw error;
    } finally {
      this.followUps = outer;
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

  /**
   * Writes queued outside a tick by `nested` run at once against the stores' view; they are
   * committed by the next tick (their changes stay recorded in the stores until then).
   */
  private runPendingNow(): void {
    // Only reached outside a tick: nothing else is recording changes right now.
    const [item] = this.pending.splice(this.pending.length - 1, 1);
    const followUps: FollowUp[] = [];
    this.writing = true;
    try {
      const [outcome] = this.runWrites([item!], followUps);
      if (outcome!.ok) this.carried.push({ item: item!, value: outcome!.value, followUps });
      else item!.reject(outcome!.error);
    } finally {
      this.writing = false;
    }
    this.schedule();
  }

  /** Runs writes against the stores' view; failures are undone in memory. Returns their outcomes. */
  private runWrites(batch: PendingWrite[], followUps: FollowUp[]): Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const item of batch) {
      const marks = this.parts.map((p) => p.mark());
      this.followUps = [];
      try {
        const value = item.write();
        outcomes.push({ ok: true, value });
        followUps.push(...this.followUps);
      } catch (error) {
        this.parts.forEach((p, i) => p.rollback(marks[i]!));
        runFollowUps(this.followUps, false);
        outcomes.push({ ok: false, error });
      } finally {
        this.followUps = null;
      }
    }
    return outcomes;
  }

  /** Writes already run (by `nested` outside a tick) that the next tick commits. */
  private carried: Array<{ item: PendingWrite; value: unknown; followUps: FollowUp[] }> = [];

  private tick(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const carried = this.carried;
    this.carried = [];
    this.inFlightWrites = batch.length + carried.length;
    const work = this.commitTick(batch, carried).finally(() => {
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

  private async commitTick(batch: PendingWrite[], carried: Array<{ item: PendingWrite; value: unknown; followUps: FollowUp[] }>): Promise<void> {
    if (batch.length === 0 && carried.length === 0) return;
    const followUps: FollowUp[] = carried.flatMap((c) => c.followUps);
    const dropped: FollowUp[] = [];
    let outcomes: ReturnType<PostgresTicks["runWrites"]> = [];
    let tx: Awaited<ReturnType<SQL["reserve"]>> | null = null;
    try {
      tx = await this.sql.reserve();
      await tx`BEGIN`;
      const reads = batch.flatMap((b) => b.reads);
      for (const part of this.parts) await part.preload?.(tx, reads);
      this.writing = true;
      try {
        outcomes = this.runWrites(batch, followUps);
      } finally {
        this.writing = false;
      }
      for (const part of this.parts) await part.apply(tx);
      await this.beforeCommit?.(tx);
      await tx`COMMIT`;
    } catch (error) {
      if (tx) await tx`ROLLBACK`.catch(() => {});
      tx?.release();
      this.inFlightWrites = 0;
      for (const part of this.parts) part.finish(false);
      runFollowUps([...followUps, ...dropped], false);
      const failure = unavailable(`storage unavailable: ${(error as Error)?.message ?? error}`);
      for (const item of batch) item.reject(failure);
      for (const c of carried) c.item.reject(failure);
      this.followUpIfNeeded();
      return;
    }
    tx.release();
    // Settled before anyone hears of it: a caller resumed by this commit (the idle probe) must not
    // count these writes as still pending.
    this.inFlightWrites = 0;
    for (const part of this.parts) part.finish(true);
    runFollowUps(followUps, true);
    for (const observe of this.committedObservers) observe();
    for (const c of carried) c.item.resolve(c.value);
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
