/**
 * The flow-control gate inside a delivery worker. Every job of one flow-control key reaches the
 * same worker (WorkerPool routes by a stable hash of the key), so this gate alone holds the key's
 * in-flight counter and rate window: the limits hold with any number of workers.
 *
 * Jobs over a limit, or of a paused key, wait here in arrival order; none is ever failed for
 * waiting. What the API set for a key (pause, pinned limits) arrives as steering and stays after
 * the lane itself is forgotten.
 */
import type { Clock } from "../core/clock.ts";
import type { FlowSteering } from "../model/flow-control.ts";
import type { FlowControl } from "../model/message.ts";
import { Fifo } from "./fifo.ts";
import type { GlobalSlots } from "./global-slots.ts";

/** What the gate needs of a job: its ticket (to cancel it) and its lane's limits. */
export interface GatedJob {
  ticket: number;
  flow?: FlowControl;
}

/** What a worker knows of one flow-control lane (`key` is the account-prefixed lane key). */
export interface FlowLaneStats {
  key: string;
  /** Jobs that arrived and wait for the lane's parallelism or rate. */
  waiting: number;
  /** Deliveries in flight. */
  active: number;
  parallelism?: number;
  rate?: number;
  periodMs: number;
  /** Deliveries started within the current sliding period. */
  rateCount: number;
  /** Start of the current sliding period: the oldest start still counted (now when none). */
  periodStart: number;
  /** Paused through the API: its waiting jobs wait for a resume, not for a time. */
  paused: boolean;
}

interface Lane<J> {
  key: string;
  /** The account the lane belongs to: its deliveries count toward the account's global limit. */
  accountId: string;
  /** The limits the most recently dispatched message of the key carries. */
  carried: FlowControl;
  waiting: Fifo<J>;
  active: number;
  /** Start times inside the sliding period, oldest first. */
  starts: Fifo<number>;
  timerAt: number;
  cancelTimer: (() => void) | null;
  /** Waits for a slot of the account's global limit. */
  waitsForSlot: boolean;
}

export interface SteerRequest {
  key: string;
  steering: FlowSteering;
  /** Deliveries started before a restart that still count in the key's rate window. */
  starts?: number[];
  /** A new rate window starts now: no earlier start counts any more (resetRate, pin). */
  resetWindow?: boolean;
}

export class FlowGate<J extends GatedJob> {
  private readonly lanes = new Map<string, Lane<J>>();
  private readonly steering = new Map<string, FlowSteering>();
  /** Starts handed over at worker start, taken by the lane when it is created. */
  private readonly seeds = new Map<string, number[]>();

  constructor(
    /** The worker's clock: the server's manual time when the server runs on one. */
    private readonly clock: Pick<Clock, "now" | "at" | "kind">,
    /**
     * Performs the delivery; resolves when the attempt is over, whatever its outcome. `startedAt`
     * is the start the rate window counts: the attempt reports it as its own.
     */
    private readonly run: (job: J, startedAt: number) => Promise<void>,
    private readonly global: GlobalSlots,
  ) {}

  submit(job: J & { flow: FlowControl }): void {
    let lane = this.lanes.get(job.flow.key);
    if (!lane) {
      const seeded = this.seeds.get(job.flow.key) ?? [];
      this.seeds.delete(job.flow.key);
      lane = {
        key: job.flow.key,
        accountId: job.flow.key.slice(0, job.flow.key.indexOf("/")),
        carried: job.flow,
        waiting: new Fifo(),
        active: 0,
        starts: new Fifo(),
        timerAt: Infinity,
        cancelTimer: null,
        waitsForSlot: false,
      };
      for (const at of seeded) lane.starts.push(at);
      this.lanes.set(lane.key, lane);
    }
    // The most recently dispatched message of a key sets the key's limits (unless pinned).
    lane.carried = job.flow;
    lane.waiting.push(job);
    this.pump(lane);
  }

  /** Applies what the API set for a key: pause or resume, pins, a new rate window. */
  steer(request: SteerRequest): void {
    const { key } = request;
    this.steering.set(key, request.steering);
    if (request.starts) this.seeds.set(key, request.starts);
    const lane = this.lanes.get(key);
    if (request.resetWindow) {
      this.seeds.delete(key);
      if (lane) lane.starts = new Fifo();
    }
    if (lane) this.pump(lane);
  }

  /** Forgets the steering and the rate windows of every key starting with `prefix` (an account reset). */
  forget(prefix: string): void {
    for (const key of [...this.steering.keys(), ...this.seeds.keys()]) {
      if (!key.startsWith(prefix)) continue;
      this.steering.delete(key);
      this.seeds.delete(key);
    }
    for (const lane of this.lanes.values()) {
      if (!lane.key.startsWith(prefix)) continue;
      lane.starts = new Fifo();
      this.pump(lane);
    }
  }

