import type { Migration } from "../../store/migration.ts";

export const vectorMigrations: Migration[] = [
  {
    id: "vector/001-create",
    sql: `CREATE TABLE vector_indexes (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      name TEXT NOT NULL,
      similarity_function TEXT NOT NULL,
      dimension_count INTEGER NOT NULL,
      endpoint TEXT NOT NULL,
      type TEXT NOT NULL,
      region TEXT NOT NULL,
      token TEXT NOT NULL,
      read_only_token TEXT NOT NULL,
      max_vector_count INTEGER NOT NULL,
      max_daily_updates INTEGER NOT NULL,
      max_daily_queries INTEGER NOT NULL,
      max_monthly_bandwidth INTEGER NOT NULL,
      max_writes_per_second INTEGER NOT NULL,
      max_query_per_second INTEGER NOT NULL,
      max_reads_per_request INTEGER NOT NULL,
      max_writes_per_request INTEGER NOT NULL,
      max_total_metadata_size INTEGER NOT NULL,
      creation_time INTEGER NOT NULL
    )`,
  },
  {
    id: "vector/002-account-index",
    sql: "CREATE INDEX vector_indexes_by_account ON vector_indexes (account_id, creation_time)",
  },
  {
    // Config `vectorUsage` entries already recorded, so a restart does not count them twice.
    id: "vector/003-usage-fixtures",
    sql: "CREATE TABLE vector_usage_fixtures (key TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)",
  },
];
