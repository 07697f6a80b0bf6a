/** `request()`, with a synchronous throw turned into a rejected promise. */
function invoke<T>(request: () => Promise<T>): Promise<T> {
  try {
    return request();
  } catch (error) {
    return Promise.reject(error);
  }
}

interface Slot {
  startedAt: number;
}

/**
 * How many delivery requests a worker has under way at once. Bun's fetch keeps at most 64 idle
 * keep-alive connections per process: with more requests under way than that, every answer past
 * the 64th closes its connection and the next request opens a new one, which cost twice the CPU
 * per request (measured: 64 at once 15 µs, 256 at once 32 µs, on the fetching process).
 *
 * So an attempt starts while fewer than `limit` fast ones are under way. One under way for longer
 * than `slowMs` stops counting: next to a slow receiver's wait a new connection costs nothing, and
 * slow receivers must not hold back the others (nor each other).
 */
export class RequestSlots {
  /** The requests under way, with their start times (performance.now). */
  private readonly running = new Set<Slot>();
  private readonly waiting: Array<() => Promise<unknown>> = [];
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly limit: number,
    private readonly slowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Runs `request` once a slot is free; the slot is given back when it settles. */
  run<T>(request: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.start(() => {
        const promise = invoke(request);
        promise.then(resolve, reject);
        return promise;
      }),
    );
  }

  /**
   * As run, without a promise of its own: a request that waits is only a function in a queue (the
   * dispatcher hands a worker up to 2048 jobs at once).
   */
  start(request: () => Promise<unknown>): void {
    if (this.waiting.length === 0 && this.hasRoom()) this.begin(request);
    else {
      this.waiting.push(request);
      this.armTimer();
    }
  }

  private begin(request: () => Promise<unknown>): void {
    const slot = this.take();
    const release = () => {
      this.running.delete(slot);
      this.startWaiting();
    };
    invoke(request).then(release, release);
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  private hasRoom(): boolean {
    if (this.running.size < this.limit) return true;
    const fastSince = this.now() - this.slowMs;
    let fast = 0;
    for (const slot of this.running) if (slot.startedAt > fastSince) fast++;
    return fast < this.limit;
  }

  private take(): Slot {
    const slot = { startedAt: this.now() };
    this.running.add(slot);
    return slot;
  }

  private startWaiting(): void {
    // Each starts at once, so its slot counts before the next one is considered.
    while (this.waiting.length > 0 && this.hasRoom()) this.begin(this.waiting.shift()!);
    this.armTimer();
  }

  /** While requests wait, look again when the oldest request under way turns slow. */
  private armTimer(): void {
    if (this.timer || this.waiting.length === 0) return;
    let oldest = Infinity;
    for (const slot of this.running) oldest = Math.min(oldest, slot.startedAt);
    const inMs = Number.isFinite(oldest) ? Math.max(1, oldest + this.slowMs - this.now()) : 1;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.startWaiting();
    }, inMs);
  }
}
