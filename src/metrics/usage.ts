import type { WriteTx } from "../store/transactor.ts";

/**
 * What the messaging engine reports to the usage-metrics engine. Counters are per owner (account
 * or index id), per metric, per minute; the engine decides how they are stored and rolled up.
 */
export interface UsageRecorder {
  /**
   * Counts with the write `tx` that did it: once it is stored (a write that fails, or runs again
   * after a lock conflict, counts nothing).
   */
  countStored(tx: WriteTx, owner: string, metric: string, value: number, atMs: number): void;
}

/** Metric names the messaging engine records for an account. */
export const MessagingMetric = {
  /** Every accepted API request that creates messages (publish, enqueue, batch element, schedule trigger). */
  requests: "msg.requests",
  created: "msg.created",
  delivered: "msg.delivered",
  failed: "msg.failed",
  retry: "msg.retry",
  error: "msg.error",
  canceled: "msg.canceled",
  /** Bytes received in publish bodies plus bytes sent in deliveries. */
  bandwidth: "msg.bandwidth",
  /** Billable messages (every message created, callbacks included). */
  billable: "msg.billable",
} as const;

/** Metric names the workflow layer records for an account (its runs and their messages). */
export const WorkflowMetric = {
  runStarted: "wf.run_started",
  runCompleted: "wf.run_completed",
  runFailed: "wf.run_failed",
  runCanceled: "wf.run_canceled",
  /** Every message of a run: its trigger, steps, calls and their answers. */
  messages: "wf.messages",
} as const;
