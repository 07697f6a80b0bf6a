import type { Database } from "bun:sqlite";
import { unavailable } from "../../core/errors.ts";
import { runFollowUps, type CommitCounts, type Transactor } from "../../store/transactor.ts";

/**
 * A store that keeps some of a tick's rows in memory and writes them just before the COMMIT (one
 * statement for many rows instead of one per row). A write that fails, or a nested() that throws,
 * drops what it added: rollback(mark) to the mark taken before it.
 */
export interface TickPart {
  mark(): number;
  rollback(mark: number): void;
  /** Writes what the tick's writes left here, inside the tick's transaction, before its COMMIT. */
  apply(): void;
  /** The tick failed as a whole: nothing of it is stored. */
  discard(): void;
}

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: every write requested in the same tick runs in one SQLite transaction, each in
 * its own savepoint so one failing write does not undo the others. Callers get their promise
 * resolved only after the commit, so a 200 always follows a durable write.
 */
export class GroupCommit implements Transactor {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  readonly counts: CommitCounts = { commits: 0, failedCommits: 0, writes: 0 };
  /** Follow-ups registered by the write that is running now (see afterCommit). */
  private followUps: Array<(committed: boolean) => void> | null = null;

  // Prepared once: compiling these four statements again for every write cost more than a
  // savepoint itself.
  private readonly begin;
  private readonly savepoint;
  private readonly release;
  private readonly commit;
  private readonly innerSavepoint;
  private readonly innerRelease;

  constructor(
    private readonly db: Database,
    private readonly parts: readonly TickPart[] = [],
  ) {
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.savepoint = db.prepare("SAVEPOINT w");
    this.release = db.prepare("RELEASE w");
    this.commit = db.prepare("COMMIT");
    this.innerSavepoint = db.prepare("SAVEPOINT n");
    this.innerRelease = db.prepare("RELEASE n");
  }

  /** True while a write runs (its rows may wait in a TickPart for the commit). */
  get inWrite(): boolean {
    return this.followUps !== null;
  }

  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Called inside a write: `fn(true)` runs right after the commit that stores this write, before
   * the callers' promises resolve; `fn(false)` when this write or the commit failed (nothing of it
   * is stored). Outside a write it runs at once with true.
   */
  afterCommit(fn: (committed: boolean) => void): void {
    if (this.followUps) this.followUps.push(fn);
    else fn(true);
  }

  /**
   * Runs `fn` inside a savepoint of the write under way (or a transaction of its own outside
   * one). When it throws, its changes are rolled back, the follow-ups it registered get `false`
   * at once (they will never be committed), and the error is rethrown to the caller, whose write
   * goes on without it.
   */
  nested<T>(fn: () => T): T {
    const outer = this.followUps;
    if (outer === null) return this.db.transaction(fn)();
    this.followUps = [];
    const marks = this.marks();
    this.innerSavepoint.run();
    try {
      const value = fn();
      this.innerRelease.run();
      outer.push(...this.followUps);
      return value;
    } catch (error) {
      const dropped = this.followUps;
      // SQLite may have ended the whole transaction itself (disk full, I/O): nothing to undo here.
      if (this.db.inTransaction) {
        this.db.run("ROLLBACK TO n");
        this.db.run("RELEASE n");
      }
      this.rollbackParts(marks);
      runFollowUps(dropped, false);
      throw error;
    } finally {
      this.followUps = outer;
    }
  }

  private marks(): number[] | null {
    return this.parts.length === 0 ? null : this.parts.map((p) => p.mark());
  }

  private rollbackParts(marks: number[] | null): void {
    if (marks) this.parts.forEach((p, i) => p.rollback(marks[i]!));
  }

  /** Writes queued for the next commit (time control waits for them between timer steps). */
  get pendingWrites(): number {
    return this.pending.length;
  }

  /** Commits everything queued so far; also used at shutdown. */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const followUps: Array<(committed: boolean) => void> = [];
    const dropped: Array<(committed: boolean) => void> = [];
    try {
      this.begin.run();
      for (const item of batch) {
        const marks = this.marks();
        this.savepoint.run();
        this.followUps = [];
        try {
          outcomes.push({ ok: true, value: item.write() });
          this.release.run();
          followUps.push(...this.followUps);
        } catch (error) {
          dropped.push(...this.followUps);
          this.followUps = [];
          // SQLite ends the whole transaction itself on some errors (disk full, I/O, busy): then
          // no write of the batch is stored and every caller gets the 503 below.
          if (!this.db.inTransaction) throw error;
          this.db.run("ROLLBACK TO w");
          this.db.run("RELEASE w");
          this.rollbackParts(marks);
          outcomes.push({ ok: false, error });
        }
      }
      this.followUps = null;
      for (const part of this.parts) part.apply();
      this.commit.run();
    } catch (error) {
      dropped.push(...followUps, ...(this.followUps ?? []));
      this.followUps = null;
      for (const part of this.parts) part.discard();
      if (this.db.inTransaction) this.db.run("ROLLBACK");
      runFollowUps(dropped, false);
      const failure = unavailable(`storage unavailable: ${(error as Error).message}`);
      for (const item of batch) item.reject(failure);
      this.counts.failedCommits++;
      return;
    }
    this.counts.commits++;
    for (const outcome of outcomes) if (outcome.ok) this.counts.writes++;
    runFollowUps(dropped, false);
    runFollowUps(followUps, true);
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
