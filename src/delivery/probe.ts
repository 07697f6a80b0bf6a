import type { MessageStorage } from "../messages/storage.ts";
import type { Transactor } from "../store/transactor.ts";
import type { Dispatcher } from "./dispatcher.ts";
import type { InFlightAttempts } from "./in-flight.ts";
import type { OutcomeRecorder } from "./outcome-recorder.ts";

export interface DeliveryProbeDeps {
  dispatcher: Dispatcher;
  inFlight: InFlightAttempts;
  recorder: OutcomeRecorder;
  store: MessageStorage;
  commit: Transactor;
}

/**
 * What the test double's control plane (flush, time control) and tests read of the delivery
 * engine: whether work is queued to run by itself, whether deliveries are idle, and promises for
 * both. It only reads; the dispatcher never waits for it.
 */
export class DeliveryProbe {
  private idleWaiters: Array<() => void> = [];
  private passWaiters: Array<() => void> = [];

  constructor(private readonly deps: DeliveryProbeDeps) {
    deps.dispatcher.observePasses((afterMs) => {
      // A next due time that cannot be read leaves the waiters to the next pass.
      if (afterMs !== null) this.checkIdle(afterMs).catch(() => {});
      const waiters = this.passWaiters;
      this.passWaiters = [];
      for (const resolve of waiters) resolve();
    });
  }

  /**
   * Work that runs by itself within a turn or two: a write waiting for its commit, a claim pass
   * scheduled. While there is some, what a timer or a request started has not played out yet.
   */
  get workQueued(): boolean {
    return this.deps.commit.pendingWrites > 0 || this.deps.dispatcher.passPending;
  }

  /** A claim pass is scheduled (without one, nothing new is due). */
  get passPending(): boolean {
    return this.deps.dispatcher.passPending;
  }

  get inFlightCount(): number {
    return this.deps.inFlight.size;
  }

  /** Attempts handed to the workers since start; with `inFlightCount` it tells that anything changed. */
  get dispatchedCount(): number {
    return this.deps.inFlight.opened;
  }

  isInFlight(messageId: string): boolean {
    return this.deps.dispatcher.isInFlight(messageId);
  }

  /**
   * Nothing in flight, no outcome waiting to be recorded, no claim pass scheduled (so nothing due),
   * no write waiting for its commit: a write that follows another's commit (a workflow run settling
   * after the outcome that ended it) may still publish.
   */
  isIdle(): boolean {
    return (
      this.deps.inFlight.size === 0 &&
      this.deps.recorder.pending === 0 &&
      !this.deps.dispatcher.passPending &&
      // A write still committing may make more due (its follow-ups have not run yet).
      this.deps.commit.pendingWrites === 0
    );
  }

  /** Resolves once nothing is due now and nothing is in flight. */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.deps.dispatcher.wake();
    });
  }

  /** Resolves after the next claim pass: what is due now was claimed and handed to the workers. */
  whenPassed(): Promise<void> {
    if (!this.deps.dispatcher.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.passWaiters.push(resolve);
      this.deps.dispatcher.wake();
    });
  }

  private async checkIdle(afterMs: number): Promise<void> {
    if (this.idleWaiters.length === 0) return;
    const next = await this.deps.store.nextDueAt();
    if (this.deps.inFlight.size > 0 || this.deps.recorder.pending > 0 || (next !== null && next <= afterMs)) return;
    if (this.deps.commit.pendingWrites > 0) {
      // The queued write commits in this turn's group commit; look again after it.
      setImmediate(() => this.deps.dispatcher.wake());
      return;
    }
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
