import type { Migration } from "../store/migration.ts";

export const faultMigrations: Migration[] = [
  {
    id: "faults/001-rules",
    // The rules of every account, so that every node sharing the storage applies the same ones.
    sql: `CREATE TABLE fault_rules (
      -- the order rules are tried in: the order they were created, on every node
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      -- the rule as given (FaultRuleInput) with its seed, JSON
      definition TEXT NOT NULL
    )`,
  },
];
