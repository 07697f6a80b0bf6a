/**
 * Changes of one row that touch only what a request changes: two nodes changing different fields
 * of one row at once both keep their change (a row rebuilt from a node's copy would undo the
 * other's). The same SQL on every engine; `p(i)` is the engine's i-th placeholder (1-based).
 */
export type Placeholder = (i: number) => string;

/** A value a statement takes as a parameter, on every engine. */
export type SqlValue = string | number | bigint | boolean | null | Uint8Array;

/** A statement and its parameters. */
export interface SqlStatement {
  text: string;
  params: SqlValue[];
}

/** SQLite's numbered placeholders. */
export const sqlitePlaceholder: Placeholder = (i) => `?${i}`;
/** PostgreSQL's placeholders. */
export const postgresPlaceholder: Placeholder = (i) => `$${i}`;

type Columns = Record<string, SqlValue | undefined>;

function bound(columns: Columns, p: Placeholder, params: SqlValue[]): string[] {
  return Object.entries(columns).map(([column, value]) => {
    params.push(value ?? null);
    return `${column} = ${p(params.length)}`;
  });
}

/**
 * Inserts the row `key` + `created`, or — when a row of that key is stored — sets only `changed`
 * on it; returns the row as stored (`RETURNING *`). Without a change, a stored row comes back as
 * it is (locked where the engine locks rows).
 */
export function upsertOnly(table: string, key: Columns, created: Columns, changed: Columns, p: Placeholder): SqlStatement {
  const params: SqlValue[] = [];
  const row = { ...created, ...key };
  const columns = Object.keys(row);
  const values = columns.map((c) => {
    params.push(row[c] ?? null);
    return p(params.length);
  });
  const set = bound(changed, p, params);
  const keyColumns = Object.keys(key);
  const same = columns.find((c) => !keyColumns.includes(c)) ?? keyColumns[0]!;
  if (set.length === 0) set.push(`${same} = ${table}.${same}`);
  return {
    text: `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${values.join(", ")})
      ON CONFLICT (${keyColumns.join(", ")}) DO UPDATE SET ${set.join(", ")} RETURNING *`,
    params,
  };
}

/** Sets only `changed` on the stored row of `key` (`RETURNING *`); null when nothing changes. */
export function updateOnly(table: string, key: Columns, changed: Columns, p: Placeholder): SqlStatement | null {
  const params: SqlValue[] = [];
  const set = bound(changed, p, params);
  if (set.length === 0) return null;
  const where = bound(key, p, params);
  return { text: `UPDATE ${table} SET ${set.join(", ")} WHERE ${where.join(" AND ")} RETURNING *`, params };
}

/** `columns` without the entries whose value is undefined (a field the request leaves out). */
export function given<T extends Columns>(columns: T): Partial<T> {
  return Object.fromEntries(Object.entries(columns).filter(([, v]) => v !== undefined)) as Partial<T>;
}
