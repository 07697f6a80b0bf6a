import type { Deduplicator } from "../messages/publish.ts";
import type { MessageRecord } from "../model/message.ts";
import type { PublishOptions } from "../messages/options.ts";
import type { DedupStorage } from "./storage.ts";

/** A duplicate within this window is accepted but not enqueued (docs/messaging-api.md, Deduplication). */
export const DEDUP_WINDOW_MS = 10 * 60 * 1000;
const PRUNE_EVERY_MS = 60 * 1000;

/**
 * The id or content identifies a message *to one target*: the same deduplication id published to
 * two different URLs is two messages, and each endpoint of a URL Group keeps its own original.
 */
function target(m: MessageRecord): string {
  return `${m.topicName ?? ""}\n${m.endpointName ?? ""}\n${m.url}`;
}

/** Destination, body, Content-Type and forwarded headers, in a stable order. */
function contentKey(m: MessageRecord): Uint8Array[] {
  const headers = m.headers
    .map(([name, value]) => `${name.toLowerCase()}:${value}`)
    .sort()
    .join("\n");
  return [new TextEncoder().encode(`content\n${target(m)}\n${headers}\n`), m.body];
}

function sha256(parts: Array<string | Uint8Array>): string {
  const hasher = new Bun.CryptoHasher("sha256");
  for (const part of parts) hasher.update(part);
  return hasher.digest("hex");
}

/** The deduplication key of each message of a publish, or null when the publish asks for none. */
export function dedupKeysOf(messages: MessageRecord[], options: PublishOptions): string[] | null {
  if (!options.deduplicationId && !options.contentBasedDeduplication) return null;
  return messages.map((m) =>
    options.deduplicationId ? sha256([`id\n${options.deduplicationId}\n${target(m)}`]) : sha256(contentKey(m)),
  );
}

/**
 * The publish seam (runs inside the publishing write `tx`): a message whose key was seen within
 * the window is answered with the first message's id; otherwise its key is remembered.
 */
export function createDeduplicator(store: DedupStorage): Deduplicator {
  let prunedAt = -Infinity;
  return async (tx, messages, options, nowMs) => {
    const keys = dedupKeysOf(messages, options);
    if (!keys) return messages.map(() => undefined);
    if (nowMs - prunedAt >= PRUNE_EVERY_MS) {
      await store.prune(tx, nowMs);
      prunedAt = nowMs;
    }
    const originals: Array<string | undefined> = [];
    for (let i = 0; i < messages.length; i++) {
      const m = messages[i]!;
      const key = keys[i]!;
      const original = await store.find(tx, m.accountId, key, nowMs, m.id);
      if (original) {
        originals.push(original);
        continue;
      }
      await store.remember(tx, m.accountId, key, m.id, nowMs + DEDUP_WINDOW_MS);
      originals.push(undefined);
    }
    return originals;
  };
}
