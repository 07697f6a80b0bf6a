import type { Migration } from "../store/migration.ts";

export const workflowMigrations: Migration[] = [
  {
    id: "workflows/001-create",
    sql: `CREATE TABLE workflow_runs (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      url TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      state TEXT NOT NULL,
      completed_at INTEGER,
      label TEXT,
      caller_ip TEXT,
      flow_key TEXT,
      dlq_id TEXT,
      -- the route function's return value (JSON text)
      result TEXT,
      -- the trigger's settings, the invoker, the failure function, the awaiting-SDK mark
      data TEXT NOT NULL,
      UNIQUE (account_id, run_id)
    );
    CREATE INDEX workflow_runs_account ON workflow_runs (account_id, seq);
    CREATE INDEX workflow_runs_completed ON workflow_runs (account_id, completed_at) WHERE completed_at IS NOT NULL;

    -- each run's raw step list, in order; position 0 is the initial payload
    CREATE TABLE workflow_steps (
      account_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      message_id TEXT NOT NULL,
      call_type TEXT NOT NULL,
      -- where the message goes (a context.call's third party for toCallback entries)
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      body BLOB NOT NULL,
      created_at INTEGER NOT NULL,
      headers TEXT NOT NULL,
      retries INTEGER NOT NULL,
      retry_delay TEXT,
      PRIMARY KEY (account_id, run_id, position)
    ) WITHOUT ROWID;
    CREATE INDEX workflow_steps_message ON workflow_steps (message_id);

    -- waitForEvent / waitForWebhook steps waiting for their event or their deadline
    CREATE TABLE workflow_waiters (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      event_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      deadline INTEGER NOT NULL,
      data TEXT NOT NULL
    );
    CREATE INDEX workflow_waiters_event ON workflow_waiters (account_id, event_id);
    CREATE INDEX workflow_waiters_run ON workflow_waiters (account_id, run_id);
    CREATE INDEX workflow_waiters_deadline ON workflow_waiters (deadline);

    -- events notified to a run before it waits for them (a later wait of the run consumes them)
    CREATE TABLE workflow_kept_events (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      event_id TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      data BLOB NOT NULL
    );
    CREATE INDEX workflow_kept_events_run ON workflow_kept_events (account_id, run_id, event_id);`,
  },
  {
    id: "workflows/002-unsettled",
    // A run that ended inside a delivery's write still has to cancel what it left behind and tell
    // its invoker; that happens in a write of its own, found again after a crash by this mark.
    sql: `ALTER TABLE workflow_runs ADD COLUMN unsettled INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX workflow_runs_unsettled ON workflow_runs (unsettled) WHERE unsettled = 1;`,
  },
  {
    id: "workflows/003-step-deliveries",
    // What a run's log shows of its messages, kept by the run's listener: how each delivery
    // stands, the errors of its attempts (with the answers' headers), what only the log needs of
    // an entry (the step a call makes, a wait's deadline), and the runs a run invoked.
    sql: `ALTER TABLE workflow_steps ADD COLUMN state TEXT NOT NULL DEFAULT 'DELIVERED';
    ALTER TABLE workflow_steps ADD COLUMN next_delivery_at INTEGER;
    ALTER TABLE workflow_steps ADD COLUMN details TEXT;
    CREATE TABLE workflow_step_errors (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      account_id TEXT NOT NULL,
      run_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      time INTEGER NOT NULL,
      status INTEGER NOT NULL,
      error TEXT NOT NULL,
      body TEXT NOT NULL,
      headers TEXT NOT NULL
    );
    CREATE INDEX workflow_step_errors_run ON workflow_step_errors (account_id, run_id);
    ALTER TABLE workflow_runs ADD COLUMN invoker_run_id TEXT;
    UPDATE workflow_runs SET invoker_run_id = json_extract(data, '$.invoker.workflowRunId');
    CREATE INDEX workflow_runs_invoker ON workflow_runs (account_id, invoker_run_id) WHERE invoker_run_id IS NOT NULL;`,
  },
];
