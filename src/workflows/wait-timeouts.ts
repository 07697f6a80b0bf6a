import type { Account } from "../accounts/accounts.ts";
import type { Clock } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { Transactor, WriteTx } from "../store/transactor.ts";
import type { StoredWaiter, WaitStorage } from "./storage.ts";

const BATCH = 200;
/** Wall-clock pause before trying again after a failed write (locked or full database). */
const RETRY_MS = 500;

/**
 * Fires the deadlines of waiting steps on the server clock (a manual clock fires them as it
 * advances): one timer, armed for the earliest deadline in the store, so waits survive restarts.
 */
export class WaitTimeouts {
  readonly name = "workflow wait timeouts";
  private timerAt = Infinity;
  private cancelTimer: (() => void) | null = null;
  private running = false;

  constructor(
    private readonly waits: WaitStorage,
    private readonly clock: Clock,
    private readonly commit: Pick<Transactor, "run">,
    private readonly accounts: { byId(id: string): Account | undefined },
    /** Inside the write `tx`: the waiter timed out (it is already removed from the store). */
    private readonly timedOut: (tx: WriteTx, account: Account, waiter: StoredWaiter, nowMs: number) => Promise<void>,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.running = true;
    void this.arm();
  }

  stop(): void {
    this.running = false;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAt = Infinity;
  }

  /** A waiter with this deadline was stored. */
  readonly deadlineAdded = (deadlineMs: number): void => {
    if (this.running && deadlineMs < this.timerAt) this.armAt(deadlineMs);
  };

  /** Another process sharing the storage stored a waiter: its deadline may be the earliest now. */
  readonly refresh = (): void => void this.arm();

  private arm(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return this.waits.nextDeadline().then(
      (next) => {
        if (next !== null && this.running && next < this.timerAt) this.armAt(next);
      },
      (error) => this.retryLater("reading the next wait deadline", error),
    );
  }

  private armAt(atMs: number): void {
    this.cancelTimer?.();
    this.timerAt = atMs;
    this.cancelTimer = this.clock.at(atMs, () => {
      this.timerAt = Infinity;
      this.cancelTimer = null;
      return this.fireDue();
    });
  }

  /** Resolves once the timeouts are written and the next deadline is armed. */
  private fireDue(): Promise<void> {
    if (!this.running) return Promise.resolve();
    const now = this.clock.now();
    return this.commit
      .run(async (tx) => {
        const due = await this.waits.due(tx, now, BATCH);
        for (const waiter of due) {
          const account = this.accounts.byId(waiter.accountId);
          if ((await this.waits.delete(tx, waiter.id)) && account) await this.timedOut(tx, account, waiter, now);
        }
        return due.length;
      })
      .then(
        (fired) => (fired === BATCH ? this.fireDue() : this.arm()),
        (error) => this.retryLater("workflow wait timeouts", error),
      );
  }

  private retryLater(what: string, error: unknown): void {
    this.log.error(`${what} failed; trying again`, { error: String((error as Error)?.message ?? error) });
    setTimeout(() => this.fireDue(), RETRY_MS);
  }
}
