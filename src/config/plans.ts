export type PlanName = "free" | "payg" | "fixed";
export const PLAN_NAMES: readonly PlanName[] = ["free", "payg", "fixed"];

const MB = 1024 * 1024;
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Limits of a plan (docs/operations.md, Plans). `Infinity` means unlimited. */
export interface PlanLimits {
  maxMessageSize: number;
  maxRetries: number;
  maxDelayMs: number;
  maxTimeoutMs: number;
  maxUrlGroups: number;
  maxEndpointsPerGroup: number;
  maxSchedules: number;
  maxQueues: number;
  maxQueueParallelism: number;
  /** Flow-controlled deliveries of the account running at once, across every key (`GET /v2/globalParallelism`). */
  flowGlobalParallelism: number;
  dlqRetentionMs: number;
  logRetentionMs: number;
  /** Billing: USD per 100,000 messages. */
  pricePer100k: number;
  /** Messaging requests per second other than publishing ones (429 `Burst-RateLimit-*`); Infinity: none. */
  burstPerSecond: number;
  /** Messages per UTC day (429 `RateLimit-*` on publish once reached); Infinity: none. */
  maxMessagesPerDay: number;
  /** Defaults of search / vector index limits (-1 = unlimited). */
  index: {
    maxVectorCount: number;
    maxMonthlyReranks: number;
    maxDailyUpdates: number;
    maxDailyQueries: number;
    maxMonthlyBandwidth: number;
    maxWritesPerSecond: number;
    maxQueryPerSecond: number;
    maxReadsPerRequest: number;
    maxWritesPerRequest: number;
  };
}

export const DEFAULT_PLANS: Record<PlanName, PlanLimits> = {
  free: {
    maxMessageSize: 1 * MB,
    maxRetries: 3,
    maxDelayMs: 7 * DAY,
    maxTimeoutMs: 15 * MINUTE,
    maxUrlGroups: 1,
    maxEndpointsPerGroup: 100,
    maxSchedules: 10,
    maxQueues: 10,
    maxQueueParallelism: 2,
    flowGlobalParallelism: 10,
    dlqRetentionMs: 3 * DAY,
    logRetentionMs: 3 * DAY,
    pricePer100k: 1,
    // The hosted docs name a per-second burst limit but no figure any more (they once said 100
    // for free and pay-as-you-go, 1000 for fixed plans): none unless the config file sets one, so
    // a test suite polling the logs is never throttled.
    burstPerSecond: Infinity,
    maxMessagesPerDay: 1000,
    index: {
      maxVectorCount: 200_000,
      maxMonthlyReranks: 0,
      maxDailyUpdates: 10_000,
      maxDailyQueries: 10_000,
      maxMonthlyBandwidth: 10 * 1024 * MB,
      maxWritesPerSecond: 1000,
      maxQueryPerSecond: 1000,
      maxReadsPerRequest: 1000,
      maxWritesPerRequest: 1000,
    },
  },
  payg: {
    maxMessageSize: 10 * MB,
    maxRetries: 20,
    maxDelayMs: 365 * DAY,
    maxTimeoutMs: 2 * HOUR,
    maxUrlGroups: 100,
    maxEndpointsPerGroup: 100,
    maxSchedules: 1000,
    maxQueues: 100,
    maxQueueParallelism: 10,
    flowGlobalParallelism: 100,
    dlqRetentionMs: 7 * DAY,
    logRetentionMs: 7 * DAY,
    pricePer100k: 1,
    burstPerSecond: Infinity,
    maxMessagesPerDay: Infinity,
    index: {
      maxVectorCount: 100_000_000,
      maxMonthlyReranks: -1,
      maxDailyUpdates: -1,
      maxDailyQueries: -1,
      maxMonthlyBandwidth: -1,
      maxWritesPerSecond: 1000,
      maxQueryPerSecond: 1000,
      maxReadsPerRequest: 1000,
      maxWritesPerRequest: 1000,
    },
  },
  fixed: {
    maxMessageSize: 50 * MB,
    maxRetries: 20,
    maxDelayMs: Infinity,
    maxTimeoutMs: 6 * HOUR,
    maxUrlGroups: 1000,
    maxEndpointsPerGroup: 1000,
    maxSchedules: 10_000,
    maxQueues: 1000,
    maxQueueParallelism: 10,
    flowGlobalParallelism: 200,
    dlqRetentionMs: 30 * DAY,
    logRetentionMs: 14 * DAY,
    pricePer100k: 1,
    burstPerSecond: Infinity,
    maxMessagesPerDay: 1_000_000,
    index: {
      maxVectorCount: 1_000_000_000,
      maxMonthlyReranks: -1,
      maxDailyUpdates: -1,
      maxDailyQueries: -1,
      maxMonthlyBandwidth: -1,
      maxWritesPerSecond: 10_000,
      maxQueryPerSecond: 10_000,
      maxReadsPerRequest: 1000,
      maxWritesPerRequest: 1000,
    },
  },
};
