import {
  behindFailure,
  pgError,
  pipeline,
  PgWriteError,
  refusedStatement,
  runCommand,
  type Connection,
  type PgRow,
  type Settled,
  type Statement,
} from "./pipeline.ts";
import { byWrite, control, statementsOf, TickQueue, type Frame, type Piece } from "./tick-queue.ts";

/**
 * One tick's transaction on a connection of its own. The writes of the tick run one after the
 * other; their statements wait in a queue (consecutive inserts into one table, whichever writes
 * made them, become one statement) until a write needs an answer (`query`) or the tick commits,
 * then go out pipelined: one round trip for all of them. Nothing waits for PostgreSQL but the
 * write that asked.
 *
 * A statement PostgreSQL refuses fails only its own write, as on SQLite. The statements of the
 * writes that ended before a round trip go out inside a savepoint of their own (`b`): when one of
 * them fails, the transaction goes back to it and those writes' statements go again, each write
 * in a savepoint, so that only the failing one is left out (`failedWrites`); the write under way
 * owns everything after its first savepoint, and a failure there is its own.
 */
export class TickTransaction {
  private readonly q = new TickQueue();
  private failure: PgWriteError | null = null;
  /** True once BEGIN went out. */
  private open = false;
  /** True once a write read an answer: the tick's statements can no longer be sent again from the start. */
  private answered = false;
  /** Writes that ended well but whose statements PostgreSQL refused afterwards, and why. */
  readonly failedWrites = new Map<number, PgWriteError>();

  constructor(
    private readonly conn: Connection,
    /**
     * Called before statements go out (a read, the commit): what stores keep for the writes that
     * ended goes now (`queue`/`insert` with their write), in the same batch as their statements.
     */
    private readonly beforeSend: () => void = () => {},
  ) {}

  /** The error that lost the whole tick, if one did. */
  get failed(): PgWriteError | null {
    return this.failure;
  }

  /** The number of the write under way (-1 between writes). */
  get currentWrite(): number {
    return this.q.write;
  }

  /** The write under way read something: its statements settle when it ends, before the next write begins. */
  get settlesAlone(): boolean {
    return this.q.frames[0]?.sent ?? false;
  }

  /** Write `n` of the tick begins. */
  beginWrite(n: number): void {
    this.q.write = n;
    this.q.pushFrame();
  }

  /**
   * The write under way ended (`ok`: kept, else undone). When its savepoint went out (it read
   * something), what it queued since goes out now with the savepoint's end: everything of it is
   * settled before the next write begins. Resolves with PostgreSQL's refusal of one of those
   * statements, which undoes the write.
   */
  async endWrite(ok: boolean): Promise<PgWriteError | undefined> {
    const frame = this.q.popFrame(!ok);
    this.q.write = -1;
    if (!frame.sent || this.failure) return undefined;
    try {
      return await this.closeFrame(frame, ok);
    } catch (error) {
      // The tick is lost (the connection failed): its commit says so to every write.
      if (error !== this.failure) throw error;
      return undefined;
    }
  }

  private async closeFrame(frame: Frame, ok: boolean): Promise<PgWriteError | undefined> {
    const own = statementsOf(this.q.takeAll());
    if (ok) {
      const settled = await pipeline(this.conn, [...own, control(`RELEASE SAVEPOINT ${frame.name}`)]);
      this.throwIfLost(settled);
      const refused = firstRefusal(settled);
      if (!refused) return undefined;
      await this.must(control(`ROLLBACK TO SAVEPOINT ${frame.name}`));
      await this.must(control(`RELEASE SAVEPOINT ${frame.name}`));
      return refused;
    }
    await this.must(control(`ROLLBACK TO SAVEPOINT ${frame.name}`));
    await this.must(control(`RELEASE SAVEPOINT ${frame.name}`));
    return undefined;
  }

  /** A nested part of the write under way begins: what it does can be undone alone. */
  begin(): void {
    this.q.pushFrame();
  }

  /** The innermost nested part begun ended well: its statements stay. */
  keep(): void {
    const frame = this.q.popFrame(false);
    if (frame.sent && !this.failure) this.q.queueOwn(`RELEASE SAVEPOINT ${frame.name}`);
  }

  /** The innermost nested part begun failed: none of its statements stay. */
  undo(): void {
    const frame = this.q.popFrame(true);
    if (this.failure || !frame.sent) return;
    // Its savepoint went out, and with it everything queued before: what is queued now is its own.
    this.q.clear();
    this.q.queueOwn(`ROLLBACK TO SAVEPOINT ${frame.name}`);
    this.q.queueOwn(`RELEASE SAVEPOINT ${frame.name}`);
  }

  /**
   * `write`: the write the statement belongs to, when queued on its behalf after it ended (rows
   * written just before its statements go out): it goes with them and is undone with them.
   */
  queue(text: string, params: readonly unknown[] = [], write?: number): void {
    this.throwIfFailed();
    if (write === undefined) this.q.queue(text, params);
    else this.q.queueLate(text, params, write);
  }

  insert(table: string, row: PgRow, suffix = "", write?: number): void {
    this.throwIfFailed();
    if (write === undefined) this.q.insert(table, row, suffix);
    else this.q.insertLate(table, row, suffix, write);
  }

  queueEach(text: string, key: unknown): void {
    this.throwIfFailed();
    this.q.queueEach(text, key);
  }

