import { Type, type Static } from "@sinclair/typebox";
import type { Account } from "../../accounts/accounts.ts";
import type { PlanName } from "../../config/plans.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import type { ManagementDeps } from "../shared/deps.ts";
import { IndexService } from "../shared/index-service.ts";
import {
  indexEndpoint, IndexName, IndexType, newIndexId, newIndexTokens, planIndexLimits, Region, unixSeconds,
} from "../shared/indexes.ts";
import type { VectorIndexRow, VectorStore } from "./storage.ts";

export const SIMILARITY_FUNCTIONS = ["COSINE", "EUCLIDEAN", "DOT_PRODUCT"] as const;
export const SimilarityFunction = Type.Union(SIMILARITY_FUNCTIONS.map((s) => Type.Literal(s)));
export const DimensionCount = Type.Integer({ minimum: 1, maximum: 10_000 });

/** No plan of svcd names it; the hosted service's paid default (50 GiB) for every type. */
const MAX_TOTAL_METADATA_SIZE = 50 * 1024 ** 3;

export const CreateVectorIndex = Type.Object(
  {
    name: IndexName,
    region: Region,
    similarity_function: SimilarityFunction,
    dimension_count: DimensionCount,
    type: Type.Optional(IndexType),
  },
  { additionalProperties: false },
);

export function newVectorRow(
  account: Account,
  input: { id: string; name: string; region: string; type: PlanName; similarityFunction: string; dimensionCount: number },
  nowMs: number,
): VectorIndexRow {
  const limits = planIndexLimits(account, input.type);
  const tokens = newIndexTokens();
  return {
    id: input.id,
    account_id: account.id,
    name: input.name,
    similarity_function: input.similarityFunction,
    dimension_count: input.dimensionCount,
    endpoint: indexEndpoint(input.name, input.id),
    type: input.type,
    region: input.region,
    token: tokens.token,
    read_only_token: tokens.readOnlyToken,
    max_vector_count: limits.maxVectorCount,
    max_daily_updates: limits.maxDailyUpdates,
    max_daily_queries: limits.maxDailyQueries,
    max_monthly_bandwidth: limits.maxMonthlyBandwidth,
    max_writes_per_second: limits.maxWritesPerSecond,
    max_query_per_second: limits.maxQueryPerSecond,
    max_reads_per_request: limits.maxReadsPerRequest,
    max_writes_per_request: limits.maxWritesPerRequest,
    max_total_metadata_size: MAX_TOTAL_METADATA_SIZE,
    creation_time: unixSeconds(nowMs),
  };
}

/** Vector indexes: the hosted service's vector index object (docs/management-api.md, Vector indexes). */
export class VectorIndexes extends IndexService<VectorIndexRow> {
  constructor(store: VectorStore, engine: MetricsEngine, deps: ManagementDeps) {
    super(store, engine, deps, "vector index");
  }

  create(account: Account, input: Static<typeof CreateVectorIndex>): Promise<object> {
    const row = newVectorRow(
      account,
      {
        id: newIndexId(),
        name: input.name,
        region: input.region,
        type: input.type ?? account.plan,
        similarityFunction: input.similarity_function,
        dimensionCount: input.dimension_count,
      },
      this.deps.clock.now(),
    );
    return this.insert(account, row);
  }

  protected toJson(account: Account, row: VectorIndexRow) {
    return {
      customer_id: account.email,
      id: row.id,
      name: row.name,
      similarity_function: row.similarity_function,
      dimension_count: row.dimension_count,
      endpoint: row.endpoint,
      token: row.token,
      read_only_token: row.read_only_token,
      type: row.type,
      region: row.region,
      max_vector_count: row.max_vector_count,
      max_daily_updates: row.max_daily_updates,
      max_daily_queries: row.max_daily_queries,
      max_monthly_bandwidth: row.max_monthly_bandwidth,
      max_writes_per_second: row.max_writes_per_second,
      max_query_per_second: row.max_query_per_second,
      max_reads_per_request: row.max_reads_per_request,
      max_writes_per_request: row.max_writes_per_request,
      max_total_metadata_size: row.max_total_metadata_size,
      creation_time: row.creation_time,
    };
  }
}
