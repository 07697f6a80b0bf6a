import { Type } from "@sinclair/typebox";
import { FlowControlJson } from "../model/columns.ts";
import type { FlowPins } from "../model/flow-control.ts";
import type { FlowControl } from "../model/message.ts";
import { jsonColumn } from "../store/json-column.ts";
import { given, upsertOnly, type Placeholder, type SqlStatement } from "../store/patch.ts";
import type { WriteTx } from "../store/transactor.ts";

/** The flow-control settings a message carries in its `extra` column. */
export const readFlow = jsonColumn("messages.extra", Type.Object({ flow: Type.Optional(FlowControlJson) }));

/** Flow control's view of the messages, as every engine keeps it. Counts and keys are read outside writes. */
export interface FlowStorage {
  /** Sets a claimed message aside (HELD: not dispatchable until released). */
  hold(tx: WriteTx, id: string): Promise<void>;
  /**
   * Makes the key's `count` oldest held messages due (as of their creation, so that they come
   * before the key's newer messages); returns how many (engines that release after the write may
   * answer an estimate).
   */
  releaseHeld(tx: WriteTx, accountId: string, key: string, count: number, nowMs: number): Promise<number>;
  /**
   * How many held messages of the key this tick released where its claim cannot see them yet (an
   * engine that releases after the tick's writes; at most an estimate). Until the next claim they
   * are due but not claimable: the gate keeps their room for them.
   */
  unseenReleases(tx: WriteTx, accountId: string, key: string): Promise<number>;
  /**
   * A message claimed in this write whose key has an older message held where the write cannot see
   * its release (an engine with several writers: another transaction may be releasing it): it must
   * wait too, or it would pass that one.
   */
  behindHeld(tx: WriteTx, messageId: string): Promise<boolean>;
  /** At start: every held message is due again; returns how many. */
  releaseAll(tx: WriteTx, nowMs: number): Promise<number>;
  heldCount(accountId: string, key: string): Promise<number>;
  keys(accountId: string): Promise<string[]>;
  latestLimits(accountId: string, key: string): Promise<FlowControl | undefined>;
}

/** What the API set for one key. */
export interface KeySettings {
  paused: boolean;
  pins: FlowPins;
  /** When resetRate or pin last started a new rate window (Unix ms). */
  windowStart?: number;
}

/** A key's settings as stored. */
export interface FlowKeyRow {
  account_id: string;
  key: string;
  paused: number;
  pinned_parallelism: number | null;
  pinned_rate: number | null;
  pinned_period_ms: number | null;
  window_start: number | null;
}

/** A stored row as the key's settings (every engine reads the same). */
export const keySettingsOf = (r: FlowKeyRow): KeySettings => ({
  paused: r.paused === 1,
  pins: {
    parallelism: r.pinned_parallelism ?? undefined,
    rate: r.pinned_rate ?? undefined,
    periodMs: r.pinned_period_ms ?? undefined,
  },
  windowStart: r.window_start ?? undefined,
});

/**
 * What a request changes of a key's settings: a field left out keeps its stored value, a pin set
 * to null is removed.
 */
export interface KeySettingsChange {
  paused?: boolean;
  parallelism?: number | null;
  rate?: number | null;
  periodMs?: number | null;
  /** Unix ms: a new rate window begins. */
  windowStart?: number;
}

/**
 * `FlowKeyStorage.change` in SQL, the same on every engine: a key without stored settings gets
 * them (what the change leaves out: not paused, no pins), a key with some gets only what changes.
 */
export function keySettingsChange(accountId: string, key: string, change: KeySettingsChange, p: Placeholder): SqlStatement {
  const set = given({
    paused: change.paused === undefined ? undefined : change.paused ? 1 : 0,
    pinned_parallelism: change.parallelism,
    pinned_rate: change.rate,
    pinned_period_ms: change.periodMs,
    window_start: change.windowStart,
  });
  const created = { paused: 0, pinned_parallelism: null, pinned_rate: null, pinned_period_ms: null, window_start: null, ...set };
  return upsertOnly("flow_keys", { account_id: accountId, key }, created, set, p);
}

/**
 * Flow-control keys' settings (pause, pins) and recent delivery starts, as every engine keeps them.
 * `all` and `liveStarts` are read outside writes (`liveStarts` at once: a new delivery worker is told
 * them before its first job); the rest runs inside writes.
 */
export interface FlowKeyStorage {
  all(): Promise<Array<{ accountId: string; key: string; settings: KeySettings }>>;
  /** Changes only what `change` gives of the key's stored settings (see keySettingsChange); returns them as stored. */
  change(tx: WriteTx, accountId: string, key: string, change: KeySettingsChange): Promise<KeySettings>;
  /** A delivery of a rate-limited key started at `startedAt`; it counts until `countsUntil`. */
  addStart(
    tx: WriteTx,
    accountId: string,
    key: string,
    startedAt: number,
    countsUntil: number,
    nowMs: number,
  ): Promise<void>;
  clearStarts(tx: WriteTx, accountId: string, key: string): Promise<void>;
  /** Starts still counting at `nowMs`, per key, oldest first. */
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
}
