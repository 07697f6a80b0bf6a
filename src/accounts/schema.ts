import type { Migration } from "../store/migration.ts";

export const accountMigrations: Migration[] = [
  {
    id: "accounts/001-create",
    sql: `CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      email TEXT NOT NULL,
      api_key TEXT NOT NULL,
      token TEXT NOT NULL,
      plan TEXT NOT NULL,
      current_signing_key TEXT NOT NULL,
      next_signing_key TEXT NOT NULL,
      -- the keys the config last gave, so a rotation survives restarts until the config changes them
      configured_keys TEXT NOT NULL
    )`,
  },
  {
    id: "accounts/002-request-windows",
    // One row per account and limit: the window counted now (a UTC day) and its count, the same
    // for every node sharing the storage.
    sql: `CREATE TABLE request_windows (
      account_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      window_start INTEGER NOT NULL,
      count INTEGER NOT NULL,
      PRIMARY KEY (account_id, kind)
    )`,
  },
];
