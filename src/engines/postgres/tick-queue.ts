import { groupStatement, sameColumns, type Group, type Insert } from "./tick-groups.ts";
import type { PgRow, Statement } from "./pipeline.ts";

/** A statement queued by a write (`write`: its number in the tick). */
type Queued = { kind: "statement"; statement: Statement; write: number } | Group;

/** Rows `from` to `to` of a queued item (a statement is one row). */
export interface Piece {
  item: Queued;
  from: number;
  to: number;
}

const statementOf = (p: Piece): Statement => (p.item.kind === "statement" ? p.item.statement : groupStatement(p.item, p.from, p.to));
const writeOf = (p: Piece, row: number): number => (p.item.kind === "statement" ? p.item.write : p.item.writes[row]!);

/** Where the queue stood: items, and rows in the last one (an insert may grow after the mark). */
interface Position {
  items: number;
  rows: number;
}

/** A savepoint of the write under way (or of a nested part of it), sent only once one of its statements goes out. */
export interface Frame {
  name: string;
  at: Position;
  sent: boolean;
}

/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_PARAMS = 60_000;
export const control = (text: string): Statement => ({ text, params: [] });

/** The pieces' statements, in order. */
export const statementsOf = (pieces: Piece[]): Statement[] => pieces.map(statementOf);

/** The pieces' statements, write by write, in order (each write's rows apart from the others'). */
export function byWrite(pieces: Piece[]): Map<number, Statement[]> {
  const out = new Map<number, Statement[]>();
  const add = (write: number, st: Statement) => (out.get(write) ?? out.set(write, []).get(write)!).push(st);
  for (const p of pieces) {
    if (p.item.kind === "statement") {
      add(p.item.write, p.item.statement);
      continue;
    }
    let from = p.from;
    for (let r = p.from + 1; r <= p.to; r++) {
      if (r < p.to && writeOf(p, r) === writeOf(p, from)) continue;
      add(writeOf(p, from), groupStatement(p.item, from, r));
      from = r;
    }
  }
  return out;
}

/**
 * What a tick's writes queued and not yet sent, each statement and row with the write it belongs
 * to (consecutive inserts into one table, whichever writes made them, become one statement), and
 * the savepoints of the write under way, placed where its parts began and sent only once one of
 * its statements goes out.
 */
export class TickQueue {
  private queued: Queued[] = [];
  /** Rows and statements on behalf of writes that ended (see insertLate). */
  private late: Queued[] = [];
  readonly frames: Frame[] = [];
  /** The number of the write under way (-1 between writes). */
  write = -1;

  get empty(): boolean {
    return this.queued.length === 0 && this.late.length === 0;
  }

  /** A part of the write under way begins (its first: the write itself). */
  pushFrame(): void {
    this.frames.push({ name: `f${this.frames.length}`, at: this.position(), sent: false });
  }

  /** The innermost part ends; when it failed before its savepoint went out, its statements go too. */
  popFrame(undone: boolean): Frame {
    const frame = this.frames.pop()!;
    if (undone && !frame.sent) this.truncate(frame.at);
    return frame;
  }

  /** Forgets everything queued (what is queued after a savepoint that went out is its own part's). */
  clear(): void {
    this.queued = [];
  }

  queue(text: string, params: readonly unknown[] = []): void {
    this.queued.push({ kind: "statement", statement: { text, params }, write: this.write });
  }

  insert(table: string, row: PgRow, suffix = ""): void {
    this.insertInto(this.queued, table, row, suffix, this.write);
  }

  /**
   * A row written on behalf of write `write`, which ended: it goes at the end of the ended writes'
   * part of the next batch, with that write's own statements (and undone with them).
   */
  insertLate(table: string, row: PgRow, suffix: string, write: number): void {
    this.insertInto(this.late, table, row, suffix, write);
  }

  /** A statement on behalf of write `write`, which ended (see insertLate). */
  queueLate(text: string, params: readonly unknown[], write: number): void {
    this.late.push({ kind: "statement", statement: { text, params }, write });
  }

