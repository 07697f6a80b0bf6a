import { Type } from "@sinclair/typebox";
import { FlowControlJson } from "../model/columns.ts";
import type { FlowPins } from "../model/flow-control.ts";
import type { FlowControl } from "../model/message.ts";
import { jsonColumn } from "../store/json-column.ts";

/** The flow-control settings a message carries in its `extra` column. */
export const readFlow = jsonColumn("messages.extra", Type.Object({ flow: Type.Optional(FlowControlJson) }));

/** Flow control's view of the messages, as every engine keeps it. Counts and keys are read outside writes. */
export interface FlowStorage {
  /** Sets a claimed message aside (HELD: not dispatchable until released). */
  hold(id: string): void;
  /**
   * Makes the key's `count` oldest held messages due (as of their creation, so that they come
   * before the key's newer messages); returns how many (engines that release after the write may
   * answer an estimate).
   */
  releaseHeld(accountId: string, key: string, count: number, nowMs: number): number;
  /**
   * How many held messages of the key this tick released where its claim cannot see them yet (an
   * engine that releases after the tick's writes; at most an estimate). Until the next claim they
   * are due but not claimable: the gate keeps their room for them.
   */
  unseenReleases(accountId: string, key: string): number;
  /** At start: every held message is due again; returns how many. */
  releaseAll(nowMs: number): number;
  heldCount(accountId: string, key: string): number | Promise<number>;
  keys(accountId: string): string[] | Promise<string[]>;
  latestLimits(accountId: string, key: string): FlowControl | undefined | Promise<FlowControl | undefined>;
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

/** The row of one key's settings (every engine stores the same). */
export function keyRowOf(accountId: string, key: string, s: KeySettings) {
  return {
    account_id: accountId,
    key,
    paused: s.paused ? 1 : 0,
    pinned_parallelism: s.pins.parallelism ?? null,
    pinned_rate: s.pins.rate ?? null,
    pinned_period_ms: s.pins.periodMs ?? null,
    window_start: s.windowStart ?? null,
  };
}

/** Flow-control keys' settings (pause, pins) and recent delivery starts, as every engine keeps them. */
export interface FlowKeyStorage {
  all(): Array<{ accountId: string; key: string; settings: KeySettings }>;
  save(accountId: string, key: string, s: KeySettings): void;
  /** A delivery of a rate-limited key started at `startedAt`; it counts until `countsUntil`. */
  addStart(accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number): void;
  clearStarts(accountId: string, key: string): void;
  /** Starts still counting at `nowMs`, per key, oldest first. */
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }>;
  deleteAccount(accountId: string): void;
}
