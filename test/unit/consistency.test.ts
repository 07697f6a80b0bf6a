import type { Database } from "bun:sqlite";
import { beforeEach, describe, expect, test } from "bun:test";
import type { DlqEntry } from "../../src/dlq/model.ts";
import { SqliteDlqStore } from "../../src/engines/sqlite/dlq.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";
import { SqliteEventStore } from "../../src/engines/sqlite/events.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { SqliteMessageStore } from "../../src/engines/sqlite/messages.ts";
import { checkConsistency } from "../helpers/consistency.ts";
import { SharedBodies } from "../../src/engines/sqlite/bodies.ts";
import { migrate, openDatabase } from "../../src/engines/sqlite/db.ts";
import { MIGRATIONS } from "../../src/engines/migrations.ts";

/** Each check of test/helpers/consistency.ts finds the violation it is about, and only that. */

let db: Database;
let messages: SqliteMessageStore;
let events: SqliteEventStore;
let dlq: SqliteDlqStore;
let commit: GroupCommit;
let n = 0;

function message(over: Partial<MessageRecord> = {}): MessageRecord {
  return {
    id: `msg_${++n}`,
    accountId: "acct",
    kind: "message",
    state: "CREATED",
    dispatchAt: 1_000,
    notBefore: 1_000,
    createdAt: 1_000,
    retried: 0,
    maxRetries: 3,
    url: "http://127.0.0.1:9/x",
    method: "POST",
    headers: [],
    body: new Uint8Array([1, 2, 3]),
    timeoutMs: 30_000,
    ...over,
  };
}

const event = (messageId: string, state: string) =>
  commit.run((tx) => {
    const url = "http://127.0.0.1:9/x";
    return events.append(tx, { time: 1_000, accountId: "acct", messageId, state: state as never, url });
  });
const insert = (m: MessageRecord) => commit.run((tx) => messages.insert(tx, m));
const deadLetter = (entry: Omit<DlqEntry, "seq">) => commit.run((tx) => dlq.insert(tx, entry));

beforeEach(() => {
  db = openDatabase(null);
  migrate(db, MIGRATIONS);
  db.run(
    "INSERT INTO accounts (id, email, api_key, token, plan, current_signing_key, next_signing_key, configured_keys) VALUES ('acct', 'a@a', 'k', 't', 'payg', 's1', 's2', '[]')",
  );
  const bodies = new SharedBodies(db);
  messages = new SqliteMessageStore(db, bodies);
  events = new SqliteEventStore(db, bodies);
  dlq = new SqliteDlqStore(db);
  commit = new GroupCommit(db);
});

