import type { Migration } from "../store/migration.ts";

export const messageMigrations: Migration[] = [
  {
    id: "messages/001-create",
    sql: `CREATE TABLE messages (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      state TEXT NOT NULL,
      dispatch_at INTEGER,
      not_before INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      retried INTEGER NOT NULL DEFAULT 0,
      max_retries INTEGER NOT NULL,
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      headers TEXT NOT NULL,
      body BLOB NOT NULL,
      topic_name TEXT,
      queue_name TEXT,
      schedule_id TEXT,
      caller_ip TEXT,
      label TEXT,
      flow_key TEXT,
      -- rarely filtered settings: timeout, retry expression, endpoint name, flow values, callbacks
      extra TEXT NOT NULL
    );
    -- the dispatcher's only way in: due messages by time, never a scan
    CREATE INDEX messages_due ON messages (dispatch_at) WHERE dispatch_at IS NOT NULL;
    -- in flight at a crash: found again at start
    CREATE INDEX messages_active ON messages (state) WHERE state = 'ACTIVE';
    CREATE INDEX messages_account ON messages (account_id, created_at);`,
  },
  {
    // The body stored once (engines/sqlite/bodies.ts): the row then holds an empty body and this reference.
    id: "messages/002-shared-body",
    sql: `ALTER TABLE messages ADD COLUMN shared_body INTEGER;
    -- the log entry that also held the body is gone: the message's deletion drops the body
    ALTER TABLE messages ADD COLUMN body_alone INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    // An account's messages in the order they were stored (bulk cancel's pages, `ORDER BY rowid`):
    // SQLite ends every index with the rowid, so (account_id) alone gives that order as one range,
    // where (account_id, created_at) sorted all of the account's messages again for every page.
    id: "messages/003-account-order",
    sql: `DROP INDEX messages_account;
    CREATE INDEX messages_account ON messages (account_id);`,
    // PostgreSQL orders them by seq (postgres/001) and plans the pages by itself: its index stays.
    postgres: "SELECT 1",
  },
  {
    // A message's deletion drops its body when it was the body's last holder, inside the DELETE
    // itself: a read of the row before each deletion cost 0.8 µs per message ended.
    id: "messages/004-drop-alone-body",
    sql: `CREATE TRIGGER messages_drop_alone_body AFTER DELETE ON messages
    WHEN OLD.body_alone = 1 AND OLD.shared_body IS NOT NULL
    BEGIN DELETE FROM message_bodies WHERE body_id = OLD.shared_body; END;`,
    // PostgreSQL stores every body with its message (no shared bodies): nothing to drop.
    postgres: "SELECT 1",
  },
];

/**
 * Bodies stored once (the SQLite engine's `engines/sqlite/bodies.ts`); the table exists on every
 * engine, applied before the messages' own migrations.
 */
export const bodyMigrations: Migration[] = [
  {
    id: "bodies/001-create",
    sql: "CREATE TABLE message_bodies (body_id INTEGER PRIMARY KEY, bytes BLOB NOT NULL)",
  },
];
