import type { AppContext } from "../context/app-context.ts";
import type { BackgroundService } from "../core/service.ts";

/** A log that drops its entries of one account older than a time, a bounded batch per call. */
export interface Prunable {
  prune(accountId: string, beforeMs: number): Promise<number>;
}

const EVERY_MS = 10 * 60 * 1000;

/**
 * Keeps the DLQ and the event log within each plan's retention (docs/operations.md, Plans). Runs at start
 * and every ten minutes of the server clock, so a manual clock prunes as it advances.
 */
export class Retention implements BackgroundService {
  readonly name = "retention";
  private cancel: (() => void) | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly events: Prunable,
    private readonly dlq: Prunable,
    /** More history kept as long as the event log (workflow runs). */
    private readonly alongLogs: readonly Prunable[] = [],
    /** Whether this process prunes (of several sharing the storage, one does). */
    private readonly prunes: () => boolean = () => true,
  ) {}

  start(): void {
    void this.run();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  /** Returns how many log entries and DLQ entries were dropped. */
  async run(): Promise<{ events: number; dlq: number }> {
    const now = this.ctx.clock.now();
    let events = 0;
    let dlq = 0;
    try {
      for (const account of this.prunes() ? this.ctx.accounts.all() : []) {
        dlq += await this.dlq.prune(account.id, now - account.limits.dlqRetentionMs);
        // In bounded batches, so a large backlog never holds the write lock for long.
        for (let n = -1; n !== 0; events += n) n = await this.events.prune(account.id, now - account.limits.logRetentionMs);
        for (const log of this.alongLogs) while ((await log.prune(account.id, now - account.limits.logRetentionMs)) > 0);
      }
    } catch (error) {
      // A locked or full database must not end the process from a timer; the next run prunes.
      this.ctx.log.error("retention: pruning failed; trying again at the next run", { error: String(error) });
    }
    this.cancel = this.ctx.clock.at(now + EVERY_MS, () => this.run());
    return { events, dlq };
  }
}