describe("checkConsistency", () => {
  test("a healthy database has no violation", async () => {
    const m = message();
    await insert(m);
    await event(m.id, "CREATED");
    const done = message();
    await event(done.id, "CREATED");
    await event(done.id, "DELIVERED");
    const dead = message();
    await deadLetter({ dlqId: "1-0", failedAt: 1, message: dead, error: "x" });
    await event(dead.id, "FAILED");
    await insert(message({ state: "ACTIVE", dispatchAt: null }));
    expect(checkConsistency(db)).toEqual([]);
  });

  test("a pending message without a due time", async () => {
    await insert(message({ state: "RETRY", dispatchAt: null, retried: 1 }));
    expect(checkConsistency(db)).toEqual([expect.stringContaining("has no dispatch_at")]);
  });

  test("an ACTIVE message no attempt is in flight for, once idle", async () => {
    const m = message({ state: "ACTIVE", dispatchAt: null });
    await insert(m);
    expect(checkConsistency(db, { inFlight: () => false })).toEqual([expect.stringContaining("ACTIVE without an attempt in flight")]);
    expect(checkConsistency(db, { inFlight: (id) => id === m.id })).toEqual([]);
  });

  test("an unknown state, an in-flight message that is also due, retries beyond the maximum", async () => {
    await insert(message({ state: "LOST" as never }));
    await insert(message({ state: "ACTIVE", dispatchAt: 5 }));
    await insert(message({ retried: 4, maxRetries: 3, state: "RETRY" }));
    const problems = checkConsistency(db);
    expect(problems).toHaveLength(3);
    expect(problems.join("\n")).toContain("unknown state LOST");
    expect(problems.join("\n")).toContain("could be sent twice");
    expect(problems.join("\n")).toContain("retried 4 of max 3");
  });

  test("a DLQ entry without a readable snapshot, or of another message", async () => {
    await deadLetter({ dlqId: "1-0", failedAt: 1, message: message(), error: "x" });
    db.run("UPDATE dlq SET message = 'not json' WHERE dlq_id = '1-0'");
    await deadLetter({ dlqId: "1-1", failedAt: 1, message: message(), error: "x" });
    db.run("UPDATE dlq SET message_id = 'msg_other' WHERE dlq_id = '1-1'");
    const problems = checkConsistency(db).join("\n");
    expect(problems).toContain("DLQ entry 1-0 has no stored message snapshot");
    expect(problems).toContain("DLQ entry 1-1 holds a snapshot of another message");
  });

  test("a message both waiting and in the DLQ, twice in the DLQ, or delivered and in the DLQ", async () => {
    const m = message();
    await insert(m);
    await deadLetter({ dlqId: "1-0", failedAt: 1, message: m, error: "x" });
    const twice = message();
    await deadLetter({ dlqId: "2-0", failedAt: 1, message: twice, error: "x" });
    await deadLetter({ dlqId: "2-1", failedAt: 1, message: twice, error: "x" });
    const delivered = message();
    await deadLetter({ dlqId: "3-0", failedAt: 1, message: delivered, error: "x" });
    await event(delivered.id, "DELIVERED");
    const problems = checkConsistency(db).join("\n");
    expect(problems).toContain(`message ${m.id} is both waiting and in the DLQ`);
    expect(problems).toContain(`message ${twice.id} is in the DLQ 2 times`);
    expect(problems).toContain(`message ${delivered.id} is in the DLQ (3-0) although it was delivered`);
  });

  test("a message that ended twice, or that still waits after it ended", async () => {
    const twice = message();
    await event(twice.id, "DELIVERED");
    await event(twice.id, "FAILED");
    const waiting = message();
    await insert(waiting);
    await event(waiting.id, "CANCELED");
    db.run("INSERT INTO events (account_id, time, message_id, state, url, data) VALUES ('acct', 1, 'msg_x', 'BOGUS', 'u', '{}')");
    const problems = checkConsistency(db).join("\n");
    expect(problems).toContain(`message ${twice.id} ended more than once`);
    expect(problems).toContain(`message ${waiting.id} is still waiting although the log says CANCELED`);
    expect(problems).toContain("unknown state BOGUS");
  });

  test("rows of an account that does not exist", async () => {
    await insert(message({ accountId: "ghost" }));
    expect(checkConsistency(db)).toEqual([expect.stringContaining("belong to unknown account ghost")]);
  });

  test("parked messages of a missing queue, or of a running queue with nothing started", async () => {
    await insert(message({ state: "PARKED", dispatchAt: null, queueName: "gone" }));
    db.run("INSERT INTO queues (account_id, name, created_at, updated_at, parallelism, paused) VALUES ('acct', 'q', 1, 1, 1, 0)");
    await insert(message({ state: "PARKED", dispatchAt: null, queueName: "q" }));
    await insert(message({ state: "PARKED", dispatchAt: null }));
    const problems = checkConsistency(db).join("\n");
    expect(problems).toContain("parked in queue gone of acct, which does not exist");
    expect(problems).toContain("queue q of acct is running but its 1 parked message(s) wait behind nothing");
    expect(problems).toContain("PARKED without a queue");
    // Paused, or with a message started ahead of them, the parked ones are fine.
    db.run("UPDATE queues SET paused = 1");
    expect(checkConsistency(db).join("\n")).not.toContain("queue q of acct");
    db.run("UPDATE queues SET paused = 0");
    await insert(message({ state: "ACTIVE", dispatchAt: null, queueName: "q" }));
    expect(checkConsistency(db).join("\n")).not.toContain("queue q of acct");
  });

  test("held messages of a flow-control key with nothing of that key in flight, once idle", async () => {
    const flow = { key: "k", periodMs: 1000, parallelism: 1 };
    await insert(message({ state: "HELD", dispatchAt: null, flow }));
    const running = message({ state: "ACTIVE", dispatchAt: null, flow });
    await insert(running);
    expect(checkConsistency(db)).toEqual([]);
    expect(checkConsistency(db, { inFlight: () => false }).join("\n")).toContain("HELD for flow-control key k");
    expect(checkConsistency(db, { inFlight: (id) => id === running.id })).toEqual([]);
  });

  test("a URL Group left without endpoints", () => {
    db.run("INSERT INTO url_groups (account_id, name, created_at, updated_at) VALUES ('acct', 'empty', 1, 1)");
    expect(checkConsistency(db)).toEqual([expect.stringContaining("URL Group empty of acct has no endpoint")]);
  });
});
