import type { Clock } from "../core/clock.ts";

/** The dispatcher's one clock timer, armed for the earliest future message. */
export class DueTimer {
  private armedAt = Infinity;
  private cancelArmed: (() => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly fire: () => void,
  ) {}

  /** The armed timer fires no later than `atMs`. */
  firesBy(atMs: number): boolean {
    return atMs >= this.armedAt;
  }

  /** Fires at `atMs` unless it is armed for no later already. */
  arm(atMs: number): void {
    if (atMs >= this.armedAt) return;
    this.cancelArmed?.();
    this.armedAt = atMs;
    this.cancelArmed = this.clock.at(atMs, () => {
      this.armedAt = Infinity;
      this.cancelArmed = null;
      this.fire();
    });
  }

  cancel(): void {
    this.cancelArmed?.();
  }
}
