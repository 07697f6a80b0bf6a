import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { EVENT_STATES } from "../../src/logs/model.ts";

/**
 * The server's own consistency checks over the database: what must hold between the message
 * table, the DLQ and the event log whatever happened before (crashes, bad input, cancels,
 * retries). Each violation is one human-readable line; an empty list means consistent.
 * Read-only: safe on a live database or on a copy after a crash.
 */
export interface ConsistencyOptions {
  /**
   * Whether the running dispatcher has an attempt in flight for a message id. Given only when the
   * server is idle: then every ACTIVE message must have one. Without it (after a stop or a crash)
   * ACTIVE messages are allowed: they are due again at the next start.
   */
  inFlight?: (messageId: string) => boolean;
  /** At most this many lines per check, so a broken database gives a readable report. */
  limit?: number;
}

const LIVE_STATES = ["CREATED", "RETRY", "ACTIVE", "PARKED", "HELD"];
const TERMINAL_EVENTS = ["DELIVERED", "FAILED", "CANCELED"];

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");

type Row = Record<string, unknown>;

/** One check: its query (one text, or one per engine where their SQL differs) and the line a row found means. */
interface Check {
  sql: string | { sqlite: string; postgres: string };
  problem: (r: Row) => string;
}

const CHECKS: Check[] = [
  // Messages: every waiting message can be found by the dispatcher, nothing else can.
  {
    sql: `SELECT id, state FROM messages WHERE state NOT IN (${quoted(LIVE_STATES)})`,
    problem: (r) => `message ${r.id} has unknown state ${r.state}`,
  },
  {
    sql: "SELECT id, state FROM messages WHERE state IN ('CREATED', 'RETRY') AND dispatch_at IS NULL",
    problem: (r) => `pending message ${r.id} (${r.state}) has no dispatch_at: it would never be delivered`,
  },
  {
    sql: "SELECT id, state FROM messages WHERE state IN ('ACTIVE', 'PARKED', 'HELD') AND dispatch_at IS NOT NULL",
    problem: (r) => `message ${r.id} is ${r.state} but also due (dispatch_at set): it could be sent twice at once`,
  },
  {
    sql: "SELECT id, retried, max_retries FROM messages WHERE retried < 0 OR max_retries < 0 OR retried > max_retries",
    problem: (r) => `message ${r.id} has retried ${r.retried} of max ${r.max_retries}`,
  },
  {
    sql: "SELECT id, state FROM messages WHERE (state = 'PARKED' AND queue_name IS NULL) OR (state = 'HELD' AND flow_key IS NULL)",
    problem: (r) => `message ${r.id} is ${r.state} without a ${r.state === "PARKED" ? "queue" : "flow-control key"} to release it`,
  },

  // Queues.
  {
    sql: `SELECT m.account_id, m.queue_name, COUNT(*) AS n FROM messages m
       WHERE m.state = 'PARKED' AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.account_id = m.account_id AND q.name = m.queue_name)
       GROUP BY m.account_id, m.queue_name`,
    problem: (r) => `${r.n} message(s) parked in queue ${r.queue_name} of ${r.account_id}, which does not exist`,
  },
  // FIFO: parked messages wait behind a started one; a running queue with only parked ones is stuck.
  {
    sql: `SELECT m.account_id, m.queue_name, COUNT(*) AS n FROM messages m
       JOIN queues q ON q.account_id = m.account_id AND q.name = m.queue_name AND q.paused = 0
       WHERE m.state = 'PARKED'
         AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.account_id = m.account_id AND o.queue_name = m.queue_name AND o.state != 'PARKED')
       GROUP BY m.account_id, m.queue_name`,
    problem: (r) => `queue ${r.queue_name} of ${r.account_id} is running but its ${r.n} parked message(s) wait behind nothing`,
  },
  {
    sql: `SELECT g.account_id, g.name FROM url_groups g
       WHERE NOT EXISTS (SELECT 1 FROM url_group_endpoints e WHERE e.account_id = g.account_id AND e.group_name = g.name)`,
    problem: (r) => `URL Group ${r.name} of ${r.account_id} has no endpoint (it should have gone with its last one)`,
  },

  // The DLQ: each entry keeps a readable snapshot of the failed message, which no longer waits.
  {
    sql: {
      sqlite: "SELECT dlq_id FROM dlq WHERE body IS NULL OR json_valid(message) = 0",
      postgres: "SELECT dlq_id FROM dlq WHERE body IS NULL OR NOT (message IS JSON)",
    },
    problem: (r) => `DLQ entry ${r.dlq_id} has no stored message snapshot`,
  },
  {
    sql: {
      sqlite: "SELECT dlq_id, message_id FROM dlq WHERE json_valid(message) AND json_extract(message, '$.id') IS NOT message_id",
      postgres: "SELECT dlq_id, message_id FROM dlq WHERE message IS JSON AND (message::jsonb ->> 'id') IS DISTINCT FROM message_id",
    },
    problem: (r) => `DLQ entry ${r.dlq_id} holds a snapshot of another message than ${r.message_id}`,
  },
  {
    sql: "SELECT d.dlq_id, d.message_id FROM dlq d JOIN messages m ON m.id = d.message_id",
    problem: (r) => `message ${r.message_id} is both waiting and in the DLQ (${r.dlq_id})`,
  },
  {
    sql: "SELECT message_id, COUNT(*) AS n FROM dlq GROUP BY message_id HAVING COUNT(*) > 1",
    problem: (r) => `message ${r.message_id} is in the DLQ ${r.n} times`,
  },
  {
    sql: `SELECT d.dlq_id, d.message_id FROM dlq d
     WHERE EXISTS (SELECT 1 FROM events e WHERE e.message_id = d.message_id AND e.state = 'DELIVERED')`,
    problem: (r) => `message ${r.message_id} is in the DLQ (${r.dlq_id}) although it was delivered`,
  },

  // The event log: known states, at most one ending per message, no ending for a waiting message.
  {
    sql: `SELECT seq, state FROM events WHERE state NOT IN (${quoted(EVENT_STATES)})`,
    problem: (r) => `event ${r.seq} has unknown state ${r.state}`,
  },
  {
    sql: {
      sqlite: `SELECT message_id, GROUP_CONCAT(state) AS states FROM events
     WHERE state IN (${quoted(TERMINAL_EVENTS)}) GROUP BY message_id HAVING COUNT(*) > 1`,
      postgres: `SELECT message_id, string_agg(state, ',') AS states FROM events
     WHERE state IN (${quoted(TERMINAL_EVENTS)}) GROUP BY message_id HAVING COUNT(*) > 1`,
    },
    problem: (r) => `message ${r.message_id} ended more than once: ${r.states}`,
  },
  {
    sql: `SELECT m.id, e.state FROM messages m JOIN events e ON e.message_id = m.id
     WHERE e.state IN (${quoted(TERMINAL_EVENTS)})`,
    problem: (r) => `message ${r.id} is still waiting although the log says ${r.state}`,
  },

  // Bodies stored once (src/engines/sqlite/bodies.ts): every reference points to a body, every body has a holder.
  ...["messages", "events"].map((table) => ({
    sql: `SELECT ${table === "messages" ? "id" : "seq"} AS id, shared_body FROM ${table}
       WHERE shared_body IS NOT NULL AND shared_body NOT IN (SELECT body_id FROM message_bodies)`,
    problem: (r: Row) => `${table} row ${r.id} refers to body ${r.shared_body}, which is gone`,
  })),
  {
    sql: `SELECT body_id FROM message_bodies
     EXCEPT SELECT shared_body FROM messages EXCEPT SELECT shared_body FROM events`,
    problem: (r) => `body ${r.body_id} is held by no message and no log entry (a leak)`,
  },
  {
    sql: `SELECT id FROM messages WHERE shared_body IS NOT NULL AND body_alone = 0
       AND shared_body NOT IN (SELECT shared_body FROM events WHERE shared_body IS NOT NULL)`,
    problem: (r) => `message ${r.id} counts on a log entry to keep its body, but none holds it (it would leak)`,
  },

  // Ownership: every row belongs to a configured account.
  ...["messages", "dlq", "events"].map((table) => ({
    sql: `SELECT account_id, COUNT(*) AS n FROM ${table} WHERE account_id NOT IN (SELECT id FROM accounts) GROUP BY account_id`,
    problem: (r: Row) => `${r.n} row(s) of ${table} belong to unknown account ${r.account_id}`,
  })),
];

