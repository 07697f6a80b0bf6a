import type { Logger } from "../core/log.ts";
import type { WriteTx } from "../store/transactor.ts";
import type { MessageRecord } from "./message.ts";
import type { DeliveryOutcome } from "./outcome.ts";

/**
 * The life of a message as typed events, one per persistent transition. `atMs` is the server
 * clock's time of the transition. The message is the record as it is being written: read it,
 * never change or keep it.
 */
export interface MessageEventMap {
  /** Stored: published, a callback, a DLQ retry or a schedule trigger. PARKED when it waits in a queue. */
  created: { message: MessageRecord; atMs: number };
  /** Claimed for an attempt (ACTIVE); it goes to a delivery worker once this is committed. */
  claimed: { message: MessageRecord; atMs: number };
  /** A 2XX answer: the message is done. */
  delivered: { message: MessageRecord; outcome: DeliveryOutcome; atMs: number };
  /** The attempt failed and another one follows at `nextDeliveryAt`. */
  retried: { message: MessageRecord; outcome: DeliveryOutcome; error: string; nextDeliveryAt: number; atMs: number };
  /**
   * The last attempt failed (or the answer said not to retry): the message is now DLQ entry
   * `dlqId`; without one when its failure is reported elsewhere (a workflow run's message, see
   * DeadLetterSink).
   */
  failed: { message: MessageRecord; outcome: DeliveryOutcome; error: string; dlqId?: string; atMs: number };
  /** Cancelled while waiting or in flight (an attempt in flight is disowned: its answer is ignored). */
  cancelled: { message: MessageRecord; atMs: number };
}

export type MessageEventType = keyof MessageEventMap;

/**
 * A listener that keeps its own state in step with messages, inside the write that changes the
 * message (`tx`); every method is optional.
 */
export type MessageListener = { [K in MessageEventType]?: (event: MessageEventMap[K], tx: WriteTx) => void | Promise<void> };

export type FinishedHow = "delivered" | "failed" | "cancelled";

/** A listener for the three ways a message ends. */
export function onFinished(
  fn: (tx: WriteTx, message: MessageRecord, how: FinishedHow, atMs: number) => void | Promise<void>,
): MessageListener {
  return {
    delivered: (e, tx) => fn(tx, e.message, "delivered", e.atMs),
    failed: (e, tx) => fn(tx, e.message, "failed", e.atMs),
    cancelled: (e, tx) => fn(tx, e.message, "cancelled", e.atMs),
  };
}

type Listeners = { [K in MessageEventType]: Array<(event: MessageEventMap[K], tx: WriteTx) => void | Promise<void>> };
type Handlers = { [K in MessageEventType]: Array<(event: MessageEventMap[K]) => void> };

const TYPES: readonly MessageEventType[] = ["created", "claimed", "delivered", "retried", "failed", "cancelled"];

const emptyHandlers = (): Handlers => ({ created: [], claimed: [], delivered: [], retried: [], failed: [], cancelled: [] });

/**
 * The message lifecycle event bus. The contract other parts rely on:
 *
 * - **Listeners** (given to the constructor, fixed for the life of the server) keep state that
 *   must move with the message: the event log, usage statistics, queues, schedules. They run
 *   inside the write that changes the message (they get its `tx`), one after the other in the
 *   order given, and may write to the database. A listener that throws fails that write: the change, its log entries and
 *   every other listener's writes are rolled back together. Listeners must not depend on each
 *   other's order and must not emit events themselves.
 * - **Observers** (`observe`, any time, any number) only count or display: a metrics endpoint,
 *   a live view, a test. They run after the commit that stored the change, and never for a
 *   change that was rolled back, so they see exactly what the database holds. They must not
 *   write; one that throws is logged and the others still run. Events of one commit reach them
 *   in the order they happened.
 * - Events are emitted only by the message lifecycle (`MessageLifecycle`) and, for `claimed`,
 *   by the dispatcher through it: every transition of every message, callbacks included.
 */
export class MessageEvents {
  private readonly listeners: Listeners = { created: [], claimed: [], delivered: [], retried: [], failed: [], cancelled: [] };
  private readonly observers = emptyHandlers();

  constructor(
    private readonly log: Logger,
    listeners: readonly MessageListener[],
  ) {
    for (const listener of listeners) {
      for (const type of TYPES) {
        const fn = listener[type];
        if (fn) (this.listeners[type] as Array<typeof fn>).push(fn.bind(listener));
      }
    }
  }

  /** Inside the write `tx` that makes the change: the listeners, one after the other; the observers once it is committed. */
  async emit<K extends MessageEventType>(tx: WriteTx, type: K, event: MessageEventMap[K]): Promise<void> {
    for (const listener of this.listeners[type]) await listener(event, tx);
    if (this.observers[type].length === 0) return;
    tx.afterCommit((committed) => {
      if (!committed) return;
      // The observers of the moment: observe and its undo replace the list instead of changing it,
      // so one that stops (itself or another) during this loop still gets this event.
      for (const observer of this.observers[type]) {
        try {
          observer(event);
        } catch (error) {
          this.log.error("a message event observer failed", { event: type, error: String((error as Error)?.stack ?? error) });
        }
      }
    });
  }

  /** Calls `fn` after each committed event of `type`; returns the function that stops it. */
  observe<K extends MessageEventType>(type: K, fn: (event: MessageEventMap[K]) => void): () => void {
    const observers = this.observers as Record<K, Array<(event: MessageEventMap[K]) => void>>;
    observers[type] = [...observers[type], fn];
    return () => {
      const list = observers[type];
      const at = list.indexOf(fn);
      if (at >= 0) observers[type] = [...list.slice(0, at), ...list.slice(at + 1)];
    };
  }
}
