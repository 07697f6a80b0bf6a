import type { EventRecord } from "../logs/model.ts";
import type { DeliveryStatus } from "./run-log.ts";

const decoder = new TextDecoder();

/**
 * Where a message stands, from its event-log entries (any order): delivered, failed or cancelled
 * once it has such an entry; retrying once an attempt failed; else pending. A message without
 * entries (its log was pruned) counts as delivered: nothing of it is left to wait for.
 */
export function deliveryStatus(events: EventRecord[]): DeliveryStatus {
  if (events.length === 0) return { state: "DELIVERED", errors: [] };
  const sorted = [...events].sort((a, b) => a.time - b.time);
  const errors = sorted
    .filter((e) => e.state === "ERROR")
    .map((e) => ({
      error: e.error ?? "",
      body: e.responseBody ? decoder.decode(e.responseBody) : "",
      headers: {},
      status: e.responseStatus ?? 0,
      time: e.time,
    }));
  const states = new Set(sorted.map((e) => e.state));
  if (states.has("DELIVERED")) return { state: "DELIVERED", errors };
  if (states.has("FAILED")) return { state: "FAILED", errors };
  if (states.has("CANCELED")) return { state: "CANCELED", errors };
  return { state: errors.length > 0 ? "RETRY" : "PENDING", errors };
}
