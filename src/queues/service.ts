import type { Account } from "../accounts/accounts.ts";
import { badRequest, notFound, quotaExceeded } from "../core/errors.ts";
import type { MessageLifecycle } from "../messages/lifecycle.ts";
import { checkName } from "../messages/options.ts";
import type { MessageStorage } from "../messages/storage.ts";
import type { WriteTx } from "../store/transactor.ts";
import { NEW_QUEUE, type QueueLanes } from "./lanes.ts";
import type { QueueRow, QueueStorage } from "./storage.ts";

export interface QueueInput {
  queueName: string;
  parallelism?: number;
  paused?: boolean;
}

const CANCEL_BATCH = 1000;

/** Queue management: changes run inside a write (`tx`), views read outside writes. */
export class QueueService {
  constructor(
    private readonly store: QueueStorage,
    private readonly lanes: QueueLanes,
    private readonly messages: MessageStorage,
    private readonly lifecycle: MessageLifecycle,
    /** Disowns an attempt in flight, inside the cancel's write (Dispatcher.forget). */
    private readonly forget: (tx: WriteTx, messageId: string) => Promise<void>,
  ) {}

  /**
   * Creates or updates a queue. Fields left out keep their value (a new queue: parallelism 1, not
   * paused). A parallelism above the plan's maximum is a quota error (412), like a queue too many.
   */
  async upsert(tx: WriteTx, account: Account, input: QueueInput, nowMs: number): Promise<void> {
    checkName(input.queueName, "queueName");
    const { parallelism } = input;
    if (parallelism !== undefined) {
      if (!Number.isInteger(parallelism) || parallelism < 1) throw badRequest("invalid parallelism: must be a positive integer");
      if (parallelism > account.limits.maxQueueParallelism)
        throw quotaExceeded(`invalid parallelism ${parallelism}: the plan allows at most ${account.limits.maxQueueParallelism}`);
    }
    await this.checkRoom(tx, account, input.queueName);
    // Only what the request gives is written: a field another node changes meanwhile keeps its change.
    await this.store.upsert(tx, account.id, input.queueName, { parallelism, paused: input.paused }, NEW_QUEUE, nowMs);
    // More room or resumed: the head may go now.
    await this.lanes.promote(tx, account.id, input.queueName, nowMs);
  }

  /** 404 when the queue is not stored (also when another node just deleted it). */
  async setPaused(tx: WriteTx, account: Account, name: string, paused: boolean, nowMs: number): Promise<void> {
    const queue = await this.store.update(tx, account.id, name, { paused }, nowMs);
    if (!queue) throw notFound(`queue "${name}" not found`);
    if (!paused) await this.lanes.promote(tx, account.id, name, nowMs);
  }

  /**
   * Deletes the queue and cancels the messages still in it (logged as CANCELED). Idempotent: a
   * queue that does not exist is not an error (clients delete before they create).
   */
  async delete(tx: WriteTx, account: Account, name: string, nowMs: number): Promise<void> {
    if (!(await this.store.delete(tx, account.id, name))) return;
    for (;;) {
      const batch = await this.messages.find(tx, account.id, { queueNames: [name] }, null, CANCEL_BATCH);
      if (batch.length === 0) break;
      for (const m of batch) {
        await this.lifecycle.cancel(tx, m, nowMs);
        await this.forget(tx, m.id);
      }
    }
  }

  async list(account: Account) {
    return Promise.all((await this.store.list(account.id)).map((q) => this.view(q)));
  }

  async get(account: Account, name: string) {
    const queue = await this.store.get(null, account.id, name);
    if (!queue) throw notFound(`queue "${name}" not found`);
    return this.view(queue);
  }

  /**
   * 412 when naming a new queue would exceed the plan (checked before publishing into it); `tx`:
   * the write it runs in (null: outside writes).
   */
  async checkCanUse(tx: WriteTx | null, account: Account, name: string): Promise<void> {
    checkName(name, "queue name");
    await this.checkRoom(tx, account, name);
  }

  /** 412 when `name` is a queue the account does not have yet and it has all the plan allows. */
  private async checkRoom(tx: WriteTx | null, account: Account, name: string): Promise<void> {
    if (await this.store.get(tx, account.id, name)) return;
    if ((await this.store.count(tx, account.id)) >= account.limits.maxQueues)
      throw quotaExceeded(`too many queues: the plan allows ${account.limits.maxQueues}`);
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
