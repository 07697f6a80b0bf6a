import type { Statement } from "./writer-protocol.ts";

/** Rows queued in a tick that go out as one statement (see TickTransaction). */
export interface Insert {
  kind: "insert";
  /** Its statement went out: its rows can no longer change. */
  sent: boolean;
  table: string;
  columns: string[];
  suffix: string;
  rows: unknown[][];
}

/** Keys of consecutive `queueEach` calls with one text (a row each, of one value: see Insert). */
export interface Each {
  kind: "each";
  text: string;
  rows: unknown[][];
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
  const params: unknown[] = [];
  const tuples: string[] = [];
  for (let r = from; r < to; r++) {
    const row = item.rows[r]!;
    tuples.push(`(${row.map((v) => `$${params.push(v)}`).join(", ")})`);
  }
  const text = `INSERT INTO ${item.table} (${item.columns.join(", ")}) VALUES ${tuples.join(", ")}${item.suffix ? ` ${item.suffix}` : ""}`;
  return { text, params };
}
