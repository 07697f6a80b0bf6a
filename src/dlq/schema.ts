import type { Migration } from "../store/migration.ts";

export const dlqMigrations: Migration[] = [
  {
    id: "dlq/001-create",
    sql: `CREATE TABLE dlq (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      dlq_id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      failed_at INTEGER NOT NULL,
      url TEXT NOT NULL,
      topic_name TEXT,
      queue_name TEXT,
      schedule_id TEXT,
      label TEXT,
      flow_key TEXT,
      caller_ip TEXT,
      response_status INTEGER,
      -- the failed message as it was stored (without its body), to show and to retry it
      message TEXT NOT NULL,
      body BLOB NOT NULL,
      response_headers TEXT,
      response_body BLOB,
      error TEXT
    );
    CREATE INDEX dlq_account ON dlq (account_id, seq);
    CREATE INDEX dlq_failed_at ON dlq (failed_at);`,
  },
  {
    id: "dlq/002-workflow-run",
    // The workflow run a dead letter failed (its step message), for source=workflow and workflowRunId.
    sql: `ALTER TABLE dlq ADD COLUMN workflow_run_id TEXT;
    CREATE INDEX dlq_workflow_run ON dlq (account_id, workflow_run_id) WHERE workflow_run_id IS NOT NULL;`,
  },
  {
    id: "dlq/003-workflow-filters",
    // A failed run's creation time and its failure function's state, for the workflow DLQ's filters.
    sql: `ALTER TABLE dlq ADD COLUMN workflow_created_at INTEGER;
    ALTER TABLE dlq ADD COLUMN failure_function_state TEXT;`,
  },
];
