import { DlqIdSequence } from "../core/ids.ts";
import type { DlqStore } from "../dlq/store.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { EventStore } from "../logs/store.ts";
import type { EventRecord, EventState } from "../logs/model.ts";
import { MessagingMetric, type UsageRecorder } from "../metrics/usage.ts";
import { callbackMessage } from "./callbacks.ts";
import type { MessageRecord } from "../model/message.ts";
import type { MessageStore } from "./store.ts";

export type FinishedHow = "delivered" | "failed" | "canceled";

/**
 * Extensions that ride on every message's life: queues and flow control park messages on
 * admission and let the next one go when one finishes; schedules record how their messages ended.
 * Both run inside the transaction that changes the message.
 */
export interface MessageHooks {
  admit?(m: MessageRecord, nowMs: number): void;
  finished?(m: MessageRecord, how: FinishedHow, nowMs: number): void;
}

/**
 * Every persistent transition of a message, with its event-log entries, usage metrics, DLQ entry
 * and callbacks. Callers run these inside one SQLite transaction per batch.
 */
export class MessageLifecycle {
  private readonly dlqIds = new DlqIdSequence();
  readonly hooks: MessageHooks[] = [];

  constructor(
    private readonly messages: MessageStore,
    private readonly events: EventStore,
    private readonly dlq: DlqStore,
    private readonly metrics: UsageRecorder,
  ) {}

  /** Stores a new message; CREATED in the log, counted and billed. */
  accept(m: MessageRecord, nowMs: number): void {
    for (const hook of this.hooks) hook.admit?.(m, nowMs);
    this.messages.insert(m);
    this.log(m, "CREATED", nowMs, { header: m.headers, body: m.body, method: m.method, maxRetries: m.maxRetries });
    this.metrics.count(m.accountId, MessagingMetric.created, 1, nowMs);
    this.metrics.count(m.accountId, MessagingMetric.billable, 1, nowMs);
  }

  activated(m: MessageRecord, nowMs: number): void {
    this.log(m, "ACTIVE", nowMs);
  }

  delivered(m: MessageRecord, outcome: DeliveryOutcome, nowMs: number): void {
    this.messages.delete(m.id);
    this.log(m, "DELIVERED", nowMs, { responseStatus: outcome.status, responseBody: outcome.body });
    this.metrics.count(m.accountId, MessagingMetric.delivered, 1, nowMs);
    this.countBandwidth(m, outcome, nowMs);
    this.sendCallback(m, outcome, nowMs);
    this.finish(m, "delivered", nowMs);
  }

  retrying(m: MessageRecord, outcome: DeliveryOutcome, at: number, error: string, nowMs: number): void {
    this.messages.reschedule(m.id, "RETRY", at, m.retried + 1);
    const response = { responseStatus: outcome.status, responseBody: outcome.body };
    this.log(m, "ERROR", nowMs, { error, nextDeliveryTime: at, ...response });
    this.log(m, "RETRY", nowMs, { nextDeliveryTime: at });
    this.metrics.count(m.accountId, MessagingMetric.error, 1, nowMs);
    this.metrics.count(m.accountId, MessagingMetric.retry, 1, nowMs);
    this.countBandwidth(m, outcome, nowMs);
    this.sendCallback(m, outcome, nowMs);
  }

  failed(m: MessageRecord, outcome: DeliveryOutcome, error: string, nowMs: number): string {
    // A restarted manual clock can replay the same milliseconds: ids already taken are skipped.
    let dlqId = this.dlqIds.next(nowMs);
    while (this.dlq.exists(dlqId)) dlqId = this.dlqIds.next(nowMs);
    this.messages.delete(m.id);
    this.dlq.insert({
      dlqId,
      failedAt: nowMs,
      message: m,
      responseStatus: outcome.status,
      responseHeaders: outcome.headers,
      responseBody: outcome.body,
      error,
    });
    const response = { responseStatus: outcome.status, responseBody: outcome.body };
    this.log(m, "ERROR", nowMs, { error, ...response });
    this.log(m, "FAILED", nowMs, { error, ...response });
    this.metrics.count(m.accountId, MessagingMetric.error, 1, nowMs);
    this.metrics.count(m.accountId, MessagingMetric.failed, 1, nowMs);
    this.countBandwidth(m, outcome, nowMs);
    this.sendCallback(m, outcome, nowMs);
    if (m.failureCallback)
      this.accept(callbackMessage(m, m.failureCallback, "failure-callback", outcome, nowMs, dlqId), nowMs);
    this.finish(m, "failed", nowMs);
    return dlqId;
  }

  /** Removes a waiting or in-flight message; returns false if it was already gone. */
  cancel(m: MessageRecord, nowMs: number): boolean {
    if (!this.messages.delete(m.id)) return false;
    this.log(m, "CANCEL_REQUESTED", nowMs);
    this.log(m, "CANCELED", nowMs);
    this.metrics.count(m.accountId, MessagingMetric.canceled, 1, nowMs);
    this.finish(m, "canceled", nowMs);
    return true;
  }

  private finish(m: MessageRecord, how: FinishedHow, nowMs: number) {
    for (const hook of this.hooks) hook.finished?.(m, how, nowMs);
  }

  private sendCallback(m: MessageRecord, outcome: DeliveryOutcome, nowMs: number) {
    // A callback carries the destination's answer; an attempt that got none has nothing to carry.
    if (m.callback && outcome.status !== undefined)
      this.accept(callbackMessage(m, m.callback, "callback", outcome, nowMs), nowMs);
  }

  private countBandwidth(m: MessageRecord, outcome: DeliveryOutcome, nowMs: number) {
    const bytes = m.body.length + (outcome.body?.length ?? 0);
    if (bytes > 0) this.metrics.count(m.accountId, MessagingMetric.bandwidth, bytes, nowMs);
  }

  private log(m: MessageRecord, state: EventState, nowMs: number, extra: Partial<EventRecord> = {}) {
    this.events.append({
      time: nowMs,
      accountId: m.accountId,
      messageId: m.id,
      state,
      url: m.url,
      topicName: m.topicName,
      endpointName: m.endpointName,
      queueName: m.queueName,
      scheduleId: m.scheduleId,
      labels: m.labels,
      retryDelayExpr: m.retryDelayExpr,
      flowControlKey: m.flow?.key,
      ...extra,
    });
  }
}
