/**
 * A call to something built later: the caller holds the signal from its constructor and rings
 * it; the callee, once built, answers it (once). Construction order then needs no cycle.
 */
export class Signal {
  private answer: (() => void) | null = null;

  readonly ring = (): void => {
    this.answer?.();
  };

  answerWith(fn: () => void): void {
    if (this.answer) throw new Error("the signal already has its answer");
    this.answer = fn;
  }
}
