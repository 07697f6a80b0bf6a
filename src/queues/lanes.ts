import type { AccountRegistry } from "../accounts/accounts.ts";
import { quotaExceeded } from "../core/errors.ts";
import type { Wake } from "../core/wake.ts";
import { onFinished, type MessageListener } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { QueueRow, QueueStorage } from "./storage.ts";

/** A queue a request or a message creates: what it leaves out. */
export const NEW_QUEUE = { parallelism: 1, paused: false } as const;

/**
 * A queue is a FIFO with a parallelism: a queued message is parked on admission unless fewer than
 * `parallelism` of its queue's messages have started and not finished, and the next parked message
 * is promoted when one finishes (delivered, failed or cancelled). A message being retried keeps its
 * place: the next one starts only once it is delivered or failed. A paused queue promotes nothing.
 * Runs inside the writes that store and finish messages (the lifecycle's admission and listener).
 */
export class QueueLanes {
  /** Follows the end of every message of a queue: the next one may go. */
  readonly listener: MessageListener = onFinished((tx, m, _how, atMs) => {
    if (m.queueName) return this.promoteNext(tx, m.accountId, m.queueName, atMs);
  });

  constructor(
    private readonly store: QueueStorage,
    private readonly accounts: AccountRegistry,
    private readonly wake: Wake,
  ) {}

  /** Parks a new message of a queue that is full, paused or already has others waiting. */
  readonly admit = (tx: WriteTx, m: MessageRecord, nowMs: number): Promise<void> =>
    // Most messages have no queue: they cost no promise of their own.
    m.queueName ? this.park(tx, m, m.queueName, nowMs) : DONE;

  private async park(tx: WriteTx, m: MessageRecord, queueName: string, nowMs: number): Promise<void> {
    const queue = await this.ensure(tx, m.accountId, queueName, nowMs);
    if (queue.paused === 1 || (await this.store.mustWait(tx, m.accountId, queueName, queue.parallelism, nowMs))) {
      m.state = "PARKED";
      m.dispatchAt = null;
    }
  }

  /** Lets the queue's head go while there is room; returns how many were promoted. */
  async promote(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<number> {
    const queue = await this.store.get(tx, accountId, name);
    if (!queue || queue.paused === 1) return 0;
    const promoted = await this.store.promote(tx, accountId, name, queue.parallelism, nowMs);
    if (promoted > 0) this.wake();
    return promoted;
  }

  private async promoteNext(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<void> {
    await this.promote(tx, accountId, name, nowMs);
  }

  /** The queue, created with defaults when a message names a queue that does not exist yet. */
  async ensure(tx: WriteTx, accountId: string, name: string, nowMs: number): Promise<QueueRow> {
    const existing = await this.store.hold(tx, accountId, name);
    if (existing) return existing;
    const max = this.accounts.byId(accountId)?.limits.maxQueues ?? Infinity;
    if ((await this.store.count(tx, accountId)) >= max) throw quotaExceeded(`too many queues: the plan allows ${max}`);
    // Another node may have created it meanwhile: then it is taken as stored.
    return this.store.upsert(tx, accountId, name, {}, NEW_QUEUE, nowMs);
  }
}

const DONE: Promise<void> = Promise.resolve();
