import type { MessageEventMap, MessageEventType } from "../../src/model/events.ts";
import type { TestServer } from "./server.ts";

const TYPES: MessageEventType[] = ["created", "claimed", "delivered", "retried", "failed", "cancelled"];

export interface SeenEvent {
  type: MessageEventType;
  messageId: string;
  kind: string;
  event: MessageEventMap[MessageEventType];
}

/**
 * Records every committed message lifecycle event of a test server, and lets a test await one
 * instead of polling the API.
 */
export function recordEvents(s: TestServer) {
  const seen: SeenEvent[] = [];
  let waiters: Array<{ test: (e: SeenEvent) => boolean; resolve: (e: SeenEvent) => void }> = [];
  const stops = TYPES.map((type) =>
    s.server.messaging.events.observe(type, (event) => {
      const e = { type, messageId: event.message.id, kind: event.message.kind, event };
      seen.push(e);
      waiters = waiters.filter((w) => !(w.test(e) && (w.resolve(e), true)));
    }),
  );
  return {
    seen,
    /** Resolves with the first event (seen already or to come) that passes `test`; rejects after `timeoutMs`. */
    next(test: (e: SeenEvent) => boolean, timeoutMs = 10_000): Promise<SeenEvent> {
      const already = seen.find(test);
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("timed out waiting for a message event")), timeoutMs);
        waiters.push({ test, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    /** The first event of `type` for the message (seen already or to come). */
    async of<K extends MessageEventType>(type: K, messageId: string, timeoutMs?: number): Promise<MessageEventMap[K]> {
      return (await this.next((e) => e.type === type && e.messageId === messageId, timeoutMs)).event as MessageEventMap[K];
    },
    /** Every event of `type` seen so far. */
    all<K extends MessageEventType>(type: K): MessageEventMap[K][] {
      return seen.filter((e) => e.type === type).map((e) => e.event as MessageEventMap[K]);
    },
    stop: () => stops.forEach((stop) => stop()),
  };
}
