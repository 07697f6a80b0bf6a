import type { Wake } from "../core/wake.ts";
import type { FlowControl } from "../model/message.ts";
import type { MessageRecord } from "../model/message.ts";
import type { MessageStore } from "../messages/store.ts";
import { laneKey } from "./lane-key.ts";
import type { FlowStore } from "./store.ts";

/**
 * Most attempts of one key the dispatcher hands to the workers at once. The worker's gate enforces
 * the real limits; this only stops a key with a huge backlog from filling the dispatcher's global
 * in-flight budget, so other keys and plain messages keep flowing.
 */
export function outstandingCap(flow: FlowControl): number {
  return Math.min(512, Math.max(64, flow.parallelism ?? 0));
}

/**
 * The dispatcher's side of flow control (its DispatchGate): counts each key's attempts handed to the
 * workers; a due message over the key's cap is HELD (not dispatchable) and the oldest held message
 * of the key is released each time one of its attempts ends. The counters live in memory: at start
 * every held message is released (`recover`).
 */
export class FlowLanes {
  private readonly outstanding = new Map<string, number>();

  constructor(
    private readonly store: FlowStore,
    private readonly messages: MessageStore,
    private readonly wake: Wake,
  ) {}

  admit(m: MessageRecord): boolean {
    if (!m.flow) return true;
    const lane = laneKey(m.accountId, m.flow.key);
    const n = this.outstanding.get(lane) ?? 0;
    if (n >= outstandingCap(m.flow)) {
      this.store.hold(m.id);
      return false;
    }
    this.outstanding.set(lane, n + 1);
    return true;
  }

  released(m: MessageRecord, nowMs: number): void {
    if (!m.flow) return;
    const lane = laneKey(m.accountId, m.flow.key);
    const n = (this.outstanding.get(lane) ?? 1) - 1;
    if (n > 0) this.outstanding.set(lane, n);
    else this.outstanding.delete(lane);
    const next = this.store.oldestHeld(m.accountId, m.flow.key);
    if (!next) return;
    this.messages.setDispatch(next.id, next.retried > 0 ? "RETRY" : "CREATED", nowMs);
    this.wake();
  }

  /** Held messages of a previous run are due again (their counters were in memory). */
  recover(nowMs: number): number {
    return this.store.releaseAll(nowMs);
  }

  /** Messages of the key the dispatcher holds back (part of the key's wait list). */
  heldCount(accountId: string, key: string): number {
    return this.store.heldCount(accountId, key);
  }
}
