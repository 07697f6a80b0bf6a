import type { AppContext } from "../context/app-context.ts";
import type { MessageLifecycle } from "./lifecycle.ts";
import { takePage, type BulkSelection } from "../filters/bulk.ts";
import type { MessageStorage } from "./storage.ts";
import type { WriteTx } from "../store/transactor.ts";

/** Cancelling: the message leaves the store at once; an attempt already in flight is disowned. */
export class CancelService {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: MessageStorage,
    private readonly lifecycle: MessageLifecycle,
    /** Disowns an attempt in flight, inside the cancel's write (Dispatcher.forget). */
    private readonly forget: (tx: WriteTx, messageId: string) => Promise<void>,
  ) {}

  async cancelOne(accountId: string, id: string): Promise<boolean> {
    return this.ctx.commit.run(async (tx) => {
      const m = await this.store.get(tx, accountId, id);
      if (!m || !(await this.lifecycle.cancel(tx, m, this.ctx.clock.now()))) return false;
      await this.forget(tx, id);
      return true;
    });
  }

  /**
   * Cancels the oldest `count` live messages matching the selection, after its cursor; answers
   * how many were cancelled, and a cursor while more match.
   */
  async cancelMany(accountId: string, { filter, count, after }: BulkSelection): Promise<{ cancelled: number; cursor?: string }> {
    return this.ctx.commit.run(async (tx) => {
      const now = this.ctx.clock.now();
      const found = await this.store.find(tx, accountId, filter, after, count + 1);
      const { page, cursor } = takePage(found, count, (m) => m.seq);
      let cancelled = 0;
      for (const m of page) {
        if (await this.lifecycle.cancel(tx, m, now)) {
          await this.forget(tx, m.id);
          cancelled++;
        }
      }
      return { cancelled, cursor };
    });
  }
}
