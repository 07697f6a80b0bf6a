/**
 * The flow-control gate inside a delivery worker. Every job of one flow-control key reaches the
 * same worker (WorkerPool routes by a stable hash of the key), so this gate alone holds the key's
 * in-flight counter and rate window: the limits hold with any number of workers.
 *
 * Jobs over a limit wait here in arrival order; none is ever failed for waiting.
 */
import type { Clock } from "../core/clock.ts";
import type { FlowControl } from "../model/message.ts";
import { Fifo } from "./fifo.ts";

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
}

interface Lane<J> {
  key: string;
  limits: FlowControl;
  waiting: Fifo<J>;
  active: number;
  /** Start times inside the sliding period, oldest first. */
  starts: Fifo<number>;
  timerAt: number;
  cancelTimer: (() => void) | null;
}

export class FlowGate<J extends GatedJob> {
  private readonly lanes = new Map<string, Lane<J>>();

  constructor(
    /** The worker's clock: the server's manual time when the server runs on one. */
    private readonly clock: Pick<Clock, "now" | "at" | "kind">,
    /** Performs the delivery; resolves when the attempt is over, whatever its outcome. */
    private readonly run: (job: J) => Promise<void>,
  ) {}

  submit(job: J & { flow: FlowControl }): void {
    let lane = this.lanes.get(job.flow.key);
    if (!lane) {
      lane = { key: job.flow.key, limits: job.flow, waiting: new Fifo(), active: 0, starts: new Fifo(), timerAt: Infinity, cancelTimer: null };
      this.lanes.set(lane.key, lane);
    }
    // The most recently dispatched message of a key sets the key's limits.
    lane.limits = job.flow;
    lane.waiting.push(job);
    this.pump(lane);
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
      this.expire(lane, now);
      out.push({
        key: lane.key,
        waiting: lane.waiting.length,
        active: lane.active,
        parallelism: lane.limits.parallelism,
        rate: lane.limits.rate,
        periodMs: lane.limits.periodMs,
        rateCount: lane.starts.length,
        periodStart: lane.starts.peek() ?? now,
      });
    }
    return out;
  }

  /** Starts every waiting job the limits allow; arms a timer for the moment the rate frees a slot. */
  private pump(lane: Lane<J>): void {
    const now = this.clock.now();
    const { parallelism, rate, periodMs } = lane.limits;
    while (lane.waiting.length > 0) {
      // A finished delivery calls pump again, so parallelism needs no timer.
      if (parallelism !== undefined && lane.active >= parallelism) return;
      if (rate !== undefined) {
        this.expire(lane, now);
        // Sliding period: a start is allowed once the rate-th previous start is a whole period old,
        // so no window of that length ever holds more than `rate` starts.
        if (lane.starts.length >= rate) return this.armTimer(lane, lane.starts.peek()! + this.window(periodMs));
        lane.starts.push(now);
      }
      const job = lane.waiting.shift()!;
      lane.active++;
      void this.run(job).finally(() => {
        lane.active--;
        this.pump(lane);
      });
    }
    if (lane.active > 0) return;
    // Idle: the lane is forgotten once its rate window is empty (until then stats still show it).
    this.expire(lane, now);
    const lastStart = lane.starts.last();
    if (lane.starts.length === 0 || lastStart === undefined) {
      lane.cancelTimer?.();
      this.lanes.delete(lane.key);
    } else this.armTimer(lane, lastStart + this.window(periodMs));
  }

  /**
   * A start counts for its period plus a small guard (a twentieth of the period, at most 50 ms):
   * requests of one burst reach the receiver a few milliseconds apart, and without the guard a
   * receiver could see `rate + 1` requests inside one period. A manual clock has no such jitter.
   */
  private window(periodMs: number): number {
    return this.clock.kind === "manual" ? periodMs : periodMs + Math.min(50, Math.floor(periodMs / 20));
  }

  private expire(lane: Lane<J>, now: number): void {
    const horizon = now - this.window(lane.limits.periodMs);
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
