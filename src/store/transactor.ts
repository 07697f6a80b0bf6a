/**
 * How domains write. Every write requested in the same moment commits in one transaction (the
 * group commit), each as if in a savepoint of its own: one failing write does not undo the
 * others. A write is a function of its transaction, `tx`, which every store method that runs
 * inside a write takes: the compiler says what runs inside a write, and nothing else may call
 * those methods. Callers' promises resolve only after the commit, so a 200 always follows a
 * durable write.
 *
 * A write may await its stores (an engine whose database answers over the network makes it
 * wait without blocking anything else); it must not await anything else (a timer, a fetch):
 * an engine that keeps its transaction on one thread refuses such a write.
 */
export interface WriteTx {
  /** `fn(true)` right after the commit that stores this write, `fn(false)` when it is not stored. */
  afterCommit(fn: (committed: boolean) => void): void;
  /**
   * Runs `fn` in a savepoint of this write: when it throws, what it did is rolled back (its
   * follow-ups get false at once) and the error is rethrown; the write goes on without it.
   */
  nested<T>(fn: (tx: WriteTx) => Promise<T>): Promise<T>;
}

/** A write: what runs inside one transaction of the group commit. */
export type Write<T> = (tx: WriteTx) => Promise<T>;

/** What a transactor has committed since the start (the storage metrics). */
export interface CommitCounts {
  /** Transactions committed. */
  commits: number;
  /** Transactions that failed as a whole: none of their writes was stored (each refused "storage unavailable"). */
  failedCommits: number;
  /** Writes the committed transactions stored (one transaction holds the writes of one moment). */
  writes: number;
  /** Writes the storage refused alone (a statement of theirs failed), while the rest of their transaction committed. */
  refusedWrites: number;
  /** Writes that lost a lock conflict (a deadlock, a lock wait past its limit) and ran again in a later transaction. */
  retriedWrites: number;
}

export interface Transactor {
  /** Runs `write` in the group commit; resolves with its value once it is committed. */
  run<T>(write: Write<T>): Promise<T>;
  /** Writes queued or being committed (time control waits for them between timer steps). */
  readonly pendingWrites: number;
  /** Counted since the start; read, never changed, by its reader. */
  readonly counts: Readonly<CommitCounts>;
  /** Commits what is queued now (also at shutdown); resolves once it is stored. */
  flush(): Promise<void>;
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
