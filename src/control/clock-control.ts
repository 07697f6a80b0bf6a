import { ManualClock, type Clock } from "../core/clock.ts";
import { badRequest, HttpError } from "../core/errors.ts";
import { nextTurn, withDeadline } from "../core/deadline.ts";

/** What time control reads of the delivery engine (DeliveryProbe). */
export interface EngineProbe {
  /** Work that runs by itself within a turn or two: a write waiting for its commit, a claim pass. */
  readonly workQueued: boolean;
  /** A claim pass is scheduled. */
  readonly passPending: boolean;
  readonly inFlightCount: number;
  readonly dispatchedCount: number;
  isIdle(): boolean;
  whenPassed(): Promise<void>;
  whenIdle(): Promise<void>;
}

/**
 * Attempts the delivery workers hold back for a later instant (flow-control rate windows run on
 * the workers' copy of the clock), and the earliest instant one of them is released.
 */
export type WorkerWaits = () => Promise<{ parked: number; nextAt: number | null }>;

export interface AdvanceRequest {
  ms?: number;
  to?: number;
  /** Wait after every fired timer until deliveries are idle, so one jump plays out whole retry chains. */
  flush: boolean;
  /** Wall-clock limit of the flush waits. */
  timeoutMs: number;
}

export interface AdvanceResult {
  now: number;
  mode: Clock["kind"];
  timersFired: number;
  /** False when `flush` was asked but deliveries were still running at the deadline. */
  idle: boolean;
}

/** How often a flush wait looks again whether the attempts left are all held for later. */
const RECHECK_MS = 5;

/**
 * `POST /__svc/clock/advance`: moves a manual clock forward one due timer at a time. After each
 * timer it lets the work that timer started settle (writes committed, due messages handed to the
 * dispatcher, and with `flush` the deliveries finished), so a timer re-armed by that work — the
 * next cron trigger, the next retry — is found and fired within the same jump, in time order.
 * Instants the workers wait for are steps of the jump too.
 */
export class ClockControl {
  // Jumps are serialised: two overlapping advances would interleave their steps.
  private queue: Promise<unknown> = Promise.resolve();
  /** Last answer of `workerWaits`, valid until an attempt starts or ends or time is announced. */
  private waits: { key: string; parked: number; nextAt: number | null } | null = null;
  private readonly markers = new Set<number>();

  constructor(
    private readonly clock: Clock,
    private readonly engine: EngineProbe,
    private readonly workerWaits?: WorkerWaits,
  ) {}

  status() {
    return { now: this.clock.now(), mode: this.clock.kind };
  }

  /**
   * `POST /__svc/flush`: true once nothing is due or in flight, except attempts the workers hold
   * for a later instant (those are not due now); false at the wall-clock timeout.
   */
  flush(timeoutMs: number): Promise<boolean> {
    return this.deliveriesSettled(Date.now() + timeoutMs);
  }

  advance(req: AdvanceRequest): Promise<AdvanceResult> {
    const run = this.queue.then(() => this.jump(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async jump(req: AdvanceRequest): Promise<AdvanceResult> {
    const clock = this.clock;
    if (!(clock instanceof ManualClock))
      throw new HttpError(409, "the clock is real: start svcd with --clock manual to move time");
    if ((req.ms === undefined) === (req.to === undefined)) throw badRequest('give exactly one of "ms" or "to"');
    const target = req.to ?? clock.now() + req.ms!;
    if (!Number.isSafeInteger(target)) throw badRequest("the target time is not a valid Unix time in ms");
    if (target < clock.now())
      throw badRequest(`the clock never goes backward: ${target} is before now (${clock.now()})`);

    const deadline = Date.now() + req.timeoutMs;
    let flushing = req.flush;
    let timersFired = 0;
    for (;;) {
      await this.markWorkerWait(clock, target);
      if (!clock.fireNext(target)) break;
      timersFired++;
      flushing = await this.settle(clock, flushing, deadline);
    }
    clock.advanceTo(target);
    flushing = await this.settle(clock, flushing, deadline);
    return { now: clock.now(), mode: clock.kind, timersFired, idle: !req.flush || flushing };
  }

  /**
   * Returns whether flushing goes on (false once the deadline passed). Cheap when the timer did
   * nothing asynchronous: periodic housekeeping timers can fire thousands of times in one jump.
   */
  private async settle(clock: ManualClock, flushing: boolean, deadline: number): Promise<boolean> {
    // What the timer does later itself (reads and writes of an engine that answers later).
    await clock.settled();
    // What the timer queued (writes, a claim pass) runs within a turn; the continuations of a
    // commit (re-armed timers, further writes) run before the next turn: the engine tells when
    // nothing is queued any more, however deep the chain.
    while (this.engine.workQueued && !this.engine.passPending) await nextTurn();
    const workersWaitForNow = this.waits !== null && this.waits.nextAt !== null && this.waits.nextAt <= clock.now();
    if (this.engine.passPending || workersWaitForNow) {
      // Workers sign, time-stamp and release flow-control windows with the announced time.
      clock.announce();
      this.waits = null;
      await this.engine.whenPassed();
    }
    if (!flushing) return false;
    return this.deliveriesSettled(deadline);
  }

  /** Until nothing is in flight, or everything left in flight is held by the workers for later. */
  private async deliveriesSettled(deadline: number): Promise<boolean> {
    for (;;) {
      if (this.engine.isIdle()) return true;
      if (this.workerWaits && this.engine.inFlightCount > 0 && !this.engine.passPending) {
        const waits = await this.queryWorkers();
        // Every attempt in flight is held by the workers for a later instant. Read after the
        // workers answered: meanwhile the attempts may have ended and left work queued instead.
        const inFlight = this.engine.inFlightCount;
        if (inFlight > 0 && waits.parked >= inFlight && !this.engine.workQueued) return true;
      }
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await withDeadline(this.engine.whenIdle(), this.workerWaits ? Math.min(RECHECK_MS, left) : left);
    }
  }

  /** Makes the instant the workers next release a held attempt a step of the jump. */
  private async markWorkerWait(clock: ManualClock, target: number): Promise<void> {
    if (!this.workerWaits || this.engine.inFlightCount === 0) return;
    const { nextAt } = await this.queryWorkers();
    if (nextAt === null || nextAt <= clock.now() || nextAt > target || this.markers.has(nextAt)) return;
    this.markers.add(nextAt);
    clock.at(nextAt, () => this.markers.delete(nextAt));
  }

  private async queryWorkers() {
    // Asking round-trips to every worker: a jump past thousands of housekeeping ticks asks once.
    const key = `${this.engine.inFlightCount}/${this.engine.dispatchedCount}`;
    if (this.waits?.key !== key) this.waits = { key, ...(await this.workerWaits!()) };
    return this.waits;
  }
}
