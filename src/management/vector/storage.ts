import type { WriteTx } from "../../store/transactor.ts";
import type { IndexStorage } from "../shared/storage.ts";

/** A vector index as stored. */
export type VectorIndexRow = {
  id: string;
  account_id: string;
  name: string;
  similarity_function: string;
  dimension_count: number;
  endpoint: string;
  type: string;
  region: string;
  token: string;
  read_only_token: string;
  max_vector_count: number;
  max_daily_updates: number;
  max_daily_queries: number;
  max_monthly_bandwidth: number;
  max_writes_per_second: number;
  max_query_per_second: number;
  max_reads_per_request: number;
  max_writes_per_request: number;
  max_total_metadata_size: number;
  creation_time: number;
};

/** The vector indexes as every engine keeps them. */
export type VectorStore = IndexStorage<VectorIndexRow>;

/** Keys of the configured usage entries already applied to vector indexes (each applied once), inside writes. */
export interface UsageFixtureLedgerStorage {
  seen(tx: WriteTx, key: string): Promise<boolean>;
  mark(tx: WriteTx, key: string, nowMs: number): Promise<void>;
}
