import type { AppContext } from "../context/app-context.ts";
import type { MessageLifecycle } from "./lifecycle.ts";
import { takePage, type BulkSelection } from "../filters/bulk.ts";
import type { MessageStorage } from "./storage.ts";

/** Cancelling: the message leaves the store at once; an attempt already in flight is disowned. */
export class CancelService {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: MessageStorage,
    private readonly lifecycle: MessageLifecycle,
    /** Disowns an attempt in flight (Dispatcher.forget). */
    private readonly forget: (messageId: string) => void,
  ) {}

  async cancelOne(accountId: string, id: string): Promise<boolean> {
    return this.ctx.commit.run(() => {
      const m = this.store.get(accountId, id);
      if (!m || !this.lifecycle.cancel(m, this.ctx.clock.now())) return false;
      this.forget(id);
      return true;
    });
  }

  /**
   * Cancels the oldest `count` live messages matching the selection, after its cursor; answers
   * how many were cancelled, and a cursor while more match.
   */
  async cancelMany(accountId: string, { filter, count, after }: BulkSelection): Promise<{ cancelled: number; cursor?: string }> {
    return this.ctx.commit.run(() => {
      const now = this.ctx.clock.now();
      const { page, cursor } = takePage(this.store.find(accountId, filter, after, count + 1), count, (m) => m.seq);
      let cancelled = 0;
      for (const m of page) {
        if (this.lifecycle.cancel(m, now)) {
          this.forget(m.id);
          cancelled++;
        }
      }
      return { cancelled, cursor };
    });
  }
}
