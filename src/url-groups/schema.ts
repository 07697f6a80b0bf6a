import type { Migration } from "../store/migration.ts";

export const urlGroupMigrations: Migration[] = [
  {
    id: "url-groups/001-create",
    sql: `CREATE TABLE url_groups (
      account_id TEXT NOT NULL,
      name TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      -- PATCHed default headers, JSON [[name, value], ...]: the lowest precedence on every publish
      default_headers TEXT NOT NULL DEFAULT '[]',
      PRIMARY KEY (account_id, name)
    ) WITHOUT ROWID;
    CREATE TABLE url_group_endpoints (
      -- fan-out and listing order: the order endpoints were added
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      group_name TEXT NOT NULL,
      name TEXT,
      url TEXT NOT NULL,
      FOREIGN KEY (account_id, group_name) REFERENCES url_groups (account_id, name) ON DELETE CASCADE
    );
    CREATE INDEX url_group_endpoints_group ON url_group_endpoints (account_id, group_name, seq);`,
  },
];
