import type { MessageEvents } from "../model/events.ts";
import type { MessageCensus } from "../messages/storage.ts";

/**
 * What a stop did, for its last log line: how many attempts in flight at the stop finished
 * (their outcomes recorded), how many messages stay for the next start, and how long it took.
 */
export class ShutdownSummary {
  private drained = 0;
  private readonly startedAt = Date.now();
  private readonly unsubscribe: Array<() => void>;

  constructor(
    events: MessageEvents,
    private readonly inFlightAtStop: number,
  ) {
    const count = () => void this.drained++;
    this.unsubscribe = [events.observe("delivered", count), events.observe("retried", count), events.observe("failed", count)];
  }

  /** `census`: the stored messages once everything is recorded (null when storage failed). */
  finish(census: MessageCensus | null) {
    for (const stop of this.unsubscribe) stop();
    return {
      inFlightAtStop: this.inFlightAtStop,
      drained: this.drained,
      // Attempts cut off at the deadline stay ACTIVE: delivered again at the next start.
      redeliveredAtNextStart: census?.inFlight ?? null,
      waiting: census ? census.due + census.delayed + census.waiting : null,
      durationMs: Date.now() - this.startedAt,
    };
  }
}
