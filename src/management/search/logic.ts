import { Type, type Static } from "@sinclair/typebox";
import type { Account } from "../../accounts/accounts.ts";
import type { PlanName } from "../../config/plans.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import { addSeries, periodPoints } from "../../metrics/points.ts";
import { periodGrid } from "../../metrics/time.ts";
import type { ManagementDeps } from "../shared/deps.ts";
import { IndexService } from "../shared/index-service.ts";
import {
  indexEndpoint, IndexName, IndexType, newIndexId, newIndexTokens, planIndexLimits, Region, unixSeconds,
} from "../shared/indexes.ts";
import { IndexMetric } from "../shared/usage.ts";
import type { SearchIndexRow, SearchStore } from "./storage.ts";

export const CreateSearchIndex = Type.Object(
  { name: IndexName, region: Region, type: IndexType },
  { additionalProperties: false },
);

/** A row with fresh tokens and the plan's default limits; fixtures override parts of it. */
export function newSearchRow(
  account: Account,
  input: { id: string; name: string; region: string; type: PlanName },
  nowMs: number,
): SearchIndexRow {
  const limits = planIndexLimits(account, input.type);
  const tokens = newIndexTokens();
  return {
    id: input.id,
    account_id: account.id,
    name: input.name,
    endpoint: indexEndpoint(input.name, input.id),
    type: input.type,
    region: input.region,
    partner_email: "",
    token: tokens.token,
    read_only_token: tokens.readOnlyToken,
    max_vector_count: limits.maxVectorCount,
    max_monthly_reranks: limits.maxMonthlyReranks,
    max_daily_updates: limits.maxDailyUpdates,
    max_daily_queries: limits.maxDailyQueries,
    max_monthly_bandwidth: limits.maxMonthlyBandwidth,
    max_writes_per_second: limits.maxWritesPerSecond,
    max_query_per_second: limits.maxQueryPerSecond,
    max_reads_per_request: limits.maxReadsPerRequest,
    max_writes_per_request: limits.maxWritesPerRequest,
    creation_time: unixSeconds(nowMs),
    input_enrichment_enabled: 0,
  };
}

/** Search indexes: the object of docs/management-api.md, every field always present, in its order. */
export class SearchIndexes extends IndexService<SearchIndexRow> {
  constructor(store: SearchStore, engine: MetricsEngine, deps: ManagementDeps) {
    super(store, engine, deps, "search index");
  }

  create(account: Account, input: Static<typeof CreateSearchIndex>): Promise<object> {
    return this.insert(account, newSearchRow(account, { ...input, id: newIndexId() }, this.deps.clock.now()));
  }

  protected async toJson(account: Account, row: SearchIndexRow) {
    const grid = periodGrid("1h", this.deps.clock.now());
    const throughput = addSeries(
      await this.engine.sums(row.id, IndexMetric.queries, grid),
      await this.engine.sums(row.id, IndexMetric.updates, grid),
    );
    return {
      customer_id: account.email,
      id: row.id,
      name: row.name,
      endpoint: row.endpoint,
      type: row.type,
      region: row.region,
      [this.deps.dialect.partnerEmailField]: row.partner_email,
      token: row.token,
      read_only_token: row.read_only_token,
      max_vector_count: row.max_vector_count,
      max_monthly_reranks: row.max_monthly_reranks,
      max_daily_updates: row.max_daily_updates,
      max_daily_queries: row.max_daily_queries,
      max_monthly_bandwidth: row.max_monthly_bandwidth,
      max_writes_per_second: row.max_writes_per_second,
      max_query_per_second: row.max_query_per_second,
      max_reads_per_request: row.max_reads_per_request,
      max_writes_per_request: row.max_writes_per_request,
      creation_time: row.creation_time,
      input_enrichment_enabled: row.input_enrichment_enabled === 1,
      throughput_vector: periodPoints(grid, throughput),
    };
  }
}
