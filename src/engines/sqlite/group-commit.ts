import type { Database } from "bun:sqlite";
import { unavailable } from "../../core/errors.ts";
import { isStorageUnavailable } from "../../store/errors.ts";
import { runFollowUps, type CommitCounts, type Transactor, type Write, type WriteTx } from "../../store/transactor.ts";
import { refusal, SqliteRefusal, WriteAwaitedIoError } from "./write-errors.ts";

/**
 * A store that keeps some of a tick's rows in memory and writes them just before the COMMIT (one
 * statement for many rows instead of one per row). A write that fails, or a nested() that throws,
 * drops what it added: rollback(mark) to the mark taken before it.
 */
export interface CommitPart {
  mark(): number;
  rollback(mark: number): void;
  /**
   * Writes what the write that just ended left here, inside its savepoint: a row SQLite refuses
   * fails that write alone. Called only when the tick runs again one write at a time, after SQLite
   * refused a row of `apply`.
   */
  endWrite?(): void;
  /** Writes what the tick's writes left here, inside the tick's transaction, before its COMMIT. */
  apply(): void;
  /** The tick failed as a whole: nothing of it is stored. */
  discard(): void;
}

interface PendingWrite {
  write: Write<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type FollowUp = (committed: boolean) => void;

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** How the writes of a committed tick ended, and what to tell whom. */
interface TickRun {
  outcomes: Outcome[];
  /** Of the writes stored (those of a write not stored ran as it was undone). */
  followUps: FollowUp[];
}

/**
 * A write of the SQLite group commit, as its stores get it. SQLite runs on this thread: the
 * stores answer at once (their promises are resolved), so a tick runs from BEGIN to COMMIT in one
 * turn of the event loop, and no other I/O callback sees it half done.
 */
class SqliteWrite implements WriteTx {
  followUps: FollowUp[] = [];

  constructor(private readonly commit: GroupCommit) {}

  afterCommit(fn: FollowUp): void {
    this.followUps.push(fn);
  }

  nested<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    return this.commit.savepoint(this, fn);
  }
}

/**
 * Group commit: every write requested in the same tick runs in one SQLite transaction, each in
 * its own savepoint so one failing write does not undo the others. Callers get their promise
 * resolved only after the commit, so a 200 always follows a durable write.
 */
export class GroupCommit implements Transactor {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  /** The turn of the event loop the tick under way began in (see `sameTurn`); 0 between ticks. */
  private turn = 0;
  private turns = 0;
  readonly counts: CommitCounts = { commits: 0, failedCommits: 0, writes: 0, refusedWrites: 0, retriedWrites: 0 };

  // Prepared once: compiling these statements again for every write cost more than a savepoint itself.
  private readonly begin;
  private readonly save;
  private readonly release;
  private readonly commit;
  private readonly innerSavepoint;
  private readonly innerRelease;

