import type { Migration } from "../store/migration.ts";

export const flowControlMigrations: Migration[] = [
  {
    id: "flow-control/001-index",
    sql: `-- the keys of an account, and a key's held messages in publish order
    CREATE INDEX messages_flow ON messages (account_id, flow_key, state) WHERE flow_key IS NOT NULL;
    -- held messages are released at start (their lane counters lived in memory)
    CREATE INDEX messages_held ON messages (state) WHERE state = 'HELD';`,
  },
  {
    id: "flow-control/002-steering",
    sql: `-- what the API set for a key (pause, pinned limits); a row exists once an operation named the key
    CREATE TABLE flow_keys (
      account_id TEXT NOT NULL,
      key TEXT NOT NULL,
      paused INTEGER NOT NULL DEFAULT 0,
      pinned_parallelism INTEGER,
      pinned_rate INTEGER,
      pinned_period_ms INTEGER,
      -- when the current rate window was started by resetRate or pin (Unix ms)
      window_start INTEGER,
      PRIMARY KEY (account_id, key)
    ) WITHOUT ROWID;
    -- delivery starts of rate-limited keys still inside their window, so a restart keeps the window
    CREATE TABLE flow_rate_starts (
      account_id TEXT NOT NULL,
      key TEXT NOT NULL,
      started_at INTEGER NOT NULL,
      counts_until INTEGER NOT NULL
    );
    CREATE INDEX flow_rate_starts_key ON flow_rate_starts (account_id, key, counts_until);`,
  },
];