  /** Takes a cancelled job out of its lane if it has not started; returns it when it was waiting. */
  cancel(ticket: number): J | undefined {
    for (const lane of this.lanes.values()) {
      const job = lane.waiting.removeFirst((j) => j.ticket === ticket);
      if (job) {
        this.pump(lane);
        return job;
      }
    }
    return undefined;
  }

  /** Empties every lane's wait list (shutdown): those jobs were never started. */
  releaseWaiting(): J[] {
    const released: J[] = [];
    for (const lane of this.lanes.values()) {
      for (let job = lane.waiting.shift(); job; job = lane.waiting.shift()) released.push(job);
    }
    return released;
  }

  stats(filter: { key?: string; prefix?: string }): FlowLaneStats[] {
    const now = this.clock.now();
    const out: FlowLaneStats[] = [];
    for (const lane of this.lanes.values()) {
      if (filter.key !== undefined && lane.key !== filter.key) continue;
      if (filter.prefix !== undefined && !lane.key.startsWith(filter.prefix)) continue;
      const limits = this.limits(lane);
      this.expire(lane, limits.periodMs, now);
      out.push({
        key: lane.key,
        waiting: lane.waiting.length,
        active: lane.active,
        parallelism: limits.parallelism,
        rate: limits.rate,
        periodMs: limits.periodMs,
        rateCount: lane.starts.length,
        periodStart: lane.starts.peek() ?? now,
        paused: this.paused(lane),
      });
    }
    return out;
  }

  /** The lane's limits: what its messages carry, overridden by what the API pinned. */
  private limits(lane: Lane<J>): FlowControl {
    const pins = this.steering.get(lane.key)?.pins;
    return {
      key: lane.key,
      parallelism: pins?.parallelism ?? lane.carried.parallelism,
      rate: pins?.rate ?? lane.carried.rate,
      periodMs: pins?.periodMs ?? lane.carried.periodMs,
    };
  }

  private paused(lane: Lane<J>): boolean {
    return this.steering.get(lane.key)?.paused ?? false;
  }

  /** Starts every waiting job the limits allow; arms a timer for the moment the rate frees a slot. */
  private pump(lane: Lane<J>): void {
    const now = this.clock.now();
    const { parallelism, rate, periodMs } = this.limits(lane);
    // A paused key starts nothing; its jobs wait (resume pumps again), the rate period runs on.
    while (lane.waiting.length > 0 && !this.paused(lane)) {
      // A finished delivery calls pump again, so parallelism needs no timer.
      if (parallelism !== undefined && lane.active >= parallelism) return;
      if (rate !== undefined) {
        this.expire(lane, periodMs, now);
        // Sliding period: a start is allowed once the rate-th previous start is a whole period old,
        // so no window of that length ever holds more than `rate` starts.
        if (lane.starts.length >= rate) return this.armTimer(lane, lane.starts.peek()! + this.window(periodMs));
      }
      if (!this.global.take(lane.accountId)) return this.waitForSlot(lane);
      if (rate !== undefined) lane.starts.push(now);
      const job = lane.waiting.shift()!;
      lane.active++;
      void this.run(job, now).finally(() => {
        lane.active--;
        this.global.give(lane.accountId);
        this.pump(lane);
      });
    }
    if (lane.active > 0 || lane.waiting.length > 0) return;
    // Idle: the lane is forgotten once its rate window is empty (until then stats still show it).
    this.expire(lane, periodMs, now);
    const lastStart = lane.starts.last();
    if (lane.starts.length === 0 || lastStart === undefined) {
      lane.cancelTimer?.();
      this.lanes.delete(lane.key);
    } else this.armTimer(lane, lastStart + this.window(periodMs));
  }

  private waitForSlot(lane: Lane<J>): void {
    if (lane.waitsForSlot) return;
    lane.waitsForSlot = true;
    this.global.whenFree(lane.accountId, () => {
      lane.waitsForSlot = false;
      this.pump(lane);
    });
  }

  /**
   * A start counts for its period plus a small guard (a twentieth of the period, at most 50 ms):
   * requests of one burst reach the receiver a few milliseconds apart, and without the guard a
   * receiver could see `rate + 1` requests inside one period. A manual clock has no such jitter.
   */
  private window(periodMs: number): number {
    return this.clock.kind === "manual" ? periodMs : periodMs + Math.min(50, Math.floor(periodMs / 20));
  }

  private expire(lane: Lane<J>, periodMs: number, now: number): void {
    const horizon = now - this.window(periodMs);
    while (lane.starts.length > 0 && lane.starts.peek()! <= horizon) lane.starts.shift();
  }

  private armTimer(lane: Lane<J>, atMs: number): void {
    if (lane.cancelTimer && lane.timerAt <= atMs) return;
    lane.cancelTimer?.();
    lane.timerAt = atMs;
    lane.cancelTimer = this.clock.at(atMs, () => {
      lane.cancelTimer = null;
      lane.timerAt = Infinity;
      this.pump(lane);
    });
  }
}
