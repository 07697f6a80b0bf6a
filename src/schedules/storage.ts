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
  upsert(row: ScheduleRow): void;
  delete(accountId: string, id: string): boolean;
  setPaused(accountId: string, id: string, paused: boolean): boolean;
  setNext(accountId: string, id: string, revision: number, next: number | null): void;
  recordTrigger(accountId: string, id: string, revision: number, last: number, next: number | null, states: string): void;
  setMessageState(accountId: string, scheduleId: string, messageId: string, state: ScheduleMessageState): void;
  deleteAccount(accountId: string): void;
  /** Inside the trigger's write: this process fires the slot. */
  takeTrigger(accountId: string, id: string, revision: number, plannedAt: number): boolean;
}
