import type { WriteTx } from "../../store/transactor.ts";
import type { NodeAttempts } from "./message-claims.ts";
import { writeOf, type TickPart, type TxSql } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";

/**
 * What the live messages' store keeps in memory around the ticks: what each tick in flight wrote
 * and holds (`TickState`), the earliest due time of this node's partitions, and the reconcile
 * after a failed tick.
 */
export class MessageTicks implements TickPart {
  private readonly ticks = new Map<TickTransaction, TickState>();
  /**
   * A lower bound of every due time in this node's partitions (`nextDueKnown`): the last claim
   * read it, and every write or wake-up that makes a message due since noted it. Until then (and
   * after a failed tick) it is unknown, and a claim pass asks PostgreSQL.
   */
  protected nextDue: number | null = null;
  protected nextDueKnown = false;
  /**
   * A tick failed: whether it committed is unknown when the connection broke during COMMIT, so
   * rows it claimed may be ACTIVE under this node with no attempt behind them. The next tick
   * reconciles (`releaseForgotten`); "running" until that tick's commit is confirmed.
   */
  private reconcile: "none" | "needed" | "running" = "none";
  /** When the tick being committed released forgotten claims: due then, on this node too. */
  private releasedAt: number | null = null;
  /**
   * Claim reads under way, each with the earliest due time noted while it ran: it may not have
   * seen those rows (another tick of this node not yet committed, another node's commit behind
   * its snapshot), so the next due time it reads does not cover them.
   */
  private readonly readings = new Map<number, number | null>();
  private readingSerial = 0;

  constructor(
    protected readonly attempts: NodeAttempts,
    /** The server clock's time (what `dispatch_at` is measured in). */
    private readonly now: () => number,
  ) {}

  /** Partitions with an attempt of this node under way (never given to another node meanwhile). */
  busyPartitions(): Set<number> {
    return this.attempts.busyPartitions();
  }

  /** The earliest dispatch time the tick being committed wrote, once (sent to the other nodes with it). */
  takeTickDue(tick: TickTransaction): number | null {
    const state = this.ticks.get(tick);
    if (!state) return null;
    const due = state.due;
    state.due = null;
    return due;
  }

  /** A message became due at `atMs` (written here, or by another node's notification). */
  noteDue(atMs: number | null | undefined): void {
    if (atMs === null || atMs === undefined) return;
    if (this.nextDue === null || atMs < this.nextDue) this.nextDue = atMs;
    for (const [id, noted] of this.readings) if (noted === null || atMs < noted) this.readings.set(id, atMs);
  }

  /**
   * Runs a claim read of `tick`, then takes the next due time it read, lowered by what it may not
   * have seen: due times noted while it ran, and those other ticks of this node wrote and have
   * not committed yet.
   */
  protected async readingNextDue<T extends { nextDue: number | null }>(tick: TickTransaction, read: () => Promise<T>): Promise<T> {
    const id = ++this.readingSerial;
    this.readings.set(id, null);
    let result: T;
    let noted: number | null = null;
    try {
      result = await read();
    } finally {
      noted = this.readings.get(id) ?? null;
      this.readings.delete(id);
    }
    let next = result.nextDue;
    const lower = (at: number | null) => {
      if (at !== null && (next === null || at < next)) next = at;
    };
    lower(noted);
    for (const [other, state] of this.ticks) if (other !== tick) lower(state.written);
    this.nextDue = next;
    this.nextDueKnown = true;
    return result;
  }

  /**
   * Settles what a failed tick may have left, before the writes of this one: claims no attempt
   * holds are due again (counted as released: the tick that releases them tells the others).
   */
  begin(tick: TickTransaction, sql: TxSql): void {
    if (this.reconcile === "none") return;
    const nowMs = this.now();
    this.attempts.releaseForgotten(sql, nowMs);
    this.reconcile = "running";
    this.stateIn(tick).released = nowMs;
    this.noteDue(nowMs);
  }

  /** Where the tick's earliest dispatch time stood (-1: none yet), for a write that is undone. */
  mark(tick: TickTransaction): number {
    return this.ticks.get(tick)?.due ?? -1;
  }

  rollback(tick: TickTransaction, mark: number): void {
    const state = this.ticks.get(tick);
    if (state) {
      state.due = mark < 0 ? null : mark;
      state.locked.clear();
    }
    // An undone claim's rows are due again, earlier than the claim read.
    this.nextDueKnown = false;
  }

  /** A write PostgreSQL refused once it ended: its rows are not the tick's (its due time is told all the same). */
  drop(tick: TickTransaction): void {
    this.ticks.get(tick)?.locked.clear();
    this.nextDueKnown = false;
  }

  /** A tick that released forgotten claims tells the others with its commit (see begin). */
  apply(tick: TickTransaction): void {
    const state = this.ticks.get(tick);
    if (state?.released != null) this.noteIn(state, state.released);
  }

  finish(tick: TickTransaction, committed: boolean, uncertain = true): void {
    const state = this.ticks.get(tick);
    this.ticks.delete(tick);
    // A claim read under way may have begun before this commit: what it wrote is due all the same.
    if (committed) this.noteDue(state?.written);
    if (committed) {
      if (state?.released == null) return;
      this.releasedAt = state.released;
      if (this.reconcile === "running") this.reconcile = "none";
      return;
    }
    this.nextDueKnown = false;
    this.releasedAt = null;
    // Claims of a tick that was rolled back are forgotten (NodeAttempts); if it may have committed
    // after all (the connection broke during COMMIT), the next tick releases them. A tick that was
    // to release them and certainly did not leaves that to the next one.
    if (uncertain || state?.released != null) this.reconcile = "needed";
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
   * The tick wrote a dispatch time (in the set-based statements other stores run before the
   * commit: promotions, releases): due here then, and the other nodes are told with the commit.
   */
  noteWritten(tick: TickTransaction, atMs: number | null): void {
    this.noteIn(this.stateIn(tick), atMs);
  }

  protected noteIn(state: TickState, atMs: number | null): void {
    this.noteDue(atMs);
    if (atMs === null) return;
    if (state.due === null || atMs < state.due) state.due = atMs;
    if (state.written === null || atMs < state.written) state.written = atMs;
  }

  /** The message was claimed in this write's tick behind a held one of its key. */
  behindHeld(tx: WriteTx, id: string): boolean {
    return this.ticks.get(writeOf(tx).tick)?.behindHeld.has(id) ?? false;
  }

  protected stateOf(tx: WriteTx): TickState {
    return this.stateIn(writeOf(tx).tick);
  }

  private stateIn(tick: TickTransaction): TickState {
    let state = this.ticks.get(tick);
    if (!state) this.ticks.set(tick, (state = { due: null, written: null, locked: new Set(), behindHeld: new Set(), released: null }));
    return state;
  }
}

/** What the store keeps of one tick in flight. */
interface TickState {
  /** The earliest dispatch time the tick wrote (the other nodes are told with its commit). */
  due: number | null;
  /** The same, kept until the tick ends (a claim read of another tick may not see it). */
  written: number | null;
  /**
   * Rows the tick's transaction holds: inserted by it, or read by it with a lock. Nobody else can
   * delete them before the commit, so deleting one needs no answer (one statement fewer to wait
   * for per delivered message). Emptied when a write is undone (a row it inserted is gone again).
   */
  locked: Set<string>;
  /** Messages the tick claimed behind a held one of their key (see FlowStorage.behindHeld). */
  behindHeld: Set<string>;
  /** When the tick released forgotten claims (see `begin`). */
  released: number | null;
}
