import type { MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { Tracing } from "../model/trace.ts";
import type { WriteTx } from "../store/transactor.ts";
import { callbackMessage } from "./callbacks.ts";
import type { MessageStorage } from "./storage.ts";

/**
 * Decides, before a new message is stored, whether it waits outside the timeline: a queue at its
 * parallelism parks it (sets `state` PARKED and `dispatchAt` null). Runs inside the write `tx`.
 */
export type Admission = (tx: WriteTx, m: MessageRecord, nowMs: number) => Promise<void>;

/**
 * Where a failed message goes: stores its DLQ entry and returns the entry's id (the DLQ domain).
 * Undefined when the message gets no entry of its own: a workflow run keeps its failures in the
 * run's one entry, and a `context.call`'s failed answer goes back to the run instead.
 */
export interface DeadLetterSink {
  put(
    tx: WriteTx,
    entry: { message: MessageRecord; outcome: DeliveryOutcome; error: string; failedAt: number },
  ): Promise<string | undefined>;
}

/**
 * Claims a new message as it is stored, when it may go to a worker at once (the dispatcher).
 * `wants` decides before the row is written and changes nothing; `took` runs once the row is
 * written claimed and its events are emitted: a write that failed before it leaves nothing
 * claimed in memory, and one that fails after it tells it through the follow-up of its write `tx`.
 */
export interface ClaimOnInsert {
  wants(m: MessageRecord, nowMs: number): boolean;
  took(tx: WriteTx, m: MessageRecord, nowMs: number): void;
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
 * these inside a write of the group commit (`tx`), so a transition and all its consequences
 * commit together.
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
  async accept(tx: WriteTx, m: MessageRecord, nowMs: number, claim?: ClaimOnInsert): Promise<void> {
    await this.admit(tx, m, nowMs);
    const claiming = claim?.wants(m, nowMs) ? claim : undefined;
    if (claiming) await this.store.insertClaimed(tx, m);
    else await this.store.insert(tx, m);
    await this.events.emit(tx, "created", { message: m, atMs: nowMs });
    if (!claiming) return;
    await this.claimed(tx, m, nowMs);
    // The record now says what its row says (the publisher's wake reads it; a worker gets it),
    // and what it said before if the write is not stored (it may run again).
    const { state, dispatchAt } = m;
    m.state = "ACTIVE";
    m.dispatchAt = null;
    tx.afterCommit((committed) => {
      if (!committed) Object.assign(m, { state, dispatchAt });
    });
    claiming.took(tx, m, nowMs);
  }

  /** The dispatcher claimed it (its row is ACTIVE now). */
  claimed(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<void> {
    return this.events.emit(tx, "claimed", { message: m, atMs: nowMs });
  }

  async delivered(tx: WriteTx, m: MessageRecord, outcome: DeliveryOutcome, nowMs: number): Promise<void> {
    await this.store.delete(tx, m.id);
    await this.events.emit(tx, "delivered", { message: m, outcome, atMs: nowMs });
    if (callsBack(m, outcome)) await this.sendCallback(tx, m, outcome, nowMs);
  }

  async retrying(
    tx: WriteTx,
    m: MessageRecord,
    outcome: DeliveryOutcome,
    at: number,
    error: string,
    nowMs: number,
  ): Promise<void> {
    await this.store.reschedule(tx, m.id, "RETRY", at, m.retried + 1);
    await this.events.emit(tx, "retried", { message: m, outcome, error, nextDeliveryAt: at, atMs: nowMs });
    if (!m.callbackOnce && callsBack(m, outcome)) await this.sendCallback(tx, m, outcome, nowMs);
  }

  async failed(
    tx: WriteTx,
    m: MessageRecord,
    outcome: DeliveryOutcome,
    error: string,
    nowMs: number,
  ): Promise<string | undefined> {
    await this.store.delete(tx, m.id);
    const dlqId = await this.deadLetters.put(tx, { message: m, outcome, error, failedAt: nowMs });
    await this.events.emit(tx, "failed", { message: m, outcome, error, dlqId, atMs: nowMs });
    // The only callback of a message that calls back once says that no attempt follows, even when
    // it failed before its retries ran out (a non-retryable answer).
    if (callsBack(m, outcome)) {
      await this.sendCallback(tx, m.callbackOnce ? { ...m, retried: m.maxRetries } : m, outcome, nowMs);
    }
    // A failure callback reports a DLQ entry.
    if (m.failureCallback && dlqId !== undefined) {
      const trace = this.tracing?.fromAttempt(m);
      const callback = callbackMessage(m, m.failureCallback, "failure-callback", outcome, nowMs, dlqId, trace);
      await this.accept(tx, callback, nowMs);
    }
    return dlqId;
  }

  /** Removes a waiting or in-flight message; returns false if it was already gone. */
  async cancel(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<boolean> {
    if (!(await this.store.delete(tx, m.id))) return false;
    await this.events.emit(tx, "cancelled", { message: m, atMs: nowMs });
    return true;
  }

  /** Only when `callsBack` says so (most messages have no callback: no write to start for them). */
  private sendCallback(tx: WriteTx, m: MessageRecord, outcome: DeliveryOutcome, nowMs: number): Promise<void> {
    const trace = this.tracing?.fromAttempt(m);
    return this.accept(tx, callbackMessage(m, m.callback!, "callback", outcome, nowMs, undefined, trace), nowMs);
  }
}

/**
 * A callback carries the destination's answer; an attempt that got none has nothing to carry,
 * unless it is the only callback the message will ever send (the caller waits for it).
 */
function callsBack(m: MessageRecord, outcome: DeliveryOutcome): boolean {
  return !!m.callback && (outcome.status !== undefined || !!m.callbackOnce);
}
