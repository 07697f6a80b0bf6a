import type { Database } from "bun:sqlite";
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

export function checkConsistency(db: Database, opts: ConsistencyOptions = {}): string[] {
  const limit = opts.limit ?? 20;
  const problems: string[] = [];
  const rows = <T>(sql: string, ...params: Array<string | number>): T[] =>
    db.query<T, Array<string | number>>(`${sql} LIMIT ${limit}`).all(...params);
  const hasTable = (name: string) =>
    db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ?").get(name)!.n > 0;

  // Messages: every waiting message can be found by the dispatcher, nothing else can.
  for (const r of rows<{ id: string; state: string }>(
    `SELECT id, state FROM messages WHERE state NOT IN (${quoted(LIVE_STATES)})`,
  ))
    problems.push(`message ${r.id} has unknown state ${r.state}`);
  for (const r of rows<{ id: string; state: string }>(
    "SELECT id, state FROM messages WHERE state IN ('CREATED', 'RETRY') AND dispatch_at IS NULL",
  ))
    problems.push(`pending message ${r.id} (${r.state}) has no dispatch_at: it would never be delivered`);
  for (const r of rows<{ id: string; state: string }>(
    "SELECT id, state FROM messages WHERE state IN ('ACTIVE', 'PARKED', 'HELD') AND dispatch_at IS NOT NULL",
  ))
    problems.push(`message ${r.id} is ${r.state} but also due (dispatch_at set): it could be sent twice at once`);
  for (const r of rows<{ id: string; retried: number; max_retries: number }>(
    "SELECT id, retried, max_retries FROM messages WHERE retried < 0 OR max_retries < 0 OR retried > max_retries",
  ))
    problems.push(`message ${r.id} has retried ${r.retried} of max ${r.max_retries}`);
  for (const r of rows<{ id: string; state: string }>(
    "SELECT id, state FROM messages WHERE (state = 'PARKED' AND queue_name IS NULL) OR (state = 'HELD' AND flow_key IS NULL)",
  ))
    problems.push(`message ${r.id} is ${r.state} without a ${r.state === "PARKED" ? "queue" : "flow-control key"} to release it`);
  if (opts.inFlight) {
    for (const r of db.query<{ id: string }, []>("SELECT id FROM messages WHERE state = 'ACTIVE'").all()) {
      if (!opts.inFlight(r.id)) problems.push(`message ${r.id} is ACTIVE without an attempt in flight: it is stuck`);
      if (problems.length > limit * 8) break;
    }
    // A held message is released when an attempt of its key ends: with none in flight it waits forever.
    const lanes = db
      .query<{ account_id: string; flow_key: string; n: number }, []>(
        "SELECT account_id, flow_key, COUNT(*) AS n FROM messages WHERE state = 'HELD' GROUP BY account_id, flow_key",
      )
      .all();
    for (const lane of lanes) {
      const active = db
        .query<{ id: string }, [string, string]>("SELECT id FROM messages WHERE account_id = ? AND flow_key = ? AND state = 'ACTIVE'")
        .all(lane.account_id, lane.flow_key);
      if (!active.some((m) => opts.inFlight!(m.id)))
        problems.push(`${lane.n} message(s) HELD for flow-control key ${lane.flow_key} with no attempt of that key in flight: stuck`);
    }
  }

  if (hasTable("queues")) {
    for (const r of rows<{ account_id: string; queue_name: string; n: number }>(
      `SELECT m.account_id, m.queue_name, COUNT(*) AS n FROM messages m
       WHERE m.state = 'PARKED' AND NOT EXISTS (SELECT 1 FROM queues q WHERE q.account_id = m.account_id AND q.name = m.queue_name)
       GROUP BY m.account_id, m.queue_name`,
    ))
      problems.push(`${r.n} message(s) parked in queue ${r.queue_name} of ${r.account_id}, which does not exist`);
    // FIFO: parked messages wait behind a started one; a running queue with only parked ones is stuck.
    for (const r of rows<{ account_id: string; queue_name: string; n: number }>(
      `SELECT m.account_id, m.queue_name, COUNT(*) AS n FROM messages m
       JOIN queues q ON q.account_id = m.account_id AND q.name = m.queue_name AND q.paused = 0
       WHERE m.state = 'PARKED'
         AND NOT EXISTS (SELECT 1 FROM messages o WHERE o.account_id = m.account_id AND o.queue_name = m.queue_name AND o.state != 'PARKED')
       GROUP BY m.account_id, m.queue_name`,
    ))
      problems.push(`queue ${r.queue_name} of ${r.account_id} is running but its ${r.n} parked message(s) wait behind nothing`);
  }
  if (hasTable("url_groups")) {
    for (const r of rows<{ account_id: string; name: string }>(
      `SELECT g.account_id, g.name FROM url_groups g
       WHERE NOT EXISTS (SELECT 1 FROM url_group_endpoints e WHERE e.account_id = g.account_id AND e.group_name = g.name)`,
    ))
      problems.push(`URL Group ${r.name} of ${r.account_id} has no endpoint (it should have gone with its last one)`);
  }

  // The DLQ: each entry keeps a readable snapshot of the failed message, which no longer waits.
  for (const r of rows<{ dlq_id: string }>("SELECT dlq_id FROM dlq WHERE body IS NULL OR json_valid(message) = 0"))
    problems.push(`DLQ entry ${r.dlq_id} has no stored message snapshot`);
  for (const r of rows<{ dlq_id: string; message_id: string }>(
    "SELECT dlq_id, message_id FROM dlq WHERE json_valid(message) AND json_extract(message, '$.id') IS NOT message_id",
  ))
    problems.push(`DLQ entry ${r.dlq_id} holds a snapshot of another message than ${r.message_id}`);
  for (const r of rows<{ dlq_id: string; message_id: string }>(
    "SELECT d.dlq_id, d.message_id FROM dlq d JOIN messages m ON m.id = d.message_id",
  ))
    problems.push(`message ${r.message_id} is both waiting and in the DLQ (${r.dlq_id})`);
  for (const r of rows<{ message_id: string; n: number }>(
    "SELECT message_id, COUNT(*) AS n FROM dlq GROUP BY message_id HAVING n > 1",
  ))
    problems.push(`message ${r.message_id} is in the DLQ ${r.n} times`);
  for (const r of rows<{ dlq_id: string; message_id: string }>(
    `SELECT d.dlq_id, d.message_id FROM dlq d
     WHERE EXISTS (SELECT 1 FROM events e WHERE e.message_id = d.message_id AND e.state = 'DELIVERED')`,
  ))
    problems.push(`message ${r.message_id} is in the DLQ (${r.dlq_id}) although it was delivered`);

  // The event log: known states, at most one ending per message, no ending for a waiting message.
  for (const r of rows<{ seq: number; state: string }>(
    `SELECT seq, state FROM events WHERE state NOT IN (${quoted(EVENT_STATES)})`,
  ))
    problems.push(`event ${r.seq} has unknown state ${r.state}`);
  for (const r of rows<{ message_id: string; states: string }>(
    `SELECT message_id, GROUP_CONCAT(state) AS states FROM events
     WHERE state IN (${quoted(TERMINAL_EVENTS)}) GROUP BY message_id HAVING COUNT(*) > 1`,
  ))
    problems.push(`message ${r.message_id} ended more than once: ${r.states}`);
  for (const r of rows<{ id: string; state: string }>(
    `SELECT m.id, e.state FROM messages m JOIN events e ON e.message_id = m.id
     WHERE e.state IN (${quoted(TERMINAL_EVENTS)})`,
  ))
    problems.push(`message ${r.id} is still waiting although the log says ${r.state}`);

  // Bodies stored once (src/store/bodies.ts): every reference points to a body, every body has a holder.
  for (const table of ["messages", "events"]) {
    for (const r of rows<{ id: string; shared_body: number }>(
      `SELECT ${table === "messages" ? "id" : "seq"} AS id, shared_body FROM ${table}
       WHERE shared_body IS NOT NULL AND shared_body NOT IN (SELECT body_id FROM message_bodies)`,
    ))
      problems.push(`${table} row ${r.id} refers to body ${r.shared_body}, which is gone`);
  }
  for (const r of rows<{ body_id: number }>(
    `SELECT body_id FROM message_bodies
     EXCEPT SELECT shared_body FROM messages EXCEPT SELECT shared_body FROM events`,
  ))
    problems.push(`body ${r.body_id} is held by no message and no log entry (a leak)`);
  for (const r of rows<{ id: string }>(
    `SELECT id FROM messages WHERE shared_body IS NOT NULL AND body_alone = 0
       AND shared_body NOT IN (SELECT shared_body FROM events WHERE shared_body IS NOT NULL)`,
  ))
    problems.push(`message ${r.id} counts on a log entry to keep its body, but none holds it (it would leak)`);

  // Ownership: every row belongs to a configured account.
  for (const table of ["messages", "dlq", "events"]) {
    for (const r of rows<{ account_id: string; n: number }>(
      `SELECT account_id, COUNT(*) AS n FROM ${table} WHERE account_id NOT IN (SELECT id FROM accounts) GROUP BY account_id`,
    ))
      problems.push(`${r.n} row(s) of ${table} belong to unknown account ${r.account_id}`);
  }

  for (const r of db.query<{ table: string; parent: string }, []>("PRAGMA foreign_key_check").all().slice(0, limit))
    problems.push(`foreign key of ${r.table} points to a missing row of ${r.parent}`);
  return problems;
}
