import type { IndexStorage } from "../shared/storage.ts";

/** A search index as stored. */
export type SearchIndexRow = {
  id: string;
  account_id: string;
  name: string;
  endpoint: string;
  type: string;
  region: string;
  partner_email: string;
  token: string;
  read_only_token: string;
  max_vector_count: number;
  max_monthly_reranks: number;
  max_daily_updates: number;
  max_daily_queries: number;
  max_monthly_bandwidth: number;
  max_writes_per_second: number;
  max_query_per_second: number;
  max_reads_per_request: number;
  max_writes_per_request: number;
  creation_time: number;
  input_enrichment_enabled: number;
};

/** The search indexes as every engine keeps them. */
export type SearchStore = IndexStorage<SearchIndexRow>;
