import type { Statement } from "./pipeline.ts";

/** Rows queued in a tick that go out as one statement (see TickTransaction). */
export interface Insert {
  kind: "insert";
  /** Its statement went out: its rows can no longer change. */
  sent: boolean;
  table: string;
  columns: string[];
  suffix: string;
  rows: unknown[][];
  /** The number of the write each row belongs to. */
  writes: number[];
}

/** Keys of consecutive `queueEach` calls with one text (a row each, of one value: see Insert). */
export interface Each {
  kind: "each";
  text: string;
  rows: unknown[][];
  /** The number of the write each row belongs to. */
  writes: number[];
}

export type Group = Insert | Each;

export function sameColumns(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((c, i) => c === b[i]);
}

export function groupStatement(item: Group, from: number, to: number): Statement {
  if (item.kind === "each") return { text: item.text, params: [item.rows.slice(from, to).map((r) => r[0])] };
  return insertStatement(item, from, to);
}

function insertStatement(item: Insert, from: number, to: number): Statement {
  const width = item.columns.length;
  const params = new Array<unknown>((to - from) * width);
  let at = 0;
  for (let r = from; r < to; r++) {
    const row = item.rows[r]!;
    for (let c = 0; c < width; c++) params[at++] = row[c];
  }
  return { text: insertText(item, to - from), params };
}

/**
 * The text of a multi-row INSERT, by table, columns, suffix and row count: a tick's inserts come
 * in few shapes, and writing the placeholders of every row anew cost the main thread more than
 * anything else in building a tick's statements (~110 per message end to end).
 */
const insertTexts = new Map<string, string>();
/** Shapes kept at most (a tick's row counts vary; the shapes in use are re-made after a clear). */
const MAX_INSERT_TEXTS = 1024;

function insertText(item: Insert, rows: number): string {
  const columns = item.columns.join(", ");
  const key = `${item.table}\u0000${columns}\u0000${item.suffix}\u0000${rows}`;
  let text = insertTexts.get(key);
  if (text === undefined) {
    const width = item.columns.length;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const placeholders: string[] = [];
      for (let c = 1; c <= width; c++) placeholders.push(`$${r * width + c}`);
      tuples.push(`(${placeholders.join(", ")})`);
    }
    text = `INSERT INTO ${item.table} (${columns}) VALUES ${tuples.join(", ")}${item.suffix ? ` ${item.suffix}` : ""}`;
    if (insertTexts.size >= MAX_INSERT_TEXTS) insertTexts.clear();
    insertTexts.set(key, text);
  }
  return text;
}
