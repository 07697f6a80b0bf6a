import { api } from "./api.ts";

export const PERIODS = ["1h", "3h", "12h", "1d", "3d", "7d", "30d"] as const;
export type Period = (typeof PERIODS)[number];

interface Point {
  x: string;
  y: number;
}

/** The parts of the messaging usage statistics the console draws. */
export interface MessagingStats {
  daily_used: Point[];
  daily_bandwidth_used: Point[];
  daily_qstash_messages: Array<{ id: string; data_points: Point[] }>;
  dlq_message_count: number;
  total_monthly_billing: number;
}

/** `2026-11-22 10:17:00.000 +0000 UTC` → Unix ms. */
export const pointTime = (x: string) => Date.parse(x.replace(" +0000 UTC", "Z").replace(" ", "T"));

export const readStats = (period: Period) => api<MessagingStats>("/__svc/stats", { query: { period } });

export function seriesOf(stats: MessagingStats, id: string): number[] {
  return stats.daily_qstash_messages.find((s) => s.id === id)?.data_points.map((p) => p.y) ?? [];
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
export const total = (stats: MessagingStats, id: string) => sum(seriesOf(stats, id));

/**
 * Deliveries per minute, from the 1h series (one bucket a minute): the last whole minute plus the
 * running one, over the time they cover.
 */
export function deliveryRatePerMinute(stats: MessagingStats, nowMs: number): number {
  const delivered = seriesOf(stats, "delivered");
  const points = stats.daily_qstash_messages.find((s) => s.id === "delivered")?.data_points ?? [];
  const last = points[points.length - 1];
  if (!last || delivered.length < 2) return 0;
  const into = Math.min(60_000, Math.max(0, nowMs - pointTime(last.x)));
  const count = delivered[delivered.length - 1]! + delivered[delivered.length - 2]!;
  return (count * 60_000) / (60_000 + into);
}
