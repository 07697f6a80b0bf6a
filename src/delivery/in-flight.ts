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
  /** Tickets disowned by a write not settled yet: it may still be undone, and the attempt be back. */
  private readonly disowning = new Set<number>();
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

  /**
   * Closes the attempt of a message being cancelled, inside the cancel's write; undefined when it
   * has none. Until `settleDisown`, an answer to it finds it gone but `disownPending`.
   */
  disown(messageId: string): Attempt | undefined {
    const ticket = this.ticketOf.get(messageId);
    if (ticket === undefined) return undefined;
    this.disowning.add(ticket);
    return this.close(ticket);
  }

  /** The write that disowned `attempt` ended: stored (the attempt is over), or not (it is in flight again). */
  settleDisown(attempt: Attempt, stored: boolean): void {
    this.disowning.delete(attempt.ticket);
    if (!stored) this.restore(attempt);
  }

  /** The attempt of `ticket` was disowned by a write that may still be undone: its answer must wait. */
  disownPending(ticket: number): boolean {
    return this.disowning.has(ticket);
  }

  has(messageId: string): boolean {
    return this.ticketOf.has(messageId);
  }
}
