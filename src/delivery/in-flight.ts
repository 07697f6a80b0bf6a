import type { MessageRecord } from "../model/message.ts";

/** One attempt handed to a worker; the ticket tells its answer from a late one of an older attempt. */
export interface Attempt {
  message: MessageRecord;
  ticket: number;
}

/**
 * The attempts the workers hold, by ticket and by message id: the dispatcher opens them, the
 * outcome recorder closes them, a cancel disowns them (a late answer then finds nothing).
 */
export class InFlightAttempts {
  private readonly byTicket = new Map<number, Attempt>();
  private readonly ticketOf = new Map<string, number>();
  private nextTicket = 1;

  get size(): number {
    return this.byTicket.size;
  }

  /** Attempts opened since start: with `size` it tells whether anything changed. */
  get opened(): number {
    return this.nextTicket - 1;
  }

  open(message: MessageRecord): Attempt {
    const attempt = { message, ticket: this.nextTicket++ };
    this.restore(attempt);
    return attempt;
  }

  /** The attempt of `ticket`, left open. */
  peek(ticket: number): Attempt | undefined {
    return this.byTicket.get(ticket);
  }

  /** Closes the attempt of `ticket`; undefined when it was disowned or already closed. */
  close(ticket: number): Attempt | undefined {
    const attempt = this.byTicket.get(ticket);
    if (!attempt) return undefined;
    this.byTicket.delete(ticket);
    this.ticketOf.delete(attempt.message.id);
    return attempt;
  }

  /** Puts a closed attempt back (its outcome could not be recorded after all). */
  restore(attempt: Attempt): void {
    this.byTicket.set(attempt.ticket, attempt);
    this.ticketOf.set(attempt.message.id, attempt.ticket);
  }

  /** Closes the attempt of a message that was cancelled; undefined when it has none. */
  disown(messageId: string): Attempt | undefined {
    const ticket = this.ticketOf.get(messageId);
    return ticket === undefined ? undefined : this.close(ticket);
  }

  has(messageId: string): boolean {
    return this.ticketOf.has(messageId);
  }
}
