import type { MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { Tracing } from "../model/trace.ts";
import { callbackMessage } from "./callbacks.ts";
import type { MessageStorage } from "./storage.ts";

/**
 * Decides, before a new message is stored, whether it waits outside the timeline: a queue at its
 * parallelism parks it (sets `state` PARKED and `dispatchAt` null). Runs inside the write.
 */
export type Admission = (m: MessageRecord, nowMs: number) => void;

/**
 * Where a failed message goes: stores its DLQ entry and returns the entry's id (the DLQ domain).
 * Undefined when the message gets no entry of its own: a workflow run keeps its failures in the
 * run's one entry, and a `context.call`'s failed answer goes back to the run instead.
 */
export interface DeadLetterSink {
  put(entry: { message: MessageRecord; outcome: DeliveryOutcome; error: string; failedAt: number }): string | undefined;
}

/**
 * Claims a new message as it is stored, when it may go to a worker at once (the dispatcher).
 * `wants` decides before the row is written and changes nothing; `took` runs once the row is
 * written claimed and its events are emitted: a write that failed before it leaves nothing
 * claimed in memory, and one that fails after it tells it through the commit's follow-up.
 */
export interface ClaimOnInsert {
  wants(m: MessageRecord, nowMs: number): boolean;
  took(m: MessageRecord, nowMs: number): void;
}

export interface LifecycleDeps {
  store: MessageStorage;
  events: MessageEvents;
  admit: Admission;
  deadLetters: DeadLetterSink;
  /** A callback continues the trace of the attempt that made it. */
  tracing?: Tracing;
}

/**
 * Every persistent transition of a message: the row change, the event every listener follows
 * (event log, usage statistics, queues, schedules), the DLQ entry and the callbacks. Callers run
 * these inside the group commit, so a transition and all its consequences commit together.
 */
export class MessageLifecycle {
  private readonly store: MessageStorage;
  private readonly events: MessageEvents;
  private readonly admit: Admission;
  private readonly deadLetters: DeadLetterSink;
  private readonly tracing: Tracing | undefined;

  constructor(deps: LifecycleDeps) {
    this.tracing = deps.tracing;
    this.store = deps.store;
    this.events = deps.events;
    this.admit = deps.admit;
    this.deadLetters = deps.deadLetters;
  }

  /**
   * Stores a new message (parked first if its queue is full). One that `claim` wants is stored
   * claimed (ACTIVE, due nowhere): created, then claimed, in one row write.
   */
  accept(m: MessageRecord, nowMs: number, claim?: ClaimOnInsert): void {
    this.admit(m, nowMs);
    const claiming = claim?.wants(m, nowMs) ? claim : undefined;
    if (claiming) this.store.insertClaimed(m);
    else this.store.insert(m);
    this.events.emit("created", { message: m, atMs: nowMs });
    if (!claiming) return;
    this.claimed(m, nowMs);
    // The record now says what its row says (the publisher's wake reads it; a worker gets it).
    m.state = "ACTIVE";
    m.dispatchAt = null;
    claiming.took(m, nowMs);
  }

  /** The dispatcher claimed it (its row is ACTIVE now). */
  claimed(m: MessageRecord, nowMs: number): void {
    this.events.emit("claimed", { message: m, atMs: nowMs });
  }

  delivered(m: MessageRecord, outcome: DeliveryOutcome, nowMs: number): void {
    this.store.delete(m.id);
    this.events.emit("delivered", { message: m, outcome, atMs: nowMs });
    this.sendCallback(m, outcome, nowMs);
  }

  retrying(m: MessageRecord, outcome: DeliveryOutcome, at: number, error: string, nowMs: number): void {
    this.store.reschedule(m.id, "RETRY", at, m.retried + 1);
    this.events.emit("retried", { message: m, outcome, error, nextDeliveryAt: at, atMs: nowMs });
    if (!m.callbackOnce) this.sendCallback(m, outcome, nowMs);
  }

  failed(m: MessageRecord, outcome: DeliveryOutcome, error: string, nowMs: number): string | undefined {
    this.store.delete(m.id);
    const dlqId = this.deadLetters.put({ message: m, outcome, error, failedAt: nowMs });
    this.events.emit("failed", { message: m, outcome, error, dlqId, atMs: nowMs });
    // The only callback of a message that calls back once says that no attempt follows, even when
    // it failed before its retries ran out (a non-retryable answer).
    this.sendCallback(m.callbackOnce ? { ...m, retried: m.maxRetries } : m, outcome, nowMs);
    // A failure callback reports a DLQ entry.
    if (m.failureCallback && dlqId !== undefined) {
      const trace = this.tracing?.fromAttempt(m);
      this.accept(callbackMessage(m, m.failureCallback, "failure-callback", outcome, nowMs, dlqId, trace), nowMs);
    }
    return dlqId;
  }

  /** Removes a waiting or in-flight message; returns false if it was already gone. */
  cancel(m: MessageRecord, nowMs: number): boolean {
    if (!this.store.delete(m.id)) return false;
    this.events.emit("cancelled", { message: m, atMs: nowMs });
    return true;
  }

  private sendCallback(m: MessageRecord, outcome: DeliveryOutcome, nowMs: number) {
    // A callback carries the destination's answer; an attempt that got none has nothing to carry,
    // unless it is the only callback the message will ever send (the caller waits for it).
    if (m.callback && (outcome.status !== undefined || m.callbackOnce)) {
      const trace = this.tracing?.fromAttempt(m);
      this.accept(callbackMessage(m, m.callback, "callback", outcome, nowMs, undefined, trace), nowMs);
    }
  }
}
