import type { Migration } from "../../store/migration.ts";

export const searchMigrations: Migration[] = [
  {
    id: "search/001-create",
    sql: `CREATE TABLE search_indexes (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL,
      name TEXT NOT NULL,
      endpoint TEXT NOT NULL,
      type TEXT NOT NULL,
      region TEXT NOT NULL,
      partner_email TEXT NOT NULL,
      token TEXT NOT NULL,
      read_only_token TEXT NOT NULL,
      max_vector_count INTEGER NOT NULL,
      max_monthly_reranks INTEGER NOT NULL,
      max_daily_updates INTEGER NOT NULL,
      max_daily_queries INTEGER NOT NULL,
      max_monthly_bandwidth INTEGER NOT NULL,
      max_writes_per_second INTEGER NOT NULL,
      max_query_per_second INTEGER NOT NULL,
      max_reads_per_request INTEGER NOT NULL,
      max_writes_per_request INTEGER NOT NULL,
      creation_time INTEGER NOT NULL,
      input_enrichment_enabled INTEGER NOT NULL
    )`,
  },
  {
    id: "search/002-account-index",
    sql: "CREATE INDEX search_indexes_by_account ON search_indexes (account_id, creation_time)",
  },
];
