import { groupStatement, sameColumns, type Group, type Insert } from "./tick-groups.ts";
import type { PendingRows, Statement, StatementRunner } from "./writer-protocol.ts";
import { WriterError } from "./writer.ts";

export type PgRow = Record<string, unknown>;

/**
 * SQL inside the transaction of the tick under way: what a PostgreSQL store's writes use. Every
 * statement runs in that transaction, in the order given; a write sees what the earlier writes of
 * the tick did, as on SQLite.
 */
export interface TickSql {
  /** Runs the statement now (after everything queued before it) and returns its rows; blocks until PostgreSQL answers. */
  query(text: string, params?: readonly unknown[]): PgRow[];
  /** Runs the statement before the next `query` or the commit, whichever comes first (no rows come back). */
  queue(text: string, params?: readonly unknown[]): void;
  /**
   * Inserts a row, as `queue` does; rows queued one after another for the same table, columns
   * and `suffix` (e.g. `ON CONFLICT DO NOTHING`) go as one multi-row INSERT.
   */
  insert(table: string, row: PgRow, suffix?: string): QueuedRow;
  /**
   * Changes columns of a row this transaction inserted, while its INSERT has not been sent (a
   * message claimed by the write that stores it goes in claimed). False once it has been: the
   * caller then updates the row with a statement.
   */
  patchQueued(row: QueuedRow, changes: PgRow): boolean;
  /**
   * Runs `text` for `key`, as `queue` does: `text` takes the keys as its one parameter, an array
   * (`DELETE FROM t WHERE id = ANY($1::text[])`); calls one after another with the same text go
   * as one statement with all their keys.
   */
  queueEach(text: string, key: unknown): void;
}

/** A row `insert` queued (see `patchQueued`). */
export interface QueuedRow {
  readonly insert: Insert;
  readonly values: unknown[];
}

type Queued = { kind: "statement"; statement: Statement } | Group;

/** Where the queue stood: items, and rows in the last one (an insert may grow after the mark). */
interface Position {
  items: number;
  rows: number;
}

/** A savepoint of a write (or of a nested part of one): sent lazily, only when a query makes the write's statements go out first. */
interface Frame {
  name: string;
  at: Position;
  sent: boolean;
}

/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMS = 60_000;

/**
 * The tick's transaction as the stores see it. Statements wait in a queue (consecutive inserts
 * into one table become one statement) until a query needs an answer, or until the commit; each
 * write is a savepoint, sent only if some of its statements go out before it ends, so a write
 * that fails is undone whether or not its statements reached PostgreSQL. Any SQL error loses the
 * whole tick (its writes are answered 503, as when the commit fails).
 */
export class TickTransaction implements TickSql {
  private queued: Queued[] = [{ kind: "statement", statement: { text: "BEGIN", params: [] } }];
  private readonly frames: Frame[] = [];
  private failure: WriterError | null = null;
  /** True once BEGIN went out: the transaction must be ended on the connection. */
  private open = false;

  constructor(private readonly writer: StatementRunner) {}

  /** The error that lost this tick, if one did. */
  get failed(): WriterError | null {
    return this.failure;
  }

  query(text: string, params: readonly unknown[] = []): PgRow[] {
    this.throwIfFailed();
    const statements = this.takeForSending();
    statements.push({ text, params });
    try {
      this.open = true;
      return this.writer.runNow(statements);
    } catch (error) {
      throw this.lose(error);
    }
  }

  /**
   * Sends a read before any write of the tick runs (its transaction begins with it), without
   * waiting: the answer is read later by `rows()`, which waits only if it has not come yet. Row
   * locks it takes hold until the tick ends, as any read's in the tick.
   */
  ahead(text: string, params: readonly unknown[] = []): PendingRows {
    this.throwIfFailed();
    if (this.frames.length > 0) throw new Error("a read ahead of the tick was sent while one of its writes ran");
    const statements = this.takeForSending();
    statements.push({ text, params });
    this.open = true;
    const pending = this.writer.send(statements);
    return {
      rows: () => {
        this.throwIfFailed();
        try {
          return pending.rows();
        } catch (error) {
          throw this.lose(error);
        }
      },
    };
  }

  /** The tick is given up before it ran (an earlier tick failed): what was sent ahead is rolled back. */
  discard(): Promise<void> {
    this.failure ??= new WriterError("the tick was given up before it ran", undefined, -1);
    return this.writer.run([], "rollback").then(
      () => {},
      () => {},
    );
  }

  queue(text: string, params: readonly unknown[] = []): void {
    this.throwIfFailed();
    this.queued.push({ kind: "statement", statement: { text, params } });
  }

  insert(table: string, row: PgRow, suffix = ""): QueuedRow {
    this.throwIfFailed();
    const columns = Object.keys(row);
    const values = columns.map((c) => row[c] ?? null);
    const last = this.queued[this.queued.length - 1];
    if (
      last?.kind === "insert" &&
      last.table === table &&
      last.suffix === suffix &&
      (last.rows.length + 1) * columns.length <= MAX_PARAMS &&
      sameColumns(last.columns, columns)
    ) {
      last.rows.push(values);
      return { insert: last, values };
    }
    const insert: Insert = { kind: "insert", sent: false, table, columns, suffix, rows: [values] };
    this.queued.push(insert);
    return { insert, values };
  }

