import type { Migration } from "../store/migration.ts";

export const scheduleMigrations: Migration[] = [
  {
    id: "schedules/001-create",
    sql: `CREATE TABLE schedules (
      account_id TEXT NOT NULL,
      id TEXT NOT NULL,
      -- bumped when the schedule is replaced, so a trigger of the old definition is dropped
      revision INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      cron TEXT NOT NULL,
      destination_kind TEXT NOT NULL,
      -- the URL or the URL Group name
      destination TEXT NOT NULL,
      -- the creating request's headers and configuration query, replayed as a publish at every trigger
      headers TEXT NOT NULL,
      query TEXT NOT NULL,
      body BLOB NOT NULL,
      caller_ip TEXT,
      -- the parsed settings, for the Schedule view
      settings TEXT NOT NULL,
      paused INTEGER NOT NULL DEFAULT 0,
      last_schedule_time INTEGER,
      next_schedule_time INTEGER,
      -- message id -> IN_PROGRESS | SUCCESS | FAIL, for the messages of the last trigger
      last_states TEXT NOT NULL DEFAULT '{}',
      PRIMARY KEY (account_id, id)
    ) WITHOUT ROWID;`,
  },
];
