/** What the main thread and the PostgreSQL writer thread (writer-thread.ts) say to each other. */

export interface Statement {
  text: string;
  params: readonly unknown[];
}

/**
 * Statements to run in order on the writer's connection (a transaction is opened by the first
 * one, `BEGIN`); with `end`, the transaction then commits or rolls back and the connection is
 * released. `sync`: the main thread is waiting on the shared flag.
 */
export interface WriterRequest {
  id: number;
  sync: boolean;
  statements: Statement[];
  end?: "commit" | "rollback";
}

/** The rows of the last statement, or the first failure (`failedAt`: its index, -1 for the commit itself). */
export type WriterReply =
  | { id: number; ok: true; rows: Record<string, unknown>[] }
  | { id: number; ok: false; failedAt: number; message: string; code?: string };

/** An answer asked for ahead of need: `rows()` blocks until it came (not at all once it has). */
export interface PendingRows {
  rows(): Record<string, unknown>[];
}

/**
 * Runs statements on the writer's connection: `runNow` blocks until the answer, `run` does not,
 * `send` does not either and lets the answer be waited for later, synchronously (see Writer).
 */
export interface StatementRunner {
  runNow(statements: Statement[], end?: "commit" | "rollback"): Record<string, unknown>[];
  run(statements: Statement[], end?: "commit" | "rollback"): Promise<Record<string, unknown>[]>;
  send(statements: Statement[]): PendingRows;
}
