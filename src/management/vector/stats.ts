import type { MetricsEngine } from "../../metrics/engine.ts";
import { roundAmount } from "../../metrics/money.ts";
import { dailyPoints, periodPoints } from "../../metrics/points.ts";
import { dayGrid, DAY_MIN, MINUTE_MS, monthGrid, periodGrid, pointStartMs, weekdayName, type Period } from "../../metrics/time.ts";
import { IndexMetric as M } from "../shared/usage.ts";

/** USD per 100,000 queries and updates of a non-free index (the hosted service's pay-as-you-go price). */
export const VECTOR_PRICE_PER_100K = 0.4;
const DAILY_DAYS = 5;

/**
 * Vector index statistics, every field of docs/management-api.md in its order, from the usage recorded for the
 * index. Daily series: the last 5 days including today; period series: 60 (240) buckets.
 */
export async function vectorIndexStats(engine: MetricsEngine, indexId: string, indexType: string, period: Period, nowMs: number) {
  const grid = periodGrid(period, nowMs);
  const days = dayGrid(nowMs - (DAILY_DAYS - 1) * DAY_MIN * MINUTE_MS, DAILY_DAYS);
  const today = dayGrid(nowMs, 1);
  const month = monthGrid(nowMs);
  const sum = (metric: string, g = grid) => engine.sums(indexId, metric, g);
  const total = (metric: string, g: typeof grid) => engine.total(indexId, metric, g);
  const latency = (metric: string) => engine.latency(indexId, metric, grid);

  const monthlyQueries = await total(M.queries, month);
  const monthlyUpdates = await total(M.updates, month);
  const query = await latency(M.queryLatency);
  const update = await latency(M.updateLatency);
  const embeds = await latency(M.embedLatency);
  const rerank = await latency(M.rerankLatency);
  const cost = indexType === "free" ? 0 : ((monthlyQueries + monthlyUpdates) / 100_000) * VECTOR_PRICE_PER_100K;

  return {
    pending_index_count: await engine.latest(indexId, M.pendingIndexCount),
    current_vector_count: await engine.latest(indexId, M.vectorCount),
    daily_query_count: await total(M.queries, today),
    daily_update_count: await total(M.updates, today),
    monthly_query_count: monthlyQueries,
    monthly_update_count: monthlyUpdates,
    monthly_bandwidth_usage: await total(M.bandwidth, month),
    storage_usage: await engine.latest(indexId, M.dataSize),
    monthly_cost: roundAmount(cost),
    daily_update_requests: dailyPoints(days, await sum(M.updates, days)),
    daily_query_requests: dailyPoints(days, await sum(M.queries, days)),
    daily_bandwidths: dailyPoints(days, await sum(M.bandwidth, days)),
    days: Array.from({ length: days.points }, (_, i) => weekdayName(pointStartMs(days, i))),
    query_throughput: periodPoints(grid, await sum(M.queries)),
    update_throughput: periodPoints(grid, await sum(M.updates)),
    query_latency_mean: periodPoints(grid, query.mean),
    query_latency_99: periodPoints(grid, query.p99),
    update_latency_mean: periodPoints(grid, update.mean),
    update_latency_99: periodPoints(grid, update.p99),
    embeds_latency_mean: periodPoints(grid, embeds.mean),
    embeds_latency_99: periodPoints(grid, embeds.p99),
    vector_count: periodPoints(grid, await engine.gauges(indexId, M.vectorCount, grid)),
    data_size: periodPoints(grid, await engine.gauges(indexId, M.dataSize, grid)),
    daily_rerank_count: await total(M.reranks, today),
    monthly_rerank_count: await total(M.reranks, month),
    daily_rerank_requests: dailyPoints(days, await sum(M.reranks, days)),
    rerank_latency_mean: periodPoints(grid, rerank.mean),
    rerank_latency_99: periodPoints(grid, rerank.p99),
  };
}
