import type { Database } from "bun:sqlite";
import { unavailable } from "../core/errors.ts";

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
export class GroupCommit {
  private pending: PendingWrite[] = [];
  private scheduled = false;

  constructor(private readonly db: Database) {}

  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
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
    try {
      this.db.run("BEGIN IMMEDIATE");
      for (const item of batch) {
        this.db.run("SAVEPOINT w");
        try {
          outcomes.push({ ok: true, value: item.write() });
          this.db.run("RELEASE w");
        } catch (error) {
          // SQLite ends the whole transaction itself on some errors (disk full, I/O, busy): then
          // no write of the batch is stored and every caller gets the 503 below.
          if (!this.db.inTransaction) throw error;
          this.db.run("ROLLBACK TO w");
          this.db.run("RELEASE w");
          outcomes.push({ ok: false, error });
        }
      }
      this.db.run("COMMIT");
    } catch (error) {
      if (this.db.inTransaction) this.db.run("ROLLBACK");
      const failure = unavailable(`storage unavailable: ${(error as Error).message}`);
      for (const item of batch) item.reject(failure);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
}