  constructor(
    private readonly db: Database,
    private readonly parts: readonly CommitPart[] = [],
    /**
     * Runs every write twice: once undone at once (its savepoint rolled back, its follow-ups told
     * it failed), then for real. A drill for the rule that lets PostgreSQL run a write again after
     * a lock conflict: a write that fails leaves nothing behind, in the database or in memory.
     */
    private readonly rehearse = false,
  ) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.save = db.prepare("SAVEPOINT w");
    this.release = db.prepare("RELEASE w");
    this.commit = db.prepare("COMMIT");
    this.innerSavepoint = db.prepare("SAVEPOINT n");
    this.innerRelease = db.prepare("RELEASE n");
  }

  /** True while a tick's writes run (its rows may wait in a CommitPart for the commit). */
  get inWrite(): boolean {
    return this.turn !== 0;
  }

  run<T>(write: Write<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Writes queued for the next commit (time control waits for them between timer steps). */
  get pendingWrites(): number {
    return this.pending.length;
  }

  /** Runs `fn` inside a savepoint of `write`: rolled back alone when it throws. */
  async savepoint<T>(write: SqliteWrite, fn: (tx: WriteTx) => Promise<T>): Promise<T> {
    const outer = write.followUps;
    write.followUps = [];
    const marks = this.marks();
    this.innerSavepoint.run();
    try {
      const value = await fn(write);
      this.sameTurn();
      this.innerRelease.run();
      outer.push(...write.followUps);
      return value;
    } catch (error) {
      const dropped = write.followUps;
      // SQLite may have ended the whole transaction itself (disk full, I/O): nothing to undo here.
      if (this.db.inTransaction) {
        this.db.run("ROLLBACK TO n");
        this.db.run("RELEASE n");
      }
      this.rollbackParts(marks);
      runFollowUps(dropped, false);
      throw error;
    } finally {
      write.followUps = outer;
    }
  }

  /**
   * A write that awaited real I/O resumed in a later turn of the event loop than its tick began
   * in: other callbacks ran meanwhile on the same connection, inside the open transaction.
   */
  private sameTurn(): void {
    if (this.turn !== this.turns) throw new WriteAwaitedIoError();
  }

  private marks(): number[] | null {
    return this.parts.length === 0 ? null : this.parts.map((p) => p.mark());
  }

  private rollbackParts(marks: number[] | null): void {
    if (marks) this.parts.forEach((p, i) => p.rollback(marks[i]!));
  }

  /** Runs `write` and undoes it (see `rehearse`); what it throws is for the real run to throw again. */
  private async rehearsal(write: Write<unknown>): Promise<void> {
    const marks = this.marks();
    this.save.run();
    const trial = new SqliteWrite(this);
    await write(trial).catch(() => {});
    this.sameTurn();
    if (this.db.inTransaction) {
      this.db.run("ROLLBACK TO w");
      this.db.run("RELEASE w");
    }
    this.rollbackParts(marks);
    runFollowUps(trial.followUps, false);
  }

  /** Commits everything queued so far; also used at shutdown. */
  async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    // A new turn: a callback scheduled now runs only after this one ends (see sameTurn).
    this.turn = ++this.turns;
    setImmediate(() => this.turns++);
    let ran: TickRun | undefined;
    try {
      // A row SQLite refused at the tick's end: every write again, each one's rows as it ends.
      ran = (await this.runTick(batch, false)) ?? (await this.runTick(batch, true));
    } catch (error) {
      this.turn = 0;
      const failure = unavailable(`storage unavailable: ${(error as Error).message}`);
      for (const item of batch) item.reject(failure);
      this.counts.failedCommits++;
      return;
    }
    const { outcomes, followUps } = ran!;
    this.turn = 0;
    this.counts.commits++;
    for (const outcome of outcomes) {
      if (outcome.ok) this.counts.writes++;
      else if (isStorageUnavailable(outcome.error)) this.counts.refusedWrites++;
    }
    runFollowUps(followUps, true);
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  /**
   * Runs the writes in one transaction, each in its savepoint, and commits. The rows the parts keep
   * (the log's entries) go in together just before the COMMIT, a few multi-row INSERTs for the
   * whole tick; should SQLite refuse one of them, nothing of the tick is kept and the answer is
   * undefined: the caller runs the writes again `oneByOne`, each write's rows going in as it ends
   * (inside its savepoint), so that a refused row fails its own write alone. Writes may run again:
   * one that is not stored leaves nothing behind (the rehearsal drill holds them to it). Throws
   * when the tick is lost as a whole (disk full, I/O), everything undone.
   */
  private async runTick(batch: PendingWrite[], oneByOne: boolean): Promise<TickRun | undefined> {
    const outcomes: Outcome[] = [];
    const followUps: FollowUp[] = [];
    try {
      this.begin.run();
      for (const item of batch) {
        if (this.rehearse) await this.rehearsal(item.write);
        const marks = this.marks();
        this.save.run();
        const write = new SqliteWrite(this);
        try {
          const value = await item.write(write);
          this.sameTurn();
          if (oneByOne) for (const part of this.parts) part.endWrite?.();
          this.release.run();
          outcomes.push({ ok: true, value });
          followUps.push(...write.followUps);
        } catch (error) {
          // SQLite ends the whole transaction itself on some errors (disk full, I/O, busy): then
          // no write of the batch is stored and every caller gets a 503.
          if (!this.db.inTransaction || error instanceof WriteAwaitedIoError) {
            runFollowUps(write.followUps, false);
            throw error;
          }
          this.db.run("ROLLBACK TO w");
          this.db.run("RELEASE w");
          this.rollbackParts(marks);
          // Told at once, before the next write runs: what it took away in memory is back for that one.
          runFollowUps(write.followUps, false);
          outcomes.push({ ok: false, error: refusal(error) });
        }
      }
      if (!this.applyParts(oneByOne)) {
        // Undone, to run again in this same turn: the writes' follow-ups hear that they failed.
        this.undo();
        runFollowUps(followUps, false);
        return undefined;
      }
      this.commit.run();
    } catch (error) {
      this.undo();
      this.turn = 0;
      runFollowUps(followUps, false);
      throw error;
    }
    return { outcomes, followUps };
  }

  /** Writes the rows the parts kept; false when SQLite refused one (the tick then goes again, one write at a time). */
  private applyParts(oneByOne: boolean): boolean {
    try {
      for (const part of this.parts) part.apply();
      return true;
    } catch (error) {
      if (oneByOne || !this.db.inTransaction || !(refusal(error) instanceof SqliteRefusal)) throw error;
      return false;
    }
  }

  /** Nothing of the tick is kept: neither the parts' rows nor the transaction. */
  private undo(): void {
    for (const part of this.parts) part.discard();
    if (this.db.inTransaction) this.db.run("ROLLBACK");
  }
}
