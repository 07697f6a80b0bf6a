/** A step of the schema, written once in SQLite's dialect (the PostgreSQL engine translates it). */
export interface Migration {
  /** Namespaced and ordered within its domain, e.g. `messages/001-create`. */
  id: string;
  sql: string;
  /** The step in PostgreSQL's dialect, when translating `sql` would not say the same (see engines/postgres/ddl.ts). */
  postgres?: string;
}
