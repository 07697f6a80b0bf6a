import type { Migration } from "../store/migration.ts";

export const logMigrations: Migration[] = [
  {
    id: "logs/001-create",
    sql: `CREATE TABLE events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      time INTEGER NOT NULL,
      message_id TEXT NOT NULL,
      state TEXT NOT NULL,
      url TEXT NOT NULL,
      topic_name TEXT,
      queue_name TEXT,
      schedule_id TEXT,
      label TEXT,
      flow_key TEXT,
      -- error, nextDeliveryTime, endpointName, method, maxRetries, header, responseStatus
      data TEXT NOT NULL,
      body BLOB,
      response_body BLOB
    );
    CREATE INDEX events_account ON events (account_id, seq);
    CREATE INDEX events_message ON events (message_id);`,
  },
  {
    // the callerIp filter of the logs (the publisher's address, as on the message and the DLQ entry)
    id: "logs/002-caller-ip",
    sql: "ALTER TABLE events ADD COLUMN caller_ip TEXT",
  },
  {
    // A CREATED entry refers to its message's body stored once (engines/sqlite/bodies.ts) instead of a copy.
    id: "logs/003-shared-body",
    sql: "ALTER TABLE events ADD COLUMN shared_body INTEGER",
  },
];
