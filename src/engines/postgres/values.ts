import type { SQL } from "bun";
import { stableHash } from "../../util/stable-hash.ts";

/** PostgreSQL's BIGINT arrives as text: every millisecond time and counter goes through here. */
export const num = (v: unknown): number => (typeof v === "number" ? v : Number(v));
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

/** Bytes as Bun's driver hands back BYTEA (a Buffer), as the stores' callers expect them. */
export const bytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(0));
export const bytesOrNull = (v: unknown): Uint8Array | null => (v === null || v === undefined ? null : bytes(v));
export const str = (v: unknown): string => (typeof v === "string" ? v : String(v));
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : str(v));

/** How each column of a store's row is read from what the driver hands back (BIGINT as text, BYTEA as a Buffer). */
export type RowCodec<R> = { [K in keyof R]: (v: unknown) => R[K] };

/**
 * A row read from PostgreSQL as the store's row type: every column the codec names goes through
 * its reader (the codec's type makes it name every column of R); columns R does not name (the
 * engine's own, such as a message's partition) are kept as they came.
 */
export function rowOf<R extends object>(raw: Record<string, unknown>, codec: RowCodec<R>): R & Record<string, unknown> {
  const row: Record<string, unknown> = { ...raw };
  for (const [column, read] of Object.entries(codec) as Array<[string, (v: unknown) => unknown]>) {
    if (column in raw) row[column] = read(raw[column]);
  }
  return row as R & Record<string, unknown>;
}

/**
 * SQL built by the shared query builder (`store/where.ts`, filters), written for SQLite, as
 * PostgreSQL takes it: named `$p0` parameters become positional, and the one scalar SQLite
 * function the filters use that PostgreSQL lacks under that name (`min(a, b, ...)`) becomes
 * `least` (`instr` is a function the engine's migrations define).
 */
export function positional(text: string, named: Record<string, string | number>): { text: string; params: Array<string | number> } {
  const params: Array<string | number> = [];
  const positions = new Map<string, number>();
  const translated = text
    .replace(/\$(p\d+)\b/g, (_, name: string) => {
      let at = positions.get(name);
      if (at === undefined) {
        at = params.push(named[name]!);
        positions.set(name, at);
      }
      return `$${at}`;
    })
    .replace(/\bmin\(/g, "least(");
  return { text: translated, params };
}

/** Runs SQL of the shared query builder on the pool (see `positional`). */
export function runShared<T>(sql: SQL, text: string, named: Record<string, string | number>): Promise<T[]> {
  const q = positional(text, named);
  return sql.unsafe(q.text, q.params) as Promise<T[]>;
}

/** The flow-control partition of an account's key (the same on every node). */
export function partitionOf(accountId: string, key: string, partitions: number): number {
  return stableHash(`${accountId}/${key}`) % partitions;
}
