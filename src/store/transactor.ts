/**
 * How domains write: every write requested in the same tick commits in one transaction, each as
 * if in a savepoint of its own (one failing write does not undo the others); callers' promises
 * resolve only after the commit, so a 200 always follows a durable write. Writes are synchronous
 * functions: the engine runs them one after the other inside its transaction.
 */
export interface WriteOptions {
  /**
   * The write may run before the writes of its tick requested earlier (they were all pending at
   * once: any order of them is one a caller could have seen). An engine whose reads wait for the
   * statements queued before them runs such writes first, so that their reads do not wait for the
   * tick's inserts; the others ignore it.
   */
  early?: boolean;
}

/** What a transactor has committed since the start (the storage metrics). */
export interface CommitCounts {
  /** Transactions committed. */
  commits: number;
  /** Transactions that failed as a whole: none of their writes was stored (each refused "storage unavailable"). */
  failedCommits: number;
  /** Writes the committed transactions stored (one transaction holds the writes of one moment). */
  writes: number;
}

export interface Transactor {
  run<T>(write: () => T, options?: WriteOptions): Promise<T>;
  /** Inside a write: `fn(true)` right after the commit that stores it, `fn(false)` when it is not stored. Outside: at once. */
  afterCommit(fn: (committed: boolean) => void): void;
  /** A savepoint of the write under way (a transaction of its own outside one); rolled back when `fn` throws. */
  nested<T>(fn: () => T): T;
  /** Writes queued or being committed (time control waits for them between timer steps). */
  readonly pendingWrites: number;
  /** Counted since the start; read, never changed, by its reader. */
  readonly counts: Readonly<CommitCounts>;
  /** Commits what is queued now (also at shutdown); resolves once it is stored. */
  flush(): void | Promise<void>;
}

/** Runs follow-ups of a commit (or of its rollback); one that throws does not hold back the others. */
export function runFollowUps(list: Array<(committed: boolean) => void>, committed: boolean): void {
  for (const fn of list) {
    try {
      fn(committed);
    } catch (error) {
      // A bug in a follow-up must not keep the callers of the batch waiting: it surfaces later.
      queueMicrotask(() => {
        throw error;
      });
    }
  }
}
