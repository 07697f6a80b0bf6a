import { Type } from "@sinclair/typebox";
import { PERIOD_NAMES } from "../../metrics/time.ts";

/** The answers of the management API, as the OpenAPI document shows them. */

const PointJson = Type.Object({ x: Type.String(), y: Type.Number() });
const Series = Type.Array(PointJson);
const Limits = {
  max_vector_count: Type.Number(),
  max_daily_updates: Type.Number(),
  max_daily_queries: Type.Number(),
  max_monthly_bandwidth: Type.Number(),
  max_writes_per_second: Type.Number(),
  max_query_per_second: Type.Number(),
  max_reads_per_request: Type.Number(),
  max_writes_per_request: Type.Number(),
};

export const SearchIndexJson = Type.Object({
  customer_id: Type.String(),
  id: Type.String(),
  name: Type.String(),
  endpoint: Type.String(),
  type: Type.String(),
  region: Type.String(),
  token: Type.String(),
  read_only_token: Type.String(),
  ...Limits,
  max_monthly_reranks: Type.Number(),
  creation_time: Type.Number({ description: "Unix seconds" }),
  input_enrichment_enabled: Type.Boolean(),
  throughput_vector: Series,
});

export const VectorIndexJson = Type.Object({
  customer_id: Type.String(),
  id: Type.String(),
  name: Type.String(),
  similarity_function: Type.String(),
  dimension_count: Type.Integer(),
  endpoint: Type.String(),
  token: Type.String(),
  read_only_token: Type.String(),
  type: Type.String(),
  region: Type.String(),
  ...Limits,
  max_total_metadata_size: Type.Number(),
  creation_time: Type.Number({ description: "Unix seconds" }),
});

/** An action's answer: the JSON string "OK". */
export const OkJson = Type.Literal("OK");

export const VectorStatsJson = Type.Object(
  {
    pending_index_count: Type.Number(),
    current_vector_count: Type.Number(),
    daily_query_count: Type.Number(),
    daily_update_count: Type.Number(),
    monthly_query_count: Type.Number(),
    monthly_update_count: Type.Number(),
    monthly_bandwidth_usage: Type.Number(),
    storage_usage: Type.Number(),
    monthly_cost: Type.Number(),
    days: Type.Array(Type.String()),
    daily_query_requests: Series,
    daily_update_requests: Series,
    daily_bandwidths: Series,
    query_throughput: Series,
    update_throughput: Series,
    query_latency_mean: Series,
    query_latency_99: Series,
    vector_count: Series,
    data_size: Series,
  },
  { description: "and the other latency series (update, embeds), each a list of points" },
);

export const MessagingStatsJson = Type.Object(
  {
    days: Type.Array(Type.String()),
    daily_requests: Type.Array(Type.Object({ x: Type.String(), y: Type.Number(), workflow_message: Type.Number(), workflow_run: Type.Number() })),
    daily_billings: Series,
    daily_bandwidths: Series,
    daily_used: Series,
    daily_used_workflow: Series,
    daily_qstash_messages: Type.Array(Type.Object({ id: Type.String(), data_points: Series })),
    daily_workflow_messages: Type.Array(Type.Object({ id: Type.String(), data_points: Series })),
    dlq_message_count: Type.Integer(),
    daily_bandwidth_used: Series,
    total_monthly_billing: Type.Number(),
  },
  { description: "usage computed from what really happened" },
);

export const RecordedJson = Type.Object({ recorded: Type.Integer() });

export const PeriodQuery = Type.Object({
  period: Type.Optional(Type.String({ description: `one of ${PERIOD_NAMES.join(", ")} (default 1h)` })),
});
