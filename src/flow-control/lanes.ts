import type { Wake } from "../core/wake.ts";
import type { FlowControl, MessageRecord } from "../model/message.ts";
import type { WriteTx } from "../store/transactor.ts";
import { laneKey } from "./lane-key.ts";
import type { FlowKeySettings } from "./steering.ts";
import type { FlowStorage } from "./storage.ts";

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
 * workers; a due message over the key's cap, or of a paused key, is HELD (not dispatchable), and the
 * oldest held message of the key is released each time one of its attempts ends (unless the key is
 * paused; resuming releases them). The counters live in memory: at start every held message is
 * released (`recover`), and a paused key's are held again when they come due.
 */
export class FlowLanes {
  private readonly outstanding = new Map<string, number>();

  constructor(
    private readonly store: FlowStorage,
    private readonly settings: FlowKeySettings,
    private readonly wake: Wake,
  ) {}

  /** Runs inside the claim's write: messages without a flow-control key cost no promise of their own. */
  admit(tx: WriteTx, m: MessageRecord): Promise<boolean> {
    return m.flow ? this.admitKeyed(tx, m, m.flow) : ADMITTED;
  }

  private async admitKeyed(tx: WriteTx, m: MessageRecord, flow: FlowControl): Promise<boolean> {
    // Held messages released where this claim cannot see them are older than `m`: their room is
    // theirs, or `m` would pass them.
    const unseen = await this.store.unseenReleases(tx, m.accountId, flow.key);
    const lane = laneKey(m.accountId, flow.key);
    const n = this.outstanding.get(lane) ?? 0;
    const taken = n + unseen;
    const waits = this.settings.isPaused(m.accountId, flow.key) || taken >= this.cap(m.accountId, flow);
    // An older message of the key is held, its release perhaps in flight where this write cannot see it.
    if (waits || (await this.store.behindHeld(tx, m.id))) {
      await this.store.hold(tx, m.id);
      return false;
    }
    this.count(tx, lane, +1);
    return true;
  }

  /** Counts an attempt of the lane in or out with the write `tx`, which undoes it if not stored. */
  private count(tx: WriteTx, lane: string, delta: number): void {
    this.add(lane, delta);
    tx.afterCommit((committed) => {
      if (!committed) this.add(lane, -delta);
    });
  }

  private add(lane: string, delta: number): void {
    const n = (this.outstanding.get(lane) ?? 0) + delta;
    if (n > 0) this.outstanding.set(lane, n);
    else this.outstanding.delete(lane);
  }

  /** Runs inside the write that records the attempt's end (or disowns it). */
  released(tx: WriteTx, m: MessageRecord, nowMs: number): Promise<void> {
    return m.flow ? this.releasedKeyed(tx, m.accountId, m.flow, nowMs) : DONE;
  }

  private async releasedKeyed(tx: WriteTx, accountId: string, flow: FlowControl, nowMs: number): Promise<void> {
    const lane = laneKey(accountId, flow.key);
    if (this.outstanding.has(lane)) this.count(tx, lane, -1);
    if (!this.settings.isPaused(accountId, flow.key)) await this.release(tx, accountId, flow.key, 1, nowMs);
  }

  /**
   * The key was resumed (or its pinned parallelism raised): held messages are due again, as many as
   * the key may have with the workers. Runs inside a write.
   */
  async refill(tx: WriteTx, accountId: string, key: string, flow: FlowControl, nowMs: number): Promise<void> {
    const room = this.cap(accountId, flow) - (this.outstanding.get(laneKey(accountId, key)) ?? 0);
    if (room > 0) await this.release(tx, accountId, key, room, nowMs);
  }

  /** Held messages of a previous run are due again (their counters were in memory). */
  recover(tx: WriteTx, nowMs: number): Promise<number> {
    return this.store.releaseAll(tx, nowMs);
  }

  /** Messages of the key the dispatcher holds back (part of the key's wait list). */
  heldCount(accountId: string, key: string): Promise<number> {
    return this.store.heldCount(accountId, key);
  }

  private cap(accountId: string, flow: FlowControl): number {
    return outstandingCap(this.settings.effective(accountId, flow));
  }

  private async release(tx: WriteTx, accountId: string, key: string, count: number, nowMs: number): Promise<void> {
    if ((await this.store.releaseHeld(tx, accountId, key, count, nowMs)) > 0) this.wake();
  }
}

const ADMITTED: Promise<boolean> = Promise.resolve(true);
const DONE: Promise<void> = Promise.resolve();