  private insertInto(queued: Queued[], table: string, row: PgRow, suffix: string, write: number): void {
    const columns = Object.keys(row);
    const values = columns.map((c) => row[c] ?? null);
    const last = queued[queued.length - 1];
    if (
      last?.kind === "insert" &&
      last.table === table &&
      last.suffix === suffix &&
      (last.rows.length + 1) * columns.length <= MAX_PARAMS &&
      sameColumns(last.columns, columns)
    ) {
      last.rows.push(values);
      last.writes.push(write);
      return;
    }
    const insert: Insert = { kind: "insert", sent: false, table, columns, suffix, rows: [values], writes: [write] };
    queued.push(insert);
  }

  queueEach(text: string, key: unknown): void {
    const last = this.queued[this.queued.length - 1];
    if (last?.kind === "each" && last.text === text && last.rows.length < MAX_PARAMS) {
      last.rows.push([key]);
      last.writes.push(this.write);
    } else this.queued.push({ kind: "each", text, rows: [[key]], writes: [this.write] });
  }

  /** A statement of the write under way without parameters (savepoints). */
  queueOwn(text: string): void {
    this.queued.push({ kind: "statement", statement: control(text), write: this.write });
  }

  /** Every queued item, whole, taken away. */
  takeAll(): Piece[] {
    const pieces = this.queued.map((item) => ({ item, from: 0, to: item.kind === "statement" ? 1 : item.rows.length }));
    this.queued = [];
    return pieces;
  }

  /**
   * What is queued, in two parts: the pieces of the writes that ended (`ended`), and the
   * statements of the write under way (`own`), its savepoints placed where its parts began (its
   * statements may go out now; they must still be undoable).
   */
  takeForSending(): { ended: Piece[]; own: Statement[] } {
    const pieces: Array<Piece | { frame: Frame }> = [];
    const unsent = this.frames.filter((f) => !f.sent);
    let frame = 0;
    this.queued.forEach((item, index) => {
      if (item.kind === "statement") {
        while (frame < unsent.length && unsent[frame]!.at.items <= index) pieces.push({ frame: unsent[frame++]! });
        pieces.push({ item, from: 0, to: 1 });
        return;
      }
      // A savepoint may fall inside a group: the rows before it go first.
      let from = 0;
      while (frame < unsent.length && unsent[frame]!.at.items <= index + 1) {
        const f = unsent[frame]!;
        const cut = f.at.items === index + 1 ? f.at.rows : 0;
        if (cut > from) pieces.push({ item, from, to: cut });
        from = Math.max(from, cut);
        pieces.push({ frame: f });
        frame++;
      }
      if (from < item.rows.length) pieces.push({ item, from, to: item.rows.length });
    });
    while (frame < unsent.length) pieces.push({ frame: unsent[frame++]! });
    this.queued = [];
    // What is queued from now on starts at the beginning of the (empty) queue.
    for (const f of this.frames) f.at = { items: 0, rows: 0 };
    // The write under way owns everything after its first savepoint (all of it once that went out).
    const top = this.frames[0];
    const split = !top ? pieces.length : top.sent && !unsent.includes(top) ? 0 : pieces.findIndex((p) => "frame" in p && p.frame === top);
    const ended = pieces.slice(0, split).filter((p): p is Piece => !("frame" in p));
    for (const item of this.late) ended.push({ item, from: 0, to: item.kind === "statement" ? 1 : item.rows.length });
    this.late = [];
    const own = pieces.slice(split).map((p) => ("frame" in p ? this.savepoint(p.frame) : statementOf(p)));
    return { ended, own };
  }

  private position(): Position {
    const last = this.queued[this.queued.length - 1];
    return { items: this.queued.length, rows: last && last.kind !== "statement" ? last.rows.length : 0 };
  }

  private truncate(at: Position): void {
    this.queued.length = at.items;
    const last = this.queued[at.items - 1];
    if (last && last.kind !== "statement") {
      last.rows.length = at.rows;
      last.writes.length = at.rows;
    }
  }

  private savepoint(frame: Frame): Statement {
    frame.sent = true;
    return control(`SAVEPOINT ${frame.name}`);
  }
}
