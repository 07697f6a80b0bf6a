import type { SQL } from "bun";
import type { AccountRow } from "../../accounts/storage.ts";
import type { SearchIndexRow } from "../../management/search/storage.ts";
import type { VectorIndexRow } from "../../management/vector/storage.ts";
import type { QueueRow } from "../../queues/storage.ts";
import type { UrlGroupRow } from "../../url-groups/storage.ts";
import { CachedTable } from "./cached-table.ts";
import type { FlowKeyRow } from "../../flow-control/storage.ts";
import type { FaultRuleRow } from "../../faults/storage.ts";
import type { RateStartRow } from "./flow-stores.ts";
import type { LedgerRow } from "./index-stores.ts";
import type { EndpointFull } from "./url-group-store.ts";
import { num, numOrNull, rowOf, str, strOrNull, type RowCodec } from "./values.ts";

export { PgAccountStore, PgRequestCounts } from "./account-store.ts";
export { PgFlowKeyStore, PgFlowReleases, PgFlowStore } from "./flow-stores.ts";
export { PgIndexStore, PgUsageLedger } from "./index-stores.ts";
export { PgQueuePromotions, PgQueueStore } from "./queue-store.ts";
export { PgUrlGroupStore } from "./url-group-store.ts";

type Raw = Record<string, unknown>;

const ACCOUNT: RowCodec<AccountRow> = {
  id: str,
  email: str,
  api_key: str,
  token: str,
  plan: str,
  current_signing_key: str,
  next_signing_key: str,
  configured_keys: str,
};
const GROUP: RowCodec<UrlGroupRow> = {
  account_id: str,
  name: str,
  created_at: num,
  updated_at: num,
  default_headers: str,
};
const ENDPOINT: RowCodec<EndpointFull> = { seq: num, account_id: str, group_name: str, name: strOrNull, url: str };
const QUEUE: RowCodec<QueueRow> = {
  account_id: str,
  name: str,
  created_at: num,
  updated_at: num,
  parallelism: num,
  paused: num,
};
const FLOW_KEY: RowCodec<FlowKeyRow> = {
  account_id: str,
  key: str,
  paused: num,
  pinned_parallelism: numOrNull,
  pinned_rate: numOrNull,
  pinned_period_ms: numOrNull,
  window_start: numOrNull,
};
const RATE_START: RowCodec<RateStartRow> = { id: str, account_id: str, key: str, started_at: num, counts_until: num };
const LEDGER: RowCodec<LedgerRow> = { key: str, applied_at: num };
const FAULT_RULE: RowCodec<FaultRuleRow> = { seq: num, id: str, account_id: str, created_at: num, definition: str };
/** What the two kinds of index have in common. */
const INDEX = {
  id: str,
  account_id: str,
  name: str,
  endpoint: str,
  type: str,
  region: str,
  token: str,
  read_only_token: str,
  max_vector_count: num,
  max_daily_updates: num,
  max_daily_queries: num,
  max_monthly_bandwidth: num,
  max_writes_per_second: num,
  max_query_per_second: num,
  max_reads_per_request: num,
  max_writes_per_request: num,
  creation_time: num,
};
const SEARCH: RowCodec<SearchIndexRow> = {
  ...INDEX,
  partner_email: str,
  max_monthly_reranks: num,
  input_enrichment_enabled: num,
};
const VECTOR: RowCodec<VectorIndexRow> = {
  ...INDEX,
  similarity_function: str,
  dimension_count: num,
  max_total_metadata_size: num,
};

/** The small tables every node keeps in memory (see CachedTable). */
export function cachedTables(sql: SQL, refreshed: (table: string) => void) {
  const table = <R extends object>(name: string, key: readonly (keyof R & string)[], codec: RowCodec<R>) =>
    new CachedTable<R & Raw>(sql, name, key, (raw) => rowOf(raw, codec), refreshed);
  return {
    accounts: table("accounts", ["id"], ACCOUNT),
    groups: table("url_groups", ["account_id", "name"], GROUP),
    endpoints: table("url_group_endpoints", ["seq"], ENDPOINT),
    queues: table("queues", ["account_id", "name"], QUEUE),
    flowKeys: table("flow_keys", ["account_id", "key"], FLOW_KEY),
    rateStarts: table("flow_rate_starts", ["id"], RATE_START),
    search: table("search_indexes", ["id"], SEARCH),
    vector: table("vector_indexes", ["id"], VECTOR),
    ledger: table("vector_usage_fixtures", ["key"], LEDGER),
    faultRules: table("fault_rules", ["seq"], FAULT_RULE),
  };
}