const ACTIVE = "SELECT id FROM messages WHERE state = 'ACTIVE'";
const HELD_BY_KEY = "SELECT account_id, flow_key, COUNT(*) AS n FROM messages WHERE state = 'HELD' GROUP BY account_id, flow_key";
const ACTIVE_OF_KEY = "SELECT id FROM messages WHERE account_id = $1 AND flow_key = $2 AND state = 'ACTIVE'";

type Query = [sql: string, params: string[]];

/** The checks over one engine's database, as queries: each yields a statement and is given its rows back. */
function* checks(engine: "sqlite" | "postgres", opts: ConsistencyOptions): Generator<Query, string[], Row[]> {
  const limit = opts.limit ?? 20;
  const problems: string[] = [];
  for (const check of CHECKS) {
    const sql = typeof check.sql === "string" ? check.sql : check.sql[engine];
    for (const r of yield [`${sql} LIMIT ${limit}`, []]) problems.push(check.problem(r));
  }
  if (opts.inFlight) {
    for (const r of yield [ACTIVE, []]) {
      if (!opts.inFlight(r.id as string)) problems.push(`message ${r.id} is ACTIVE without an attempt in flight: it is stuck`);
      if (problems.length > limit * 8) break;
    }
    // A held message is released when an attempt of its key ends: with none in flight it waits forever.
    for (const lane of yield [HELD_BY_KEY, []]) {
      const active = yield [ACTIVE_OF_KEY, [lane.account_id as string, lane.flow_key as string]];
      if (!active.some((m) => opts.inFlight!(m.id as string)))
        problems.push(`${lane.n} message(s) HELD for flow-control key ${lane.flow_key} with no attempt of that key in flight: stuck`);
    }
  }
  return problems;
}

/** The checks over a SQLite database (a live server's, or a copy after a crash). */
export function checkConsistency(db: Database, opts: ConsistencyOptions = {}): string[] {
  const run = checks("sqlite", opts);
  let step = run.next();
  while (!step.done) {
    const [sql, params] = step.value;
    step = run.next(db.query<Row, string[]>(sql.replace(/\$\d/g, "?")).all(...params));
  }
  const problems = step.value;
  for (const r of db.query<{ table: string; parent: string }, []>("PRAGMA foreign_key_check").all().slice(0, opts.limit ?? 20))
    problems.push(`foreign key of ${r.table} points to a missing row of ${r.parent}`);
  return problems;
}

/** The same checks over a PostgreSQL database. */
export async function checkPostgresConsistency(sql: SQL, opts: ConsistencyOptions = {}): Promise<string[]> {
  const run = checks("postgres", opts);
  let step = run.next();
  while (!step.done) {
    const [text, params] = step.value;
    step = run.next((await sql.unsafe(text, params)) as Row[]);
  }
  return step.value;
}