  patchQueued(row: QueuedRow, changes: PgRow): boolean {
    if (row.insert.sent || this.failure) return false;
    const columns = Object.keys(changes);
    if (!columns.every((c) => row.insert.columns.includes(c))) return false;
    for (const c of columns) row.values[row.insert.columns.indexOf(c)] = changes[c] ?? null;
    return true;
  }

  queueEach(text: string, key: unknown): void {
    this.throwIfFailed();
    const last = this.queued[this.queued.length - 1];
    if (last?.kind === "each" && last.text === text && last.rows.length < MAX_PARAMS) last.rows.push([key]);
    else this.queued.push({ kind: "each", text, rows: [[key]] });
  }

  /** A write (or a nested part of one) begins: what it does can be undone alone. */
  begin(): void {
    this.frames.push({ name: `s${this.frames.length}`, at: this.position(), sent: false });
  }

  /** The innermost write begun ended well: its statements stay. */
  keep(): void {
    const frame = this.frames.pop()!;
    if (frame.sent && !this.failure) this.queue(`RELEASE SAVEPOINT ${frame.name}`);
  }

  /** The innermost write begun failed: none of its statements stay. */
  undo(): void {
    const frame = this.frames.pop()!;
    if (this.failure) return;
    if (!frame.sent) {
      this.truncate(frame.at);
      return;
    }
    // Its savepoint went out, and with it everything queued before: what is queued now is its own.
    this.queued = [];
    this.queue(`ROLLBACK TO SAVEPOINT ${frame.name}`);
    this.queue(`RELEASE SAVEPOINT ${frame.name}`);
  }

  /** Sends what is queued and commits; rejects (and rolls back) if anything failed. */
  async commit(): Promise<void> {
    this.throwIfFailed();
    const statements = this.takeForSending();
    // Nothing was written and nothing went out: no transaction to commit.
    if (!this.open && statements.length === 1) return;
    this.open = true;
    try {
      await this.writer.run(statements, "commit");
      this.open = false;
    } catch (error) {
      throw this.lose(error);
    }
  }

  /** As `commit`, blocking until PostgreSQL answered (a write outside any tick, at start-up). */
  commitNow(): void {
    this.throwIfFailed();
    const statements = this.takeForSending();
    if (!this.open && statements.length === 1) return;
    this.open = true;
    try {
      this.writer.runNow(statements, "commit");
      this.open = false;
    } catch (error) {
      throw this.lose(error);
    }
  }

  /** Ends the transaction on the connection after a failure (nothing of the tick is kept). */
  async rollback(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    await this.writer.run([], "rollback").catch(() => {});
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private lose(error: unknown): WriterError {
    this.failure = error instanceof WriterError ? error : new WriterError(String((error as Error)?.message ?? error), undefined, -1);
    return this.failure;
  }

  private position(): Position {
    const last = this.queued[this.queued.length - 1];
    return { items: this.queued.length, rows: last && last.kind !== "statement" ? last.rows.length : 0 };
  }

  private truncate(at: Position): void {
    this.queued.length = at.items;
    const last = this.queued[at.items - 1];
    if (last && last.kind !== "statement") last.rows.length = at.rows;
  }

  /**
   * Everything queued, as statements, with the savepoints of the writes under way placed where
   * those writes began (their statements may go out now; they must still be undoable).
   */
  private takeForSending(): Statement[] {
    const out: Statement[] = [];
    const unsent = this.frames.filter((f) => !f.sent);
    let frame = 0;
    this.queued.forEach((item, index) => {
      if (item.kind === "statement") {
        while (frame < unsent.length && unsent[frame]!.at.items <= index) out.push(savepoint(unsent[frame++]!));
        out.push(item.statement);
        return;
      }
      // A savepoint may fall inside a group: the rows before it go first.
      if (item.kind === "insert") item.sent = true;
      let from = 0;
      while (frame < unsent.length && unsent[frame]!.at.items <= index + 1) {
        const f = unsent[frame]!;
        const cut = f.at.items === index + 1 ? f.at.rows : 0;
        if (cut > from) out.push(groupStatement(item, from, cut));
        from = Math.max(from, cut);
        out.push(savepoint(f));
        frame++;
      }
      if (from < item.rows.length) out.push(groupStatement(item, from, item.rows.length));
    });
    while (frame < unsent.length) out.push(savepoint(unsent[frame++]!));
    this.queued = [];
    // What is queued from now on starts at the beginning of the (empty) queue.
    for (const f of this.frames) f.at = { items: 0, rows: 0 };
    return out;
  }
}

function savepoint(frame: Frame): Statement {
  frame.sent = true;
  return { text: `SAVEPOINT ${frame.name}`, params: [] };
}
