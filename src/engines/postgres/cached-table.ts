import type { SQL } from "bun";
import type { TickPart, TickSql } from "./tick.ts";

type Row = Record<string, unknown>;

interface Change<R> {
  key: string;
  row: R | null;
}

/**
 * A small table every node keeps in memory (accounts, queues, URL Groups, schedules, flow-control
 * keys, indexes): read synchronously, its changes queued in the tick's transaction just before
 * the commit (one delete per removed row, one multi-row upsert), and reloaded when another node
 * says it changed it (`reload`, after its notification). What a tick changed is visible to the
 * reads of the tick's later writes and, once committed, to all.
 */
export class CachedTable<R extends Row> implements TickPart {
  private rows = new Map<string, R>();
  private changes: Array<Change<R>> = [];
  private taken: Array<Change<R>> = [];
  /** Per reload under way: the changes this node committed since it began. */
  private readonly reloads = new Set<Array<Change<R>>>();

  constructor(
    private readonly sql: SQL,
    readonly table: string,
    /** The primary key's columns. */
    private readonly keyColumns: readonly (keyof R & string)[],
    /** How a row read from PostgreSQL becomes the row the store hands out (numbers, bytes). */
    private readonly decode: (raw: Row) => R,
  ) {}

  keyOf(row: Pick<R, (typeof this.keyColumns)[number]>): string {
    return this.keyColumns.map((c) => String(row[c])).join("\u0000");
  }

  /**
   * Loads the whole table (at open, and after another node changed it). This node's ticks
   * committed while the SELECT ran go on top: its snapshot may predate them, and this node is
   * not notified of its own changes.
   */
  async reload(): Promise<void> {
    const committed: Array<Change<R>> = [];
    this.reloads.add(committed);
    let rows: Row[];
    try {
      rows = await this.sql.unsafe(`SELECT * FROM ${this.table}`);
    } finally {
      this.reloads.delete(committed);
    }
    const next = new Map<string, R>();
    for (const raw of rows) {
      const row = this.decode(raw);
      next.set(this.keyOf(row), row);
    }
    for (const c of committed) {
      if (c.row) next.set(c.key, c.row);
      else next.delete(c.key);
    }
    this.rows = next;
  }

  /**
   * A row as the tick sees it: its own changes, then those of the tick being committed (taken
   * by `apply`, not yet in `rows`: a read between the two must not miss them), then the table.
   */
  get(key: string): R | undefined {
    for (const list of [this.changes, this.taken]) {
      for (let i = list.length - 1; i >= 0; i--) {
        const c = list[i]!;
        if (c.key === key) return c.row ?? undefined;
      }
    }
    return this.rows.get(key);
  }

  /** Every row as the tick sees it (see `get`). */
  all(): R[] {
    const view = new Map(this.rows);
    for (const c of [...this.taken, ...this.changes]) {
      if (c.row) view.set(c.key, c.row);
      else view.delete(c.key);
    }
    return [...view.values()];
  }

  where(test: (row: R) => boolean): R[] {
    return this.all().filter(test);
  }

  put(row: R): void {
    this.changes.push({ key: this.keyOf(row), row: { ...row } });
  }

  remove(key: string): boolean {
    const present = this.get(key) !== undefined;
    this.changes.push({ key, row: null });
    return present;
  }

  /** The tick being committed changed this table (the other nodes are told with the commit). */
  get changedInTick(): boolean {
    return this.taken.length > 0;
  }

  mark(): number {
    return this.changes.length;
  }

  rollback(mark: number): void {
    this.changes.length = mark;
  }

  /**
   * Takes the tick's changes without writing them: for a store that writes the table with
   * statements of its own (schedules); `finish` then applies them in memory as usual.
   */
  takeChanges(): void {
    this.taken = this.changes;
    this.changes = [];
  }

  /**
   * Queues the tick's changes, the last one of each row: its deletions, then its upserts (rows
   * of the same columns go as one multi-row INSERT … ON CONFLICT DO UPDATE).
   */
  apply(tx: TickSql): void {
    this.takeChanges();
    if (this.taken.length === 0) return;
    const last = new Map<string, R | null>();
    for (const c of this.taken) last.set(c.key, c.row);
    const where = this.keyColumns.map((c, i) => `${c} = $${i + 1}`).join(" AND ");
    for (const [key, row] of last) {
      if (row === null) tx.queue(`DELETE FROM ${this.table} WHERE ${where}`, key.split("\u0000"));
    }
    for (const row of last.values()) if (row !== null) tx.insert(this.table, row, this.upsert(row));
  }

  /** The conflict clause of a row's upsert: every column but the key's takes the new value. */
  private upsert(row: R): string {
    const updates = Object.keys(row)
      .filter((c) => !this.keyColumns.some((k) => k === c))
      .map((c) => `${c} = excluded.${c}`);
    const action = updates.length ? `UPDATE SET ${updates.join(", ")}` : "NOTHING";
    return `ON CONFLICT (${this.keyColumns.join(", ")}) DO ${action}`;
  }

  finish(committed: boolean): void {
    const taken = this.taken;
    this.taken = [];
    if (!committed || taken.length === 0) return;
    for (const c of taken) {
      if (c.row) this.rows.set(c.key, c.row);
      else this.rows.delete(c.key);
    }
    for (const committed of this.reloads) committed.push(...taken);
  }
}
