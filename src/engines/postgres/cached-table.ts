import type { SQL } from "bun";
import type { TickPart, TickScope } from "./tick.ts";

type Row = Record<string, unknown>;

interface Change<R> {
  key: string;
  row: R | null;
}

/**
 * A small table every node keeps in memory (accounts, queues, URL Groups, schedules, flow-control
 * keys, indexes), as a view of committed rows. Its stores change it with statements that touch
 * only what a request changes (`UPDATE … SET paused = …`, an insert of a new row), run in the
 * tick's transaction, and `record` here what those statements left (the row PostgreSQL returned,
 * or its deletion). Reads inside a write see the committed rows with the tick's recorded changes
 * on top; reads outside writes see committed rows only. A tick's changes join the committed rows
 * once it commits; another node's, when its notification makes this node `reload`.
 */
export class CachedTable<R extends Row> implements TickPart {
  private rows = new Map<string, R>();
  /** What the tick under way changed, in order; rolled back with a write that fails. */
  private changes: Array<Change<R>> = [];
  /** Reads of the table from PostgreSQL (reloads, refreshes) run one after the other, in this chain. */
  private reads: Promise<unknown> = Promise.resolve();
  /** Reads begun so far, and whether one runs now. */
  private readsBegun = 0;
  private reading = false;
  /** Whether a read overlapped the tick under way since it first changed the table. */
  private readsAtChange = 0;
  private readingAtChange = false;

  constructor(
    private readonly sql: SQL,
    readonly table: string,
    /** The primary key's columns. */
    private readonly keyColumns: readonly (keyof R & string)[],
    /** How a row read from PostgreSQL becomes the row the store hands out (numbers, bytes). */
    readonly decode: (raw: Row) => R,
    /** The write under way: only its reads see the tick's changes; its statements run in its transaction. */
    private readonly scope: TickScope,
    /** Tells the table's watchers that rows changed (after a refresh of this node's own rows). */
    private readonly refreshed: (table: string) => void,
  ) {}

  private inWrite(): boolean {
    return this.scope.current !== null;
  }

  keyOf(row: Pick<R, (typeof this.keyColumns)[number]>): string {
    return this.keyColumns.map((c) => String(row[c])).join("\u0000");
  }

  /** Loads the whole table (at open, and after another node changed it). */
  reload(): Promise<void> {
    return this.read(async () => {
      const rows = await this.sql.unsafe(`SELECT * FROM ${this.table}`);
      const next = new Map<string, R>();
      for (const raw of rows) {
        const row = this.decode(raw);
        next.set(this.keyOf(row), row);
      }
      this.rows = next;
    });
  }

  /** Reads these rows again, after whatever read is under way. */
  private async refresh(keys: readonly string[]): Promise<void> {
    const where = this.keyColumns.map((c, i) => `${c}::text = $${i + 1}`).join(" AND ");
    await this.read(async () => {
      const found = await Promise.all(keys.map((key) => this.sql.unsafe(`SELECT * FROM ${this.table} WHERE ${where}`, key.split("\u0000"))));
      keys.forEach((key, i) => {
        const raw = found[i]![0];
        if (raw) this.rows.set(key, this.decode(raw));
        else this.rows.delete(key);
      });
    });
    this.refreshed(this.table);
  }

  private read(work: () => Promise<void>): Promise<void> {
    const run = async () => {
      this.readsBegun++;
      this.reading = true;
      try {
        await work();
      } finally {
        this.reading = false;
      }
    };
    const done = this.reads.then(run, run);
    this.reads = done.catch(() => {});
    return done;
  }

  /** A row: committed, with the tick's own changes on top inside a write. */
  get(key: string): R | undefined {
    if (this.inWrite()) {
      for (let i = this.changes.length - 1; i >= 0; i--) {
        const c = this.changes[i]!;
        if (c.key === key) return c.row ?? undefined;
      }
    }
    return this.rows.get(key);
  }

  /** Every row as `get` sees them. */
  all(): R[] {
    if (!this.inWrite() || this.changes.length === 0) return [...this.rows.values()];
    const view = new Map(this.rows);
    for (const c of this.changes) {
      if (c.row) view.set(c.key, c.row);
      else view.delete(c.key);
    }
    return [...view.values()];
  }

  where(test: (row: R) => boolean): R[] {
    return this.all().filter(test);
  }

  /** A statement of the tick left this row so (a row as PostgreSQL returned it, decoded). */
  record(row: R): R {
    this.noteChange();
    this.changes.push({ key: this.keyOf(row), row: { ...row } });
    return row;
  }

  /** Records the first row a statement returned, decoded, if it returned one. */
  recordReturned(rows: readonly Row[]): R | undefined {
    const raw = rows[0];
    return raw ? this.record(this.decode(raw)) : undefined;
  }

  /** A statement of the tick deleted this row. */
  recordDeleted(key: string): void {
    this.noteChange();
    this.changes.push({ key, row: null });
  }

  private noteChange(): void {
    if (this.changes.length > 0) return;
    this.readsAtChange = this.readsBegun;
    this.readingAtChange = this.reading;
  }

  /** Runs a statement of the tick that returns whole rows (`RETURNING *`) and records them. */
  returning(text: string, params: readonly unknown[]): R[] {
    return this.scope.tx.query(text, params).map((raw) => this.record(this.decode(raw)));
  }

  /**
   * Runs a DELETE of the tick that returns the deleted rows (`RETURNING *`) and records them gone,
   * with the cached rows `belongs` says it would have deleted (gone already: another node deleted
   * them). Returns how many PostgreSQL deleted.
   */
  deleting(text: string, params: readonly unknown[], belongs: (row: R) => boolean): number {
    const rows = this.scope.tx.query(text, params);
    for (const raw of rows) this.recordDeleted(this.keyOf(this.decode(raw)));
    for (const row of this.where(belongs)) this.recordDeleted(this.keyOf(row));
    return rows.length;
  }

  /**
   * Reads the rows `where` selects as PostgreSQL holds them now and locks them until the tick ends
   * (another node's change of them waits for it, and this write's changes start from the truth):
   * records them, and records gone the cached rows `belongs` says it would have selected.
   */
  lock(where: string, params: readonly unknown[], belongs: (row: R) => boolean): R[] {
    const rows = this.scope.tx.query(`SELECT * FROM ${this.table} WHERE ${where} FOR UPDATE`, params);
    const found = rows.map((raw) => this.record(this.decode(raw)));
    const present = new Set(found.map((r) => this.keyOf(r)));
    for (const row of this.where(belongs)) if (!present.has(this.keyOf(row))) this.recordDeleted(this.keyOf(row));
    return found;
  }

  /** The tick under way changed this table (the other nodes are told with the commit). */
  get changedInTick(): boolean {
    return this.changes.length > 0;
  }

  mark(): number {
    return this.changes.length;
  }

  rollback(mark: number): void {
    this.changes.length = mark;
  }

  /**
   * A committed tick's changes are read at once. A read of the table that ran while the tick was
   * under way may have seen them or not, and a later change of another node to the same rows or
   * not: in which order is unknown, so those rows are read again once that read is done.
   */
  finish(committed: boolean): void {
    const changes = this.changes;
    this.changes = [];
    if (!committed || changes.length === 0) return;
    for (const c of changes) {
      if (c.row) this.rows.set(c.key, c.row);
      else this.rows.delete(c.key);
    }
    if (this.readingAtChange || this.reading || this.readsBegun !== this.readsAtChange)
      this.refresh([...new Set(changes.map((c) => c.key))]).catch(() => {});
  }
}
