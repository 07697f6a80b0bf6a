import type { Database } from "bun:sqlite";
import { IndexStore, type IndexStorage } from "../shared/index-store.ts";

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

const COLUMNS = [
  "id", "account_id", "name", "endpoint", "type", "region", "partner_email", "token", "read_only_token",
  "max_vector_count", "max_monthly_reranks", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "creation_time", "input_enrichment_enabled",
] as const satisfies ReadonlyArray<keyof SearchIndexRow>;

export type SearchStore = IndexStorage<SearchIndexRow>;
export const createSearchStore = (db: Database): SearchStore => new IndexStore(db, "search_indexes", COLUMNS);
