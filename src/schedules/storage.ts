import type { Placeholder, SqlValue } from "../store/patch.ts";
import type { WriteTx } from "../store/transactor.ts";

export type ScheduleRow = {
  account_id: string;
  id: string;
  revision: number;
  created_at: number;
  cron: string;
  destination_kind: "url" | "group";
  destination: string;
  headers: string;
  query: string;
  body: Uint8Array;
  caller_ip: string | null;
  settings: string;
  paused: number;
  last_schedule_time: number | null;
  next_schedule_time: number | null;
  last_states: string;
};

export type ScheduleMessageState = "IN_PROGRESS" | "SUCCESS" | "FAIL";

/**
 * Schedules as every engine keeps them: `get` is read inside and outside writes, `all`, `list` and
 * `read`/`readList` (the views' reads) outside; the rest runs inside writes.
 */
export interface ScheduleStorage {
  get(tx: WriteTx | null, accountId: string, id: string): Promise<ScheduleRow | undefined>;
  list(accountId: string): Promise<ScheduleRow[]>;
  all(): Promise<ScheduleRow[]>;
  count(tx: WriteTx, accountId: string): Promise<number>;
  read(accountId: string, id: string): Promise<ScheduleRow | undefined>;
  readList(accountId: string): Promise<ScheduleRow[]>;
  /**
   * Stores the schedule (a new one, or a replacement of the one with its id: its revision then
   * follows the stored one's, whatever node replaced it last); returns it as stored.
   */
  upsert(tx: WriteTx, row: ScheduleRow): Promise<ScheduleRow>;
  delete(tx: WriteTx, accountId: string, id: string): Promise<boolean>;
  setPaused(tx: WriteTx, accountId: string, id: string, paused: boolean): Promise<boolean>;
  setNext(tx: WriteTx, accountId: string, id: string, revision: number, next: number | null): Promise<void>;
  recordTrigger(
    tx: WriteTx,
    accountId: string,
    id: string,
    revision: number,
    last: number,
    next: number | null,
    states: string,
  ): Promise<void>;
  setMessageState(
    tx: WriteTx,
    accountId: string,
    scheduleId: string,
    messageId: string,
    state: ScheduleMessageState,
  ): Promise<void>;
  deleteAccount(tx: WriteTx, accountId: string): Promise<void>;
  /** Inside the trigger's write: this process fires the slot. */
  takeTrigger(tx: WriteTx, accountId: string, id: string, revision: number, plannedAt: number): Promise<boolean>;
}

const SCHEDULE_COLUMNS: ReadonlyArray<keyof ScheduleRow> = [
  "account_id", "id", "revision", "created_at", "cron", "destination_kind", "destination", "headers", "query", "body",
  "caller_ip", "settings", "paused", "last_schedule_time", "next_schedule_time", "last_states",
];

/**
 * `ScheduleStorage.upsert` in SQL, the same on every engine: a replacement takes every column
 * given but the revision, which is the stored one's plus one.
 */
export function scheduleUpsertSql(p: Placeholder): string {
  const replaced = SCHEDULE_COLUMNS.filter((c) => c !== "account_id" && c !== "id" && c !== "revision");
  return `INSERT INTO schedules (${SCHEDULE_COLUMNS.join(", ")}) VALUES (${SCHEDULE_COLUMNS.map((_, i) => p(i + 1)).join(", ")})
    ON CONFLICT (account_id, id) DO UPDATE SET revision = schedules.revision + 1,
      ${replaced.map((c) => `${c} = excluded.${c}`).join(", ")}
    RETURNING *`;
}

/** The parameters of `scheduleUpsertSql`. */
export const scheduleUpsertParams = (row: ScheduleRow): SqlValue[] => SCHEDULE_COLUMNS.map((c) => row[c] ?? null);
