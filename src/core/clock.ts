/**
 * The one source of time for domain code. Timers go through the clock too, so a manual clock
 * can make hours of retries and cron triggers pass in milliseconds.
 */
export interface Clock {
  readonly kind: "real" | "manual";
  now(): number;
  /**
   * Calls `fn` once the clock reaches `atMs`; returns a cancel function. Work `fn` does later
   * (it returns a promise) is waited for by a manual clock's jumps before the next timer fires.
   */
  at(atMs: number, fn: TimerFn): () => void;
  /** Subscribes to jumps of a manual clock (never called for the real clock). */
  onAdvance(fn: (nowMs: number) => void): () => void;
}

/** A timer's work; a promise it returns is work it does later. */
export type TimerFn = () => unknown;

// setTimeout caps at 2^31-1 ms; longer waits are re-armed in steps.
const MAX_TIMEOUT = 2_147_483_647;

export class RealClock implements Clock {
  readonly kind = "real" as const;
  now(): number {
    return Date.now();
  }
  at(atMs: number, fn: TimerFn): () => void {
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
  fn: TimerFn;
}

export class ManualClock implements Clock {
  readonly kind = "manual" as const;
  private current: number;
  private timers: ManualTimer[] = [];
  private seq = 0;
  private listeners = new Set<(nowMs: number) => void>();
  /** Work fired timers still do (a read or a write an engine answers later). */
  private busy = new Set<Promise<unknown>>();

  constructor(startMs: number) {
    this.current = startMs;
  }
  now(): number {
    return this.current;
  }
  at(atMs: number, fn: TimerFn): () => void {
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
  /**
   * Moves time forward (never backward) and fires every timer due by `targetMs`, one at a time in
   * time order. Time first steps to each timer's own instant, so a timer that re-arms a later one
   * (an hourly cron, a retry) sees its own instant as now, and the re-armed timer fires in the same
   * jump if it is still due: one advance of a day fires an hourly timer 24 times.
   */
  advanceTo(targetMs: number): number {
    this.checkForward(targetMs);
    while (this.fireNext(targetMs));
    this.current = targetMs;
    this.announce();
    return this.current;
  }

  /**
   * One step of a jump: moves time to the earliest timer due by `limitMs` and fires it. False when
   * none is due. Callers that need the work a timer starts to settle before the next one fires
   * (asynchronous writes that re-arm timers) step with this and finish with `advanceTo`.
   */
  fireNext(limitMs: number): boolean {
    this.checkForward(limitMs);
    let next: ManualTimer | undefined;
    for (const t of this.timers) {
      if (t.atMs <= limitMs && (!next || t.atMs < next.atMs || (t.atMs === next.atMs && t.seq < next.seq))) next = t;
    }
    if (!next) return false;
    if (next.atMs > this.current) this.current = next.atMs;
    this.fire(next);
    return true;
  }

  /** Tells subscribers the current time (called at the end of a jump, or between steps of one). */
  announce(): void {
    for (const listener of this.listeners) listener(this.current);
  }

  private checkForward(targetMs: number) {
    if (!Number.isFinite(targetMs) || targetMs < this.current) throw new RangeError("the clock never goes backward");
  }
  /** Resolves once the work of every timer fired so far has ended (at once when there is none). */
  async settled(): Promise<void> {
    while (this.busy.size > 0) await Promise.allSettled([...this.busy]);
  }

  private fire(timer: ManualTimer) {
    this.timers = this.timers.filter((t) => t !== timer);
    const work = timer.fn();
    if (!(work instanceof Promise)) return;
    const tracked = work.finally(() => this.busy.delete(tracked));
    this.busy.add(tracked);
  }
}
