import type { Account } from "../accounts/accounts.ts";
import { badRequest, notFound, quotaExceeded } from "../core/errors.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import { checkName } from "../messages/options.ts";
import type { MessageStorage } from "../messages/storage.ts";
import { NEW_QUEUE, type QueueLanes } from "./lanes.ts";
import type { QueueRow, QueueStorage } from "./storage.ts";

export interface QueueInput {
  queueName: string;
  parallelism?: number;
  paused?: boolean;
}

const CANCEL_BATCH = 1000;

/** Queue management. Synchronous: each call runs inside one write transaction. */
export class QueueService {
  constructor(
    private readonly store: QueueStorage,
    private readonly lanes: QueueLanes,
    private readonly messages: MessageStorage,
    private readonly lifecycle: MessageLifecycle,
    /** Disowns an attempt in flight (Dispatcher.forget). */
    private readonly forget: (messageId: string) => void,
  ) {}

  /**
   * Creates or updates a queue. Fields left out keep their value (a new queue: parallelism 1, not
   * paused). A parallelism above the plan's maximum is a quota error (412), like a queue too many.
   */
  upsert(account: Account, input: QueueInput, nowMs: number): void {
    checkName(input.queueName, "queueName");
    const { parallelism } = input;
    if (parallelism !== undefined) {
      if (!Number.isInteger(parallelism) || parallelism < 1) throw badRequest("invalid parallelism: must be a positive integer");
      if (parallelism > account.limits.maxQueueParallelism)
        throw quotaExceeded(`invalid parallelism ${parallelism}: the plan allows at most ${account.limits.maxQueueParallelism}`);
    }
    if (!this.store.get(account.id, input.queueName) && this.store.count(account.id) >= account.limits.maxQueues)
      throw quotaExceeded(`too many queues: the plan allows ${account.limits.maxQueues}`);
    // Only what the request gives is written: a field another node changes meanwhile keeps its change.
    this.store.upsert(account.id, input.queueName, { parallelism, paused: input.paused }, NEW_QUEUE, nowMs);
    // More room or resumed: the head may go now.
    this.lanes.promote(account.id, input.queueName, nowMs);
  }

  /** 404 when the queue is not stored (also when another node just deleted it). */
  setPaused(account: Account, name: string, paused: boolean, nowMs: number): void {
    if (!this.store.update(account.id, name, { paused }, nowMs)) throw notFound(`queue "${name}" not found`);
    if (!paused) this.lanes.promote(account.id, name, nowMs);
  }

  /**
   * Deletes the queue and cancels the messages still in it (logged as CANCELED). Idempotent: a
   * queue that does not exist is not an error (clients delete before they create).
   */
  delete(account: Account, name: string, nowMs: number): void {
    if (!this.store.delete(account.id, name)) return;
    for (;;) {
      const batch = this.messages.find(account.id, { queueNames: [name] }, null, CANCEL_BATCH);
      if (batch.length === 0) break;
      for (const m of batch) {
        this.lifecycle.cancel(m, nowMs);
        this.forget(m.id);
      }
    }
  }

  list(account: Account) {
    return Promise.all(this.store.list(account.id).map((q) => this.view(q)));
  }

  get(account: Account, name: string) {
    return this.view(this.mustGet(account, name));
  }

  /** 412 when naming a new queue would exceed the plan (checked before publishing into it). */
  checkCanUse(account: Account, name: string): void {
    checkName(name, "queue name");
    if (!this.store.get(account.id, name) && this.store.count(account.id) >= account.limits.maxQueues)
      throw quotaExceeded(`too many queues: the plan allows ${account.limits.maxQueues}`);
  }

  private mustGet(account: Account, name: string): QueueRow {
    const queue = this.store.get(account.id, name);
    if (!queue) throw notFound(`queue "${name}" not found`);
    return queue;
  }

  private async view(q: QueueRow) {
    return {
      name: q.name,
      createdAt: q.created_at,
      updatedAt: q.updated_at,
      parallelism: q.parallelism,
      paused: q.paused === 1,
      lag: await this.store.lag(q.account_id, q.name),
    };
  }
}
