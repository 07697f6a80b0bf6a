import type { MessageEventMap, MessageEventType, MessageEvents } from "../model/events.ts";
import type { MessageRecord } from "../model/message.ts";

const TYPES: readonly MessageEventType[] = ["created", "claimed", "delivered", "retried", "failed", "cancelled"];

/** Events a slow reader may fall behind by before the stream drops them (and says how many). */
const MAX_BEHIND = 1000;

interface Reader {
  controller: ReadableStreamDefaultController<Uint8Array>;
  /** Events dropped since the reader last kept up. */
  dropped: number;
}

type AnyEvent = MessageEventMap[MessageEventType] & { outcome?: { status?: number }; error?: string; dlqId?: string; nextDeliveryAt?: number };

/** What the stream tells about one event: the message, where it goes, how the step ended. */
function eventFields(type: MessageEventType, e: AnyEvent): Record<string, unknown> {
  const m: MessageRecord = e.message;
  const fields: Record<string, unknown> = { type, messageId: m.id, url: m.url, atMs: e.atMs };
  if (e.outcome?.status !== undefined) fields.status = e.outcome.status;
  if (e.error !== undefined) fields.error = e.error;
  if (e.nextDeliveryAt !== undefined) fields.nextDeliveryAt = e.nextDeliveryAt;
  if (e.dlqId !== undefined) fields.dlqId = e.dlqId;
  if (m.topicName) fields.topicName = m.topicName;
  if (m.queueName) fields.queueName = m.queueName;
  if (m.scheduleId) fields.scheduleId = m.scheduleId;
  if (m.flow) fields.flowControlKey = m.flow.key;
  if (m.workflow) fields.workflowRunId = m.workflow.runId;
  if (m.labels?.length) fields.labels = m.labels;
  return fields;
}

const encoder = new TextEncoder();
const frame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

/**
 * Server-sent event streams of the message lifecycle, one account each. They are fed by observers
 * of the message event bus, so a reader sees only changes that were committed, in order. The bus
 * is observed only while a stream is open: without readers, events cost nothing here. A reader
 * that falls too far behind loses events; the next frame it gets says how many (`dropped`), so it
 * knows to read the state again.
 */
export class LiveEventStreams {
  private readonly readers = new Map<string, Set<Reader>>();
  private stopObserving: Array<() => void> = [];

  constructor(private readonly events: MessageEvents) {}

  /** Open streams (all accounts). */
  get size(): number {
    let n = 0;
    for (const set of this.readers.values()) n += set.size;
    return n;
  }

  /** A `text/event-stream` of the account's events; it ends when the reader goes or `closeAll` is called. */
  open(accountId: string, hello: Record<string, unknown>): Response {
    let reader: Reader;
    const stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          reader = { controller, dropped: 0 };
          this.add(accountId, reader);
          controller.enqueue(encoder.encode("retry: 2000\n\n"));
          controller.enqueue(frame("ready", hello));
        },
        cancel: () => this.remove(accountId, reader),
      },
      { highWaterMark: MAX_BEHIND },
    );
    return new Response(stream, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-store", "x-accel-buffering": "no" },
    });
  }

  /** Ends every stream (at shutdown: an open stream would keep the server from stopping). */
  closeAll(): void {
    for (const [accountId, set] of this.readers)
      for (const reader of set) {
        this.remove(accountId, reader);
        try {
          reader.controller.close();
        } catch {
          // already closed by its reader
        }
      }
  }

  private add(accountId: string, reader: Reader): void {
    if (this.size === 0) this.stopObserving = TYPES.map((type) => this.events.observe(type, (e) => this.send(type, e as AnyEvent)));
    const set = this.readers.get(accountId) ?? new Set<Reader>();
    set.add(reader);
    this.readers.set(accountId, set);
  }

  private remove(accountId: string, reader: Reader): void {
    const set = this.readers.get(accountId);
    if (!set?.delete(reader)) return;
    if (set.size === 0) this.readers.delete(accountId);
    if (this.size === 0) {
      for (const stop of this.stopObserving) stop();
      this.stopObserving = [];
    }
  }

  private send(type: MessageEventType, e: AnyEvent): void {
    const set = this.readers.get(e.message.accountId);
    if (!set) return;
    const bytes = frame(type, eventFields(type, e));
    for (const reader of set) {
      const { controller } = reader;
      if ((controller.desiredSize ?? 0) <= 0) {
        reader.dropped++;
        continue;
      }
      if (reader.dropped > 0) {
        controller.enqueue(frame("dropped", { dropped: reader.dropped }));
        reader.dropped = 0;
      }
      controller.enqueue(bytes);
    }
  }
}
