import type { Database } from "bun:sqlite";
import { IndexStore, type IndexStorage } from "../shared/index-store.ts";

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

const COLUMNS = [
  "id", "account_id", "name", "similarity_function", "dimension_count", "endpoint", "type", "region", "token",
  "read_only_token", "max_vector_count", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "max_total_metadata_size", "creation_time",
] as const satisfies ReadonlyArray<keyof VectorIndexRow>;

export type VectorStore = IndexStorage<VectorIndexRow>;
export const createVectorStore = (db: Database): VectorStore => new IndexStore(db, "vector_indexes", COLUMNS);

/** Keys of config usage entries already recorded. */
export class UsageFixtureLedger {
  private readonly selectKey;
  private readonly insertKey;
  constructor(db: Database) {
    this.selectKey = db.prepare<{ key: string }, [string]>("SELECT key FROM vector_usage_fixtures WHERE key = ?");
    this.insertKey = db.prepare("INSERT OR IGNORE INTO vector_usage_fixtures (key, applied_at) VALUES (?, ?)");
  }
  seen(key: string): boolean {
    return this.selectKey.get(key) !== null;
  }
  mark(key: string, nowMs: number): void {
    this.insertKey.run(key, nowMs);
  }
}

/** What the domain uses of the store (every engine provides it). */
export type UsageFixtureLedgerStorage = Pick<UsageFixtureLedger, keyof UsageFixtureLedger>;
