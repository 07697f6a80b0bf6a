import type { SQL } from "bun";
import type { StorageFailure } from "../../store/errors.ts";

/** A connection reserved from the pool for one tick's transaction. */
export type Connection = Awaited<ReturnType<SQL["reserve"]>>;

export type PgRow = Record<string, unknown>;

export interface Statement {
  text: string;
  params: readonly unknown[];
}

/** PostgreSQL's answer to a statement behind a failed one in the same transaction. */
const ABORTED = "25P02";

/**
 * A statement PostgreSQL refused, or a connection that failed: the write (or the whole tick) it
 * belongs to is not stored. Worth writing again, unlike a bug in a write.
 */
export class PgWriteError extends Error implements StorageFailure {
  readonly storageUnavailable = true;
  constructor(
    message: string,
    /** SQLSTATE when PostgreSQL answered with an error; undefined when the connection failed. */
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/** The error as a PgWriteError (what PostgreSQL said, or why the connection failed). */
export function pgError(error: unknown): PgWriteError {
  if (error instanceof PgWriteError) return error;
  const e = error as { errno?: unknown; message?: unknown } | null;
  const code = typeof e?.errno === "string" ? e.errno : undefined;
  return new PgWriteError(String(e?.message ?? error), code);
}

/**
 * True for PostgreSQL's refusal of a statement (the connection still works: a constraint, a lock
 * that timed out, a deadlock), false for a lost connection or a server going away (SQLSTATE
 * classes 08 and 57P, 58, XX).
 */
export const refusedStatement = (error: PgWriteError) => error.code !== undefined && !/^(08|57P|58|XX)/.test(error.code);

const LOCK_CONFLICTS = new Set(["40P01", "55P03", "40001", "57014"]);

/**
 * True when a write lost a lock conflict: PostgreSQL broke a deadlock between two transactions by
 * failing its statement, a row it needed stayed locked past `lock_timeout` (another node, or
 * anyone, held it), or its statement ran past `statement_timeout` (57014: waiting for several rows
 * in turn, each under `lock_timeout`, or on a CPU too busy to answer in time). Undone alone, such a
 * write runs again as if its caller had retried.
 */
export const lostLockConflict = (error: unknown) => error instanceof PgWriteError && LOCK_CONFLICTS.has(error.code ?? "");

/** True for a statement refused only because one before it in its transaction failed. */
export const behindFailure = (error: PgWriteError) => error.code === ABORTED;

/**
 * Bun sends a statement without parameters as a simple query, which goes out alone: only once every
 * statement before it is answered, and none after it before its own answer. Called as a tagged
 * template, the same text is a prepared statement that goes out in the pipeline with the others.
 * The statements without parameters a tick sends are these (savepoints named by depth).
 */
const tag = (strings: TemplateStringsArray) => strings;
const CONTROL = new Map<string, TemplateStringsArray>([
  ["BEGIN", tag`BEGIN`],
  ["COMMIT", tag`COMMIT`],
  ["ROLLBACK", tag`ROLLBACK`],
  ["SAVEPOINT b", tag`SAVEPOINT b`],
  ["RELEASE SAVEPOINT b", tag`RELEASE SAVEPOINT b`],
  ["ROLLBACK TO SAVEPOINT b", tag`ROLLBACK TO SAVEPOINT b`],
  ["SAVEPOINT c", tag`SAVEPOINT c`],
  ["RELEASE SAVEPOINT c", tag`RELEASE SAVEPOINT c`],
  ["ROLLBACK TO SAVEPOINT c", tag`ROLLBACK TO SAVEPOINT c`],
  ["SAVEPOINT f0", tag`SAVEPOINT f0`],
  ["RELEASE SAVEPOINT f0", tag`RELEASE SAVEPOINT f0`],
  ["ROLLBACK TO SAVEPOINT f0", tag`ROLLBACK TO SAVEPOINT f0`],
  ["SAVEPOINT f1", tag`SAVEPOINT f1`],
  ["RELEASE SAVEPOINT f1", tag`RELEASE SAVEPOINT f1`],
  ["ROLLBACK TO SAVEPOINT f1", tag`ROLLBACK TO SAVEPOINT f1`],
  ["SAVEPOINT f2", tag`SAVEPOINT f2`],
  ["RELEASE SAVEPOINT f2", tag`RELEASE SAVEPOINT f2`],
  ["ROLLBACK TO SAVEPOINT f2", tag`ROLLBACK TO SAVEPOINT f2`],
  ["SAVEPOINT f3", tag`SAVEPOINT f3`],
  ["RELEASE SAVEPOINT f3", tag`RELEASE SAVEPOINT f3`],
  ["ROLLBACK TO SAVEPOINT f3", tag`ROLLBACK TO SAVEPOINT f3`],
]);

/** Starts a statement on the connection (it goes out at once, behind those started before it). */
function start(conn: Connection, st: Statement) {
  const control = st.params.length === 0 ? CONTROL.get(st.text) : undefined;
  const query = control ? conn(control) : conn.unsafe(st.text, [...st.params]);
  return query.execute();
}

/** How each statement of a pipeline ended: its rows, or why it failed. */
export type Settled = { ok: true; rows: PgRow[]; command: string } | { ok: false; error: PgWriteError };

/**
 * Sends `statements` at once, pipelined on the connection, and resolves once every one is
 * answered (the first failure makes PostgreSQL refuse the ones behind it in the transaction).
 */
export async function pipeline(conn: Connection, statements: readonly Statement[]): Promise<Settled[]> {
  const started = statements.map((st) => start(conn, st));
  const settled = await Promise.allSettled(started);
  return settled.map((s) => {
    if (s.status === "rejected") return { ok: false, error: pgError(s.reason) };
    const result = s.value as PgRow[] & { command?: unknown };
    return { ok: true, rows: Array.from(result), command: String(result.command ?? "") };
  });
}

/** The command PostgreSQL answered a statement with (a COMMIT of a failed transaction answers ROLLBACK). */
export async function runCommand(conn: Connection, st: Statement): Promise<string> {
  const result = await start(conn, st);
  return String((result as { command?: unknown }).command ?? "");
}
