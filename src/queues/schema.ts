import type { Migration } from "../store/migration.ts";

export const queueMigrations: Migration[] = [
  {
    id: "queues/001-create",
    sql: `CREATE TABLE queues (
      account_id TEXT NOT NULL,
      name TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      parallelism INTEGER NOT NULL,
      paused INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, name)
    ) WITHOUT ROWID;
    -- a queue's live messages by state, in publish order (the implicit rowid ends every index
    -- entry): its active count, its lag and its FIFO head are index lookups, never scans
    CREATE INDEX messages_queue ON messages (account_id, queue_name, state) WHERE queue_name IS NOT NULL;`,
  },
];
