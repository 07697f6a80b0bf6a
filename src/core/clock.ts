/**
 * The one source of time for domain code. Timers go through the clock too, so a manual clock
 * can make hours of retries and cron triggers pass in milliseconds.
 */
export interface Clock {
  readonly kind: "real" | "manual";
  now(): number;
  /** Calls `fn` once the clock reaches `atMs`; returns a cancel function. */
  at(atMs: number, fn: () => void): () => void;
  /** Subscribes to jumps of a manual clock (never called for the real clock). */
  onAdvance(fn: (nowMs: number) => void): () => void;
}

// setTimeout caps at 2^31-1 ms; longer waits are re-armed in steps.
const MAX_TIMEOUT = 2_147_483_647;

export class RealClock implements Clock {
  readonly kind = "real" as const;
  now(): number {
    return Date.now();
  }
  at(atMs: number, fn: () => void): () => void {
    let handle: ReturnType<typeof setTimeout>;
    const arm = () => {
      const wait = atMs - Date.now();
      if (wait > MAX_TIMEOUT) handle = setTimeout(arm, MAX_TIMEOUT);
      else handle = setTimeout(fn, Math.max(0, wait));
    };
    arm();
    return () => clearTimeout(handle);
  }
  onAdvance(): () => void {
    return () => {};
  }
}

interface ManualTimer {
  atMs: number;
  seq: number;
  fn: () => void;
}

export class ManualClock implements Clock {
  readonly kind = "manual" as const;
  private current: number;
  private timers: ManualTimer[] = [];
  private seq = 0;
  private listeners = new Set<(nowMs: number) => void>();

  constructor(startMs: number) {
    this.current = startMs;
  }
  now(): number {
    return this.current;
  }
  at(atMs: number, fn: () => void): () => void {
    const timer = { atMs, seq: this.seq++, fn };
    if (atMs <= this.current) {
      queueMicrotask(() => this.timers.includes(timer) && this.fire(timer));
    }
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }
  onAdvance(fn: (nowMs: number) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
  /** Moves time forward (never backward) and fires every timer that became due, in time order. */
  advanceTo(targetMs: number): number {
    if (targetMs < this.current) throw new RangeError("the clock never goes backward");
    this.current = targetMs;
    const due = this.timers
      .filter((t) => t.atMs <= targetMs)
      .sort((a, b) => a.atMs - b.atMs || a.seq - b.seq);
    for (const timer of due) this.fire(timer);
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }
  private fire(timer: ManualTimer) {
    this.timers = this.timers.filter((t) => t !== timer);
    timer.fn();
  }
}
