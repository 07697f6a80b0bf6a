import type { FlowSteering } from "../model/flow-control.ts";
import type { MessageListener } from "../model/events.ts";
import type { DeliveryOutcome } from "../model/outcome.ts";
import type { FlowControl, MessageRecord } from "../model/message.ts";
import type { FlowKeyStorage, KeySettings, KeySettingsChange } from "./storage.ts";
import { laneKey } from "./lane-key.ts";
import type { WriteTx } from "../store/transactor.ts";

/** A key whose settings another process changed (see FlowKeySettings.reload). */
export interface KeyChange {
  accountId: string;
  key: string;
  lane: string;
  steering: FlowSteering;
  /** A new rate window began. */
  resetWindow: boolean;
}

/** A start counts a little past its period in the workers (see FlowGate.window): keep it as long. */
const WINDOW_GUARD_MS = 50;

/**
 * The main thread's copy of what the API set for each flow-control key (pause, pins, the start of
 * the current rate window), loaded from SQLite at start and written through on every change.
 */
export class FlowKeySettings {
  private readonly byLane = new Map<string, KeySettings>();

  private constructor(private readonly store: FlowKeyStorage) {}

  /** The settings as stored now (at start). */
  static async load(store: FlowKeyStorage): Promise<FlowKeySettings> {
    const loaded = new FlowKeySettings(store);
    for (const { accountId, key, settings } of await store.all()) loaded.byLane.set(laneKey(accountId, key), settings);
    return loaded;
  }

  get(accountId: string, key: string): KeySettings | undefined {
    return this.byLane.get(laneKey(accountId, key));
  }

  isPaused(accountId: string, key: string): boolean {
    return this.get(accountId, key)?.paused ?? false;
  }

  /** The limits a delivery of this key uses: what its message carries, overridden by the key's pins. */
  effective(accountId: string, flow: FlowControl): FlowControl {
    const pins = this.get(accountId, flow.key)?.pins;
    if (!pins) return flow;
    return {
      key: flow.key,
      parallelism: pins.parallelism ?? flow.parallelism,
      rate: pins.rate ?? flow.rate,
      periodMs: pins.periodMs ?? flow.periodMs,
    };
  }

  /** Keys of the account the API has named (listed even without messages). */
  keysOf(accountId: string): string[] {
    const prefix = laneKey(accountId, "");
    return [...this.byLane.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  /**
   * Changes what `change` gives of a key's settings (another node's change of other fields
   * stays); runs inside the write that makes the change. Returns the settings as stored now.
   */
  async change(tx: WriteTx, accountId: string, key: string, change: KeySettingsChange): Promise<KeySettings> {
    const settings = await this.store.change(tx, accountId, key, change);
    this.byLane.set(laneKey(accountId, key), settings);
    return settings;
  }

  /** Inside the write that deletes the account's settings. */
  async forgetAccount(tx: WriteTx, accountId: string): Promise<void> {
    const prefix = laneKey(accountId, "");
    for (const lane of [...this.byLane.keys()]) if (lane.startsWith(prefix)) this.byLane.delete(lane);
    await this.store.deleteAccount(tx, accountId);
  }

  /**
   * Another process sharing the storage changed keys' settings: takes the stored ones and answers
   * the lanes whose settings changed (their workers must be told), and whether a new rate window began.
   */
  async reload(): Promise<KeyChange[]> {
    const changed: KeyChange[] = [];
    const stored = new Map((await this.store.all()).map((row) => [laneKey(row.accountId, row.key), row]));
    for (const [lane, { accountId, key, settings }] of stored) {
      const before = this.byLane.get(lane);
      if (JSON.stringify(before) === JSON.stringify(settings)) continue;
      this.byLane.set(lane, settings);
      const resetWindow = settings.windowStart !== before?.windowStart;
      changed.push({ accountId, key, lane, steering: { paused: settings.paused, pins: settings.pins }, resetWindow });
    }
    for (const lane of [...this.byLane.keys()]) {
      if (stored.has(lane)) continue;
      this.byLane.delete(lane);
      // Keys hold no "/" (the flow service checks them): the account id is what comes before the last one.
      const at = lane.lastIndexOf("/");
      changed.push({ accountId: lane.slice(0, at), key: lane.slice(at + 1), lane, steering: { paused: false, pins: {} }, resetWindow: false });
    }
    return changed;
  }

  /** Every key's settings, as the delivery workers take them. */
  all(): Array<{ lane: string; steering: FlowSteering }> {
    return [...this.byLane].map(([lane, s]) => ({ lane, steering: { paused: s.paused, pins: s.pins } }));
  }
}

/**
 * Keeps each rate-limited key's delivery starts in SQLite while they count, so the rate window
 * survives a restart: an attempt's start comes back with its outcome, in the write that records it.
 * A start from before the key's last resetRate or pin no longer counts.
 */
export function rateWindowListener(settings: FlowKeySettings, store: FlowKeyStorage): MessageListener {
  type Ended = { message: MessageRecord; outcome: DeliveryOutcome; atMs: number };
  // Only a start that counts costs a promise: most messages have no rate.
  const record = ({ message: m, outcome, atMs }: Ended, tx: WriteTx): Promise<void> | undefined => {
    if (!m.flow) return;
    const { rate, periodMs } = settings.effective(m.accountId, m.flow);
    if (rate === undefined) return;
    const windowStart = settings.get(m.accountId, m.flow.key)?.windowStart;
    if (windowStart !== undefined && outcome.startedAt < windowStart) return;
    const countsUntil = outcome.startedAt + periodMs + WINDOW_GUARD_MS;
    return store.addStart(tx, m.accountId, m.flow.key, outcome.startedAt, countsUntil, atMs);
  };
  return { delivered: record, retried: record, failed: record };
}
