import type { AppContext } from "../context/app-context.ts";
import type { MessageLifecycle } from "./lifecycle.ts";
import type { MessageFilter, MessageStore } from "./store.ts";

const MAX_BULK = 10_000;

/** Cancelling: the message leaves the store at once; an attempt already in flight is disowned. */
export class CancelService {
  constructor(
    private readonly ctx: AppContext,
    private readonly store: MessageStore,
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

  async cancelMany(accountId: string, ids: string[] | undefined, filter: MessageFilter, count?: number): Promise<number> {
    return this.ctx.commit.run(() => {
      const now = this.ctx.clock.now();
      const limit = Math.min(count ?? MAX_BULK, MAX_BULK);
      const targets = ids
        ? ids.slice(0, limit).flatMap((id) => this.store.get(accountId, id) ?? [])
        : this.store.find(accountId, filter, limit);
      let cancelled = 0;
      for (const m of targets) {
        if (this.lifecycle.cancel(m, now)) {
          this.forget(m.id);
          cancelled++;
        }
      }
      return cancelled;
    });
  }
}
