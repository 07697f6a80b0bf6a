import type { Account } from "../../accounts/accounts.ts";
import type { MetricsEngine } from "../../metrics/engine.ts";
import { roundAmount } from "../../metrics/money.ts";
import { dailyPoints, periodPoints, type Point } from "../../metrics/points.ts";
import { monthGrid, periodGrid, pointStartMs, weekdayName, type Grid, type Period } from "../../metrics/time.ts";
import { MessagingMetric as M, WorkflowMetric as W } from "../../metrics/usage.ts";

/** Named series of `daily_qstash_messages`, in this order, and the metric each counts. */
export const MESSAGE_SERIES = [
  ["delivered", M.delivered],
  ["failed", M.failed],
  ["retry", M.retry],
  ["error", M.error],
  ["canceled", M.canceled],
  ["created", M.created],
] as const;

/** Named series of `daily_workflow_messages`, in this order, and the metric each counts. */
export const WORKFLOW_SERIES = [
  ["run_started", W.runStarted],
  ["run_completed", W.runCompleted],
  ["run_failed", W.runFailed],
  ["run_canceled", W.runCanceled],
] as const;

export interface NamedSeries {
  id: string;
  data_points: Point[];
}

/**
 * Messaging usage statistics of one account (docs/management-api.md): daily arrays cover every day of the
 * current month, future days 0; period series count the account's real activity.
 */
export async function messagingStats(engine: MetricsEngine, account: Account, period: Period, nowMs: number, dlqCount: number) {
  const grid = periodGrid(period, nowMs);
  const month = monthGrid(nowMs);
  const owner = account.id;
  const sums = (metric: string, g: Grid) => engine.sums(owner, metric, g);
  const dailyRequests = await sums(M.requests, month);
  const dailyWorkflowMessages = await sums(W.messages, month);
  const dailyWorkflowRuns = await sums(W.runStarted, month);
  const dailyBillings = (await sums(M.billable, month)).map((n) => roundAmount((n / 100_000) * account.limits.pricePer100k));
  const series = (list: ReadonlyArray<readonly [string, string]>) =>
    Promise.all(list.map(async ([id, metric]) => named(id, grid, await sums(metric, grid))));

  return {
    days: Array.from({ length: month.points }, (_, i) => weekdayName(pointStartMs(month, i))),
    daily_requests: dailyPoints(month, dailyRequests).map((p, i) => ({
      ...p,
      workflow_message: dailyWorkflowMessages[i] ?? 0,
      workflow_run: dailyWorkflowRuns[i] ?? 0,
    })),
    daily_billings: dailyPoints(month, dailyBillings),
    daily_bandwidths: dailyPoints(month, await sums(M.bandwidth, month)),
    daily_used: periodPoints(grid, await sums(M.requests, grid)),
    daily_used_workflow: periodPoints(grid, await sums(W.messages, grid)),
    daily_qstash_messages: await series(MESSAGE_SERIES),
    daily_workflow_messages: await series(WORKFLOW_SERIES),
    dlq_message_count: dlqCount,
    daily_bandwidth_used: periodPoints(grid, await sums(M.bandwidth, grid)),
    total_monthly_billing: roundAmount(dailyBillings.reduce((a, b) => a + b, 0)),
  };
}

const named = (id: string, grid: Grid, values: number[]): NamedSeries => ({ id, data_points: periodPoints(grid, values) });