  /** Sends what is queued, then `text`; resolves with its rows. A failure of the write under way is thrown. */
  async query(text: string, params: readonly unknown[] = []): Promise<PgRow[]> {
    this.throwIfFailed();
    this.beforeSend();
    const { ended, own } = this.q.takeForSending();
    own.push({ text, params });
    this.answered = true;
    const settled = await this.send(ended, own);
    const last = settled[settled.length - 1]!;
    if (last.ok) return last.rows;
    // A statement of this write before the query failed: that is the error it gets.
    throw firstRefusal(settled) ?? last.error;
  }

  /**
   * Sends what is queued and commits. The writes found failed meanwhile are in `failedWrites`;
   * rejects (and rolls back) when the tick is lost as a whole.
   */
  async commit(): Promise<void> {
    this.throwIfFailed();
    const { ended } = this.q.takeForSending();
    if (!this.open && ended.length === 0) return;
    if (!this.answered) return this.commitUnanswered(ended);
    if (ended.length > 0) await this.send(ended, []);
    this.throwIfFailed();
    await this.end();
  }

  /** Ends the transaction after a failure (nothing of the tick is kept). */
  async rollback(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    await runCommand(this.conn, control("ROLLBACK")).catch(() => {});
  }

  /**
   * No write read anything: the whole tick goes in one round trip with its COMMIT. When a
   * statement fails, PostgreSQL rolls back instead of committing; the tick's statements, which no
   * answer shaped, then go again write by write, leaving the failing ones out.
   */
  private async commitUnanswered(ended: Piece[]): Promise<void> {
    const statements = [...(this.open ? [] : [control("BEGIN")]), ...statementsOf(ended), control("COMMIT")];
    this.open = true;
    const settled = await pipeline(this.conn, statements);
    this.throwIfLost(settled);
    const committed = settled[settled.length - 1]!;
    if (committed.ok && committed.command !== "ROLLBACK") {
      this.open = false;
      return;
    }
    // The transaction is over (rolled back): a new one takes the writes again, each alone.
    await runCommand(this.conn, control("ROLLBACK")).catch(() => {});
    this.open = false;
    await this.start();
    await this.alone(ended);
    await this.end();
  }

  /** Begins the transaction if it has not begun. */
  private async start(): Promise<void> {
    if (this.open) return;
    this.open = true;
    await this.must(control("BEGIN"));
  }

  private async end(): Promise<void> {
    try {
      const answer = await runCommand(this.conn, control("COMMIT"));
      this.open = false;
      if (answer === "ROLLBACK") throw new PgWriteError("the transaction was rolled back instead of committed", undefined);
    } catch (error) {
      throw this.lose(pgError(error));
    }
  }

  /**
   * Sends the statements of the writes that ended (inside savepoint `b`) and then those of the
   * write under way, pipelined; answers how each of `own` ended.
   */
  private async send(ended: Piece[], own: Statement[]): Promise<Settled[]> {
    const head = this.open ? [] : [control("BEGIN")];
    const endedStatements = statementsOf(ended);
    const wrapped = endedStatements.length > 0 ? [control("SAVEPOINT b"), ...endedStatements, control("RELEASE SAVEPOINT b")] : [];
    this.open = true;
    const settled = await pipeline(this.conn, [...head, ...wrapped, ...own]);
    this.throwIfLost(settled);
    const begun = settled[0]!;
    if (head.length > 0 && !begun.ok) throw this.lose(begun.error);
    const endedFailed = settled.slice(head.length, head.length + wrapped.length).some((st) => !st.ok);
    if (!endedFailed) return settled.slice(head.length + wrapped.length);
    // A statement of a write that ended failed: back to `b`, those writes again one by one, then this one's.
    await this.must(control("ROLLBACK TO SAVEPOINT b"));
    await this.alone(ended);
    await this.must(control("RELEASE SAVEPOINT b"));
    return own.length === 0 ? [] : pipeline(this.conn, own);
  }

  /** Sends the statements of writes that ended, each write in a savepoint of its own; notes those that fail. */
  private async alone(ended: Piece[]): Promise<void> {
    for (const [write, statements] of byWrite(ended)) {
      const settled = await pipeline(this.conn, [control("SAVEPOINT c"), ...statements, control("RELEASE SAVEPOINT c")]);
      this.throwIfLost(settled);
      const refused = firstRefusal(settled);
      if (!refused) continue;
      // A statement of the tick's own (a queue's promotion, after the writes) fails the tick.
      if (write < 0) throw refused;
      await this.must(control("ROLLBACK TO SAVEPOINT c"));
      await this.must(control("RELEASE SAVEPOINT c"));
      this.failedWrites.set(write, refused);
    }
  }

  /** A statement that must go through, or the tick is lost. */
  private async must(st: Statement): Promise<void> {
    try {
      await runCommand(this.conn, st);
    } catch (error) {
      throw this.lose(pgError(error));
    }
  }

  /** Loses the tick when PostgreSQL did not answer one of the statements (the connection failed). */
  private throwIfLost(settled: Settled[]): void {
    const lost = settled.find((st): st is { ok: false; error: PgWriteError } => !st.ok && !refusedStatement(st.error));
    if (lost) throw this.lose(lost.error);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }

  private lose(error: PgWriteError): PgWriteError {
    this.failure ??= error;
    return this.failure;
  }
}

/** The first statement PostgreSQL refused for itself (not for one before it). */
function firstRefusal(settled: Settled[]): PgWriteError | undefined {
  for (const st of settled) if (!st.ok && !behindFailure(st.error)) return st.error;
  return undefined;
}
