/** A step of the schema, written once in SQLite's dialect (the PostgreSQL engine translates it). */
export interface Migration {
  /** Namespaced and ordered within its domain, e.g. `messages/001-create`. */
  id: string;
  sql: string;
  /** Its PostgreSQL text, when the translation of `sql` would not do (engines/postgres/ddl.ts). */
  postgres?: string;
}
