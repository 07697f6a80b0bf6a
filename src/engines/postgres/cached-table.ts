import type { SQL } from "bun";
import type { WriteTx } from "../../store/transactor.ts";
import { sqlOf, writeOf, type TickPart } from "./tick.ts";
import type { TickTransaction } from "./tick-tx.ts";

type Row = Record<string, unknown>;

interface Change<R> {
  key: string;
  row: R | null;
  /** The number of the write that made it, in its tick. */
  write: number;
}

/** What one tick in flight changed, in order, and whether a read of the table overlapped it. */
interface TickChanges<R> {
  changes: Array<Change<R>>;
  readsAtChange: number;
  readingAtChange: boolean;
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
  /** What each tick in flight changed; rolled back with a write that fails. */
  private readonly ticks = new Map<TickTransaction, TickChanges<R>>();
  /** Reads of the table from PostgreSQL (reloads, refreshes) run one after the other, in this chain. */
  private reads: Promise<unknown> = Promise.resolve();
  /** Reads begun so far, and whether one runs now. */
  private readsBegun = 0;
  private reading = false;

  constructor(
    private readonly sql: SQL,
    readonly table: string,
    /** The primary key's columns. */
    private readonly keyColumns: readonly (keyof R & string)[],
    /** How a row read from PostgreSQL becomes the row the store hands out (numbers, bytes). */
    readonly decode: (raw: Row) => R,
    /** Tells the table's watchers that rows changed (after a refresh of this node's own rows). */
    private readonly refreshed: (table: string) => void,
  ) {}


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

  /** A row: committed, with the tick's own changes on top inside a write (`tx`; null: outside). */
  get(tx: WriteTx | null, key: string): R | undefined {
    const changes = tx ? this.ticks.get(writeOf(tx).tick)?.changes : undefined;
    if (changes) {
      for (let i = changes.length - 1; i >= 0; i--) {
        const c = changes[i]!;
        if (c.key === key) return c.row ?? undefined;
      }
    }
    return this.rows.get(key);
  }

  /** Every row as `get` sees them. */
  all(tx: WriteTx | null): R[] {
    const changes = tx ? this.ticks.get(writeOf(tx).tick)?.changes : undefined;
    if (!changes || changes.length === 0) return [...this.rows.values()];
    const view = new Map(this.rows);
    for (const c of changes) {
      if (c.row) view.set(c.key, c.row);
      else view.delete(c.key);
    }
    return [...view.values()];
  }

  where(tx: WriteTx | null, test: (row: R) => boolean): R[] {
    return this.all(tx).filter(test);
  }

  /** A statement of the tick left this row so (a row as PostgreSQL returned it, decoded). */
  record(tx: WriteTx, row: R): R {
    const write = writeOf(tx);
    this.changesOf(write.tick).push({ key: this.keyOf(row), row: { ...row }, write: write.number });
    return row;
  }

  /** A statement of the tick deleted this row. */
  recordDeleted(tx: WriteTx, key: string): void {
    const write = writeOf(tx);
    this.changesOf(write.tick).push({ key, row: null, write: write.number });
  }

  /** The tick's changes, noting at its first whether a read of the table runs. */
  private changesOf(tick: TickTransaction): Array<Change<R>> {
    let state = this.ticks.get(tick);
    if (!state) this.ticks.set(tick, (state = { changes: [], readsAtChange: this.readsBegun, readingAtChange: this.reading }));
    return state.changes;
  }

  /** Runs a statement of the tick that returns whole rows (`RETURNING *`) and records them. */
  async returning(tx: WriteTx, text: string, params: readonly unknown[]): Promise<R[]> {
    return (await sqlOf(tx).query(text, params)).map((raw) => this.record(tx, this.decode(raw)));
  }

  /**
   * Runs a DELETE of the tick that returns the deleted rows (`RETURNING *`) and records them gone,
   * with the cached rows `belongs` says it would have deleted (gone already: another node deleted
   * them). Returns how many PostgreSQL deleted.
   */
  async deleting(tx: WriteTx, text: string, params: readonly unknown[], belongs: (row: R) => boolean): Promise<number> {
    const rows = await sqlOf(tx).query(text, params);
    for (const raw of rows) this.recordDeleted(tx, this.keyOf(this.decode(raw)));
    for (const row of this.where(tx, belongs)) this.recordDeleted(tx, this.keyOf(row));
    return rows.length;
  }

  /**
   * Reads the rows `where` selects as PostgreSQL holds them now and locks them until the tick ends
   * (another node's change of them waits for it, and this write's changes start from the truth):
   * records them, and records gone the cached rows `belongs` says it would have selected.
   */
  async lock(tx: WriteTx, where: string, params: readonly unknown[], belongs: (row: R) => boolean): Promise<R[]> {
    const rows = await sqlOf(tx).query(`SELECT * FROM ${this.table} WHERE ${where} FOR UPDATE`, params);
    const found = rows.map((raw) => this.record(tx, this.decode(raw)));
    const present = new Set(found.map((r) => this.keyOf(r)));
    for (const row of this.where(tx, belongs)) if (!present.has(this.keyOf(row))) this.recordDeleted(tx, this.keyOf(row));
    return found;
  }

  /** The tick changed this table (the other nodes are told with its commit). */
  changedIn(tick: TickTransaction): boolean {
    return (this.ticks.get(tick)?.changes.length ?? 0) > 0;
  }

  mark(tick: TickTransaction): number {
    return this.ticks.get(tick)?.changes.length ?? 0;
  }

  rollback(tick: TickTransaction, mark: number): void {
    const state = this.ticks.get(tick);
    if (state) state.changes.length = mark;
  }

  drop(tick: TickTransaction, write: number): void {
    const state = this.ticks.get(tick);
    if (state) state.changes = state.changes.filter((c) => c.write !== write);
  }

  /**
   * A committed tick's changes are read at once. A read of the table that ran while the tick was
   * under way may have seen them or not, and a later change of another node to the same rows or
   * not: in which order is unknown, so those rows are read again once that read is done.
   */
  finish(tick: TickTransaction, committed: boolean): void {
    const state = this.ticks.get(tick);
    this.ticks.delete(tick);
    if (!committed || !state || state.changes.length === 0) return;
    for (const c of state.changes) {
      if (c.row) this.rows.set(c.key, c.row);
      else this.rows.delete(c.key);
    }
    const keys = new Set(state.changes.map((c) => c.key));
    // Another tick of this node in flight that changed the same rows may commit after this one or
    // have committed before it: which is the later is not known here.
    const sharedWithTick = [...this.ticks.values()].some((other) => other.changes.some((c) => keys.has(c.key)));
    const overlapped = sharedWithTick || state.readingAtChange || this.reading || this.readsBegun !== state.readsAtChange;
    if (overlapped) this.refresh([...keys]).catch(() => {});
  }
}
