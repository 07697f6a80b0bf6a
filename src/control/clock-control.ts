import { ManualClock, type Clock } from "../core/clock.ts";
import { badRequest, HttpError } from "../core/errors.ts";
import { nextTurn, withDeadline } from "./deadline.ts";

/** What time control needs from the dispatcher. */
export interface DispatchProbe {
  readonly pumpPending: boolean;
  isIdle(): boolean;
  whenPumped(): Promise<void>;
  whenIdle(): Promise<void>;
}

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

/**
 * `POST /__svc/clock/advance`: moves a manual clock forward one due timer at a time. After each
 * timer it lets the work that timer started settle (writes committed, due messages handed to the
 * dispatcher, and with `flush` the deliveries finished), so a timer re-armed by that work — the
 * next cron trigger, the next retry — is found and fired within the same jump, in time order.
 */
export class ClockControl {
  // Jumps are serialised: two overlapping advances would interleave their steps.
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly dispatcher: DispatchProbe,
    private readonly commit: { readonly pendingWrites: number },
  ) {}

  status() {
    return { now: this.clock.now(), mode: this.clock.kind };
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
    while (clock.fireNext(target)) {
      timersFired++;
      flushing = await this.settle(flushing, deadline);
    }
    clock.advanceTo(target);
    flushing = await this.settle(flushing, deadline);
    return { now: clock.now(), mode: clock.kind, timersFired, idle: !req.flush || flushing };
  }

  /**
   * Returns whether flushing goes on (false once the deadline passed). Cheap when the timer did
   * nothing asynchronous: periodic housekeeping timers can fire thousands of times in one jump.
   */
  private async settle(flushing: boolean, deadline: number): Promise<boolean> {
    // A timer callback may queue its write a few microtasks late (after an `await`).
    for (let i = 0; i < 4; i++) await Promise.resolve();
    // Queued writes commit in the next turn; their continuations (re-armed timers, further
    // writes) run right after, before the turn we wait for ends.
    while (this.commit.pendingWrites > 0) await nextTurn();
    if (this.dispatcher.pumpPending) {
      // Workers sign and time-stamp with the announced time.
      (this.clock as ManualClock).announce();
      await this.dispatcher.whenPumped();
    }
    if (!flushing || this.dispatcher.isIdle()) return flushing;
    return withDeadline(this.dispatcher.whenIdle(), deadline - Date.now());
  }
}
