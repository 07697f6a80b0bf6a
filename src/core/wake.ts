/**
 * "A message may be due now (or at `dueAt`)": rung by whatever makes messages dispatchable — a
 * publish, a queue letting its next message go, flow control releasing a held one — and answered
 * by the dispatcher. It is built before both, so neither has to refer to the other.
 */
export class WakeSignal {
  private answer: ((dueAt?: number) => void) | null = null;

  /** `dueAt`: the earliest due time of what changed, when known (a later one may need no wake-up). */
  readonly ring = (dueAt?: number): void => {
    this.answer?.(dueAt);
  };

  /** The dispatcher answers the signal, once, from its constructor. */
  answerWith(fn: (dueAt?: number) => void): void {
    if (this.answer) throw new Error("the wake signal already has its dispatcher");
    this.answer = fn;
  }
}

/** What producers get: ring the dispatcher. */
export type Wake = (dueAt?: number) => void;
