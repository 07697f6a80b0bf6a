import type { Placeholder, SqlStatement } from "../store/patch.ts";
import type { WriteTx } from "../store/transactor.ts";

/** An account as stored (every engine stores the same columns). */
export type AccountRow = {
  id: string;
  email: string;
  api_key: string;
  token: string;
  plan: string;
  current_signing_key: string;
  next_signing_key: string;
  configured_keys: string;
};

/** The accounts and their keys, as every engine keeps them (read outside writes, written inside writes). */
export interface AccountStorage {
  all(): Promise<AccountRow[]>;
  /**
   * Stores the account as configured; keys already stored stay while the configured keys are the
   * same (a rotation survives a restart, and two nodes starting at once keep one pair). Returns
   * the row as stored.
   */
  upsert(tx: WriteTx, row: AccountRow): Promise<AccountRow>;
  /** Next becomes current and `next` the new next, from the keys stored now; undefined: no such account. */
  rotateKeys(tx: WriteTx, id: string, next: string): Promise<AccountRow | undefined>;
}

const KEPT_WHILE_CONFIGURED = (column: string) =>
  `${column} = CASE WHEN accounts.configured_keys = excluded.configured_keys THEN accounts.${column} ELSE excluded.${column} END`;

/** `AccountStorage.upsert` in SQL, the same on every engine. */
export function accountUpsert(row: AccountRow, p: Placeholder): SqlStatement {
  const columns = Object.keys(row) as Array<keyof AccountRow>;
  return {
    text: `INSERT INTO accounts (${columns.join(", ")}) VALUES (${columns.map((_, i) => p(i + 1)).join(", ")})
      ON CONFLICT (id) DO UPDATE SET email = excluded.email, api_key = excluded.api_key, token = excluded.token,
        plan = excluded.plan, ${KEPT_WHILE_CONFIGURED("current_signing_key")}, ${KEPT_WHILE_CONFIGURED("next_signing_key")},
        configured_keys = excluded.configured_keys
      RETURNING *`,
    params: columns.map((c) => row[c]),
  };
}

/** `AccountStorage.rotateKeys` in SQL, the same on every engine: the rotation reads the stored keys. */
export const accountRotation = (id: string, next: string, p: Placeholder): SqlStatement => ({
  text: `UPDATE accounts SET current_signing_key = next_signing_key, next_signing_key = ${p(1)} WHERE id = ${p(2)} RETURNING *`,
  params: [next, id],
});

/**
 * The plan's request counts, as every node sharing the storage sees them: the burst limit's
 * requests of one second, the daily limit's messages of one UTC day.
 */
export interface RequestCountStorage {
  /**
   * Outside writes: counts one request of the account in `second` and answers how many that second
   * holds now, this one and every node's included.
   */
  countRequest(accountId: string, second: number): Promise<number>;
  /**
   * Inside a write: adds `n` messages to the account's UTC day `day` (a day gone starts anew) and
   * answers how many the day held before them, every node's included. Rolled back with the write.
   */
  addMessages(tx: WriteTx, accountId: string, day: number, n: number): Promise<number>;
}

/** What a request window counts: requests of a second (burst), messages of a UTC day (daily). */
export type RequestWindowKind = "requests" | "messages";

/**
 * Adds `n` to the account's count of `kind` within `window` (a window gone starts anew), in SQL
 * the same on every engine; returns the count after the addition (`count`).
 */
export const addToWindow = (accountId: string, kind: RequestWindowKind, window: number, n: number, p: Placeholder): SqlStatement => ({
  text: `INSERT INTO request_windows (account_id, kind, window_start, count) VALUES (${p(1)}, ${p(4)}, ${p(2)}, ${p(3)})
    ON CONFLICT (account_id, kind) DO UPDATE SET
      count = CASE WHEN request_windows.window_start = excluded.window_start THEN request_windows.count + excluded.count
        ELSE excluded.count END,
      window_start = excluded.window_start
    RETURNING count`,
  params: [accountId, window, n, kind],
});
