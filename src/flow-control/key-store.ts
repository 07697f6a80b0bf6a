import type { Database } from "bun:sqlite";
import type { FlowPins } from "../model/flow-control.ts";

/** What the API set for one key. */
export interface KeySettings {
  paused: boolean;
  pins: FlowPins;
  /** When resetRate or pin last started a new rate window (Unix ms). */
  windowStart?: number;
}

interface KeyRow {
  account_id: string;
  key: string;
  paused: number;
  pinned_parallelism: number | null;
  pinned_rate: number | null;
  pinned_period_ms: number | null;
  window_start: number | null;
}

const settingsOf = (r: KeyRow): KeySettings => ({
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

/** Flow-control keys' settings and recent delivery starts, so both survive a restart. */
export class FlowKeyStore {
  private readonly upsertStmt;
  private readonly addStartStmt;
  private readonly pruneStartsStmt;
  private readonly clearStartsStmt;

  constructor(private readonly db: Database) {
    this.upsertStmt = db.prepare(
      `INSERT INTO flow_keys (account_id, key, paused, pinned_parallelism, pinned_rate, pinned_period_ms, window_start)
       VALUES ($account_id, $key, $paused, $pinned_parallelism, $pinned_rate, $pinned_period_ms, $window_start)
       ON CONFLICT (account_id, key) DO UPDATE SET paused = excluded.paused, pinned_parallelism = excluded.pinned_parallelism,
         pinned_rate = excluded.pinned_rate, pinned_period_ms = excluded.pinned_period_ms, window_start = excluded.window_start`,
    );
    this.addStartStmt = db.prepare("INSERT INTO flow_rate_starts (account_id, key, started_at, counts_until) VALUES (?, ?, ?, ?)");
    this.pruneStartsStmt = db.prepare("DELETE FROM flow_rate_starts WHERE account_id = ? AND key = ? AND counts_until <= ?");
    this.clearStartsStmt = db.prepare("DELETE FROM flow_rate_starts WHERE account_id = ? AND key = ?");
  }

  all(): Array<{ accountId: string; key: string; settings: KeySettings }> {
    return this.db
      .query<KeyRow, []>("SELECT * FROM flow_keys")
      .all()
      .map((r) => ({ accountId: r.account_id, key: r.key, settings: settingsOf(r) }));
  }

  save(accountId: string, key: string, s: KeySettings): void {
    this.upsertStmt.run(keyRowOf(accountId, key, s));
  }

  /** A delivery of a rate-limited key started at `startedAt`; it counts until `countsUntil`. */
  addStart(accountId: string, key: string, startedAt: number, countsUntil: number, nowMs: number): void {
    this.pruneStartsStmt.run(accountId, key, nowMs);
    this.addStartStmt.run(accountId, key, startedAt, countsUntil);
  }

  clearStarts(accountId: string, key: string): void {
    this.clearStartsStmt.run(accountId, key);
  }

  /** Starts still counting at `nowMs`, per key, oldest first. */
  liveStarts(nowMs: number): Array<{ accountId: string; key: string; starts: number[] }> {
    const byKey = new Map<string, { accountId: string; key: string; starts: number[] }>();
    const rows = this.db
      .query<{ account_id: string; key: string; started_at: number }, [number]>(
        "SELECT account_id, key, started_at FROM flow_rate_starts WHERE counts_until > ? ORDER BY account_id, key, started_at",
      )
      .all(nowMs);
    for (const r of rows) {
      const id = `${r.account_id}/${r.key}`;
      const entry = byKey.get(id) ?? byKey.set(id, { accountId: r.account_id, key: r.key, starts: [] }).get(id)!;
      entry.starts.push(r.started_at);
    }
    return [...byKey.values()];
  }

  deleteAccount(accountId: string): void {
    this.db.query("DELETE FROM flow_keys WHERE account_id = ?").run(accountId);
    this.db.query("DELETE FROM flow_rate_starts WHERE account_id = ?").run(accountId);
  }
}

/** What the domain uses of the store (every engine provides it). */
export type FlowKeyStorage = Pick<FlowKeyStore, keyof FlowKeyStore>;
