import type { Migration } from "../store/migration.ts";

export const dedupMigrations: Migration[] = [
  {
    id: "dedup/001-create",
    sql: `CREATE TABLE dedup_keys (
      account_id TEXT NOT NULL,
      -- sha256 hex of the deduplication id or content, with the message's target
      key TEXT NOT NULL,
      message_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      PRIMARY KEY (account_id, key)
    ) WITHOUT ROWID;
    CREATE INDEX dedup_keys_expiry ON dedup_keys (expires_at);`,
  },
];
