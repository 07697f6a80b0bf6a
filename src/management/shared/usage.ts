import { Type, type Static } from "@sinclair/typebox";
import type { MetricsEngine } from "../../metrics/engine.ts";

/** Metric names recorded per index (owner = index id). */
export const IndexMetric = {
  queries: "idx.queries",
  updates: "idx.updates",
  reranks: "idx.reranks",
  embeds: "idx.embeds",
  bandwidth: "idx.bandwidth",
  queryLatency: "idx.query_latency",
  updateLatency: "idx.update_latency",
  embedLatency: "idx.embed_latency",
  rerankLatency: "idx.rerank_latency",
  vectorCount: "idx.vector_count",
  dataSize: "idx.data_size",
  pendingIndexCount: "idx.pending_index_count",
} as const;

const Count = Type.Integer({ minimum: 0 });
const Latencies = Type.Union([Type.Number({ minimum: 0 }), Type.Array(Type.Number({ minimum: 0 }), { maxItems: 100_000 })]);

/** Sample fields: counters add up, latencies are individual samples (ms), levels replace. */
export const sampleFields = {
  at: Type.Optional(Type.Integer({ minimum: 0, description: "Unix ms; default now" })),
  queries: Type.Optional(Count),
  updates: Type.Optional(Count),
  reranks: Type.Optional(Count),
  embeds: Type.Optional(Count),
  bandwidth: Type.Optional(Count),
  queryLatencyMs: Type.Optional(Latencies),
  updateLatencyMs: Type.Optional(Latencies),
  embedLatencyMs: Type.Optional(Latencies),
  rerankLatencyMs: Type.Optional(Latencies),
  vectorCount: Type.Optional(Count),
  dataSize: Type.Optional(Count),
  pendingIndexCount: Type.Optional(Count),
};

export const UsageSample = Type.Object(sampleFields, { additionalProperties: false });
export type UsageSample = Static<typeof UsageSample>;

export const UsageBody = Type.Object(
  { samples: Type.Array(UsageSample, { minItems: 1, maxItems: 10_000 }) },
  { additionalProperties: false },
);

const COUNTERS = ["queries", "updates", "reranks", "embeds", "bandwidth"] as const;
const LATENCIES = [
  ["queryLatencyMs", IndexMetric.queryLatency],
  ["updateLatencyMs", IndexMetric.updateLatency],
  ["embedLatencyMs", IndexMetric.embedLatency],
  ["rerankLatencyMs", IndexMetric.rerankLatency],
] as const;
const LEVELS = ["vectorCount", "dataSize", "pendingIndexCount"] as const;

/** Feeds one sample into the engine at `atMs`. */
export function recordSample(engine: MetricsEngine, indexId: string, sample: UsageSample, atMs: number): void {
  for (const field of COUNTERS) {
    const value = sample[field];
    if (value) engine.count(indexId, IndexMetric[field], value, atMs);
  }
  for (const [field, metric] of LATENCIES) {
    const value = sample[field];
    if (value === undefined) continue;
    for (const ms of Array.isArray(value) ? value : [value]) engine.observe(indexId, metric, ms, atMs);
  }
  for (const field of LEVELS) {
    const value = sample[field];
    if (value !== undefined) engine.gauge(indexId, IndexMetric[field], value, atMs);
  }
}
