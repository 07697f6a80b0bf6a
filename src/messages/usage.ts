import type { MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import { MessagingMetric, type UsageRecorder } from "../metrics/usage.ts";
import type { WriteTx } from "../store/transactor.ts";

/** Bytes of a delivery: the body sent plus the answer received. */
const deliveryBytes = (m: MessageRecord, outcome: DeliveryOutcome) => m.body.length + (outcome.body?.length ?? 0);

/**
 * The messaging statistics of an account (`/v2/stats`-style usage): every message created is
 * counted and billed, every attempt's end is counted by how it ended, with its bandwidth.
 */
export function messagingUsageListener(usage: UsageRecorder): MessageListener {
  const count = (tx: WriteTx, m: MessageRecord, metric: string, n: number, atMs: number) =>
    usage.countStored(tx, m.accountId, metric, n, atMs);
  return {
    created: ({ message: m, atMs }, tx) => {
      count(tx, m, MessagingMetric.created, 1, atMs);
      count(tx, m, MessagingMetric.billable, 1, atMs);
    },
    delivered: ({ message: m, outcome, atMs }, tx) => {
      count(tx, m, MessagingMetric.delivered, 1, atMs);
      count(tx, m, MessagingMetric.bandwidth, deliveryBytes(m, outcome), atMs);
    },
    retried: ({ message: m, outcome, atMs }, tx) => {
      count(tx, m, MessagingMetric.error, 1, atMs);
      count(tx, m, MessagingMetric.retry, 1, atMs);
      count(tx, m, MessagingMetric.bandwidth, deliveryBytes(m, outcome), atMs);
    },
    failed: ({ message: m, outcome, atMs }, tx) => {
      count(tx, m, MessagingMetric.error, 1, atMs);
      count(tx, m, MessagingMetric.failed, 1, atMs);
      count(tx, m, MessagingMetric.bandwidth, deliveryBytes(m, outcome), atMs);
    },
    cancelled: ({ message: m, atMs }, tx) => count(tx, m, MessagingMetric.canceled, 1, atMs),
  };
}
