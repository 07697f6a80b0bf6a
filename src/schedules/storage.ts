import type { Placeholder, SqlValue } from "../store/patch.ts";

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

/** Schedules as every engine keeps them: definitions are read synchronously; `read`/`readList` are the views' reads. */
export interface ScheduleStorage {
  get(accountId: string, id: string): ScheduleRow | undefined;
  list(accountId: string): ScheduleRow[];
  all(): ScheduleRow[];
  count(accountId: string): number;
  read(accountId: string, id: string): ScheduleRow | undefined | Promise<ScheduleRow | undefined>;
  readList(accountId: string): ScheduleRow[] | Promise<ScheduleRow[]>;
  /**
   * Stores the schedule (a new one, or a replacement of the one with its id: its revision then
   * follows the stored one's, whatever node replaced it last); returns it as stored.
   */
  upsert(row: ScheduleRow): ScheduleRow;
  delete(accountId: string, id: string): boolean;
  setPaused(accountId: string, id: string, paused: boolean): boolean;
  setNext(accountId: string, id: string, revision: number, next: number | null): void;
  recordTrigger(accountId: string, id: string, revision: number, last: number, next: number | null, states: string): void;
  setMessageState(accountId: string, scheduleId: string, messageId: string, state: ScheduleMessageState): void;
  deleteAccount(accountId: string): void;
  /** Inside the trigger's write: this process fires the slot. */
  takeTrigger(accountId: string, id: string, revision: number, plannedAt: number): boolean;
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
