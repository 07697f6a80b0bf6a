import { expect } from "bun:test";
import { PERIODS, type Period } from "../../src/metrics/time.ts";

/** The documented fields of each object (docs/management-api.md), in order. */
export const SEARCH_INDEX_FIELDS = [
  "customer_id", "id", "name", "endpoint", "type", "region", "partner_email", "token", "read_only_token",
  "max_vector_count", "max_monthly_reranks", "max_daily_updates", "max_daily_queries", "max_monthly_bandwidth",
  "max_writes_per_second", "max_query_per_second", "max_reads_per_request", "max_writes_per_request",
  "creation_time", "input_enrichment_enabled", "throughput_vector",
];
export const VECTOR_STATS_FIELDS = [
  "pending_index_count", "current_vector_count", "daily_query_count", "daily_update_count", "monthly_query_count",
  "monthly_update_count", "monthly_bandwidth_usage", "storage_usage", "monthly_cost", "daily_update_requests",
  "daily_query_requests", "daily_bandwidths", "days", "query_throughput", "update_throughput", "query_latency_mean",
  "query_latency_99", "update_latency_mean", "update_latency_99", "embeds_latency_mean", "embeds_latency_99",
  "vector_count", "data_size", "daily_rerank_count", "monthly_rerank_count", "daily_rerank_requests",
  "rerank_latency_mean", "rerank_latency_99",
];
export const MESSAGING_STATS_FIELDS = [
  "days", "daily_requests", "daily_billings", "daily_bandwidths", "daily_used", "daily_used_workflow",
  "daily_qstash_messages", "daily_workflow_messages", "dlq_message_count", "daily_bandwidth_used",
  "total_monthly_billing",
];

export const PERIOD_X = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} \+0000 UTC$/;
/** Go's default format: up to 9 fraction digits, trailing zeros (and the dot) dropped. */
export const GO_X = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{0,8}[1-9])? \+0000 UTC$/;
export const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

export interface Point {
  x: string;
  y: number;
}

/** `2026-11-22 10:17:00.000 +0000 UTC` → Unix ms. */
export const parseX = (x: string) => Date.parse(x.replace(" +0000 UTC", "Z").replace(" ", "T"));

/** 60 (240) points, oldest first, one step apart, aligned to the step, the last one holding now. */
export function expectPeriodSeries(points: Point[], period: Period, nowMs: number) {
  const { stepMin, points: count } = PERIODS[period];
  const stepMs = stepMin * 60_000;
  expect(points).toHaveLength(count);
  for (const p of points) {
    expect(Object.keys(p)).toEqual(["x", "y"]);
    expect(p.x).toMatch(PERIOD_X);
    expect(typeof p.y).toBe("number");
  }
  const times = points.map((p) => parseX(p.x));
  for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(stepMs);
  expect(times[0]! % stepMs).toBe(0);
  expect(times.at(-1)!).toBeLessThanOrEqual(nowMs);
  expect(nowMs).toBeLessThan(times.at(-1)! + stepMs);
}

/** Daily points: Go format, midnight UTC, one day apart, and `days` names their weekdays. */
export function expectDailySeries(points: Array<{ x: string }>, days: string[], firstDayMs: number) {
  expect(points).toHaveLength(days.length);
  points.forEach((p, i) => {
    expect(p.x).toMatch(GO_X);
    const ms = parseX(p.x);
    expect(ms).toBe(firstDayMs + i * 86_400_000);
    expect(days[i]).toBe(WEEKDAYS[new Date(ms).getUTCDay()]!);
  });
}

export async function expectJsonError(res: Response, status: number): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = (await res.json()) as { error: unknown };
  expect(Object.keys(body)).toEqual(["error"]);
  expect(typeof body.error).toBe("string");
  return body.error as string;
}

export const jsonInit = (method: string, body: unknown): RequestInit => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
