import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { silentLogger } from "../../src/core/log.ts";
import { MessageEvents, onFinished, type MessageListener } from "../../src/model/events.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";

const message = (id: string): MessageRecord => ({
  id,
  accountId: "acct",
  kind: "message",
  state: "CREATED",
  dispatchAt: 0,
  notBefore: 0,
  createdAt: 0,
  retried: 0,
  maxRetries: 3,
  url: "http://example.com/",
  method: "POST",
  headers: [],
  body: new Uint8Array(),
  timeoutMs: 1000,
});

function setup(listeners: MessageListener[] = []) {
  const db = new Database(":memory:");
  db.run("CREATE TABLE t (id TEXT PRIMARY KEY)");
  const commit = new GroupCommit(db);
  const errors: string[] = [];
  const log = { ...silentLogger, error: (msg: string) => errors.push(msg) };
  const events = new MessageEvents(log, listeners);
  const rows = () => db.query<{ id: string }, []>("SELECT id FROM t ORDER BY id").all().map((r) => r.id);
  return { db, commit, events, rows, errors };
}

test("listeners run inside the write, in the order given, and their writes commit with it", async () => {
  const calls: string[] = [];
  const { db, commit, events, rows } = setup([
    { created: (e) => void calls.push(`log ${e.message.id}`) },
    { created: (e) => void db.run("INSERT INTO t VALUES (?)", [e.message.id]) },
    { created: (e) => void calls.push(`count ${e.message.id}`) },
  ]);
  await commit.run(async (tx) => {
    await events.emit(tx, "created", { message: message("a"), atMs: 1 });
    expect(calls).toEqual(["log a", "count a"]);
  });
  expect(rows()).toEqual(["a"]);
});

test("a listener that throws fails the write: nothing of it is stored, other writes of the commit are", async () => {
  const { db, commit, events, rows } = setup([
    { created: (e) => void db.run("INSERT INTO t VALUES (?)", [e.message.id]) },
    {
      created: (e) => {
        if (e.message.id === "bad") throw new Error("boom");
      },
    },
  ]);
  const good = commit.run((tx) => events.emit(tx, "created", { message: message("good"), atMs: 1 }));
  const bad = commit.run((tx) => events.emit(tx, "created", { message: message("bad"), atMs: 1 }));
  await good;
  await expect(bad).rejects.toThrow("boom");
  expect(rows()).toEqual(["good"]);
});

test("observers see an event only once its write is committed, in the order of the events", async () => {
  const { commit, events } = setup();
  const seen: string[] = [];
  events.observe("created", (e) => seen.push(`created ${e.message.id}`));
  events.observe("cancelled", (e) => seen.push(`cancelled ${e.message.id}`));
  const write = commit.run(async (tx) => {
    await events.emit(tx, "created", { message: message("a"), atMs: 1 });
    await events.emit(tx, "cancelled", { message: message("a"), atMs: 2 });
    expect(seen).toEqual([]);
  });
  expect(seen).toEqual([]);
  await write;
  expect(seen).toEqual(["created a", "cancelled a"]);
});

test("observers never see an event of a write that was rolled back", async () => {
  const { commit, events } = setup();
  const seen: string[] = [];
  events.observe("created", (e) => seen.push(e.message.id));
  const failing = commit.run(async (tx) => {
    await events.emit(tx, "created", { message: message("rolled-back"), atMs: 1 });
    throw new Error("the write fails after the event");
  });
  const kept = commit.run((tx) => events.emit(tx, "created", { message: message("kept"), atMs: 1 }));
  await expect(failing).rejects.toThrow();
  await kept;
  expect(seen).toEqual(["kept"]);
});

test("observers never see an event of a nested savepoint that was rolled back, but do see the rest of the write", async () => {
  const { commit, events } = setup();
  const seen: string[] = [];
  events.observe("delivered", (e) => seen.push(e.message.id));
  const outcome = { ticket: 1, messageId: "x", status: 200, startedAt: 0, durationMs: 1 };
  await commit.run(async (tx) => {
    await expect(
      tx.nested(async (tx) => {
        await events.emit(tx, "delivered", { message: message("undone"), outcome, atMs: 1 });
        throw new Error("a bug half-way");
      }),
    ).rejects.toThrow("a bug half-way");
    await tx.nested((tx) => events.emit(tx, "delivered", { message: message("done"), outcome, atMs: 1 }));
  });
  expect(seen).toEqual(["done"]);
});

test("an observer that throws is logged and does not stop the others or the commit", async () => {
  const { commit, events, errors } = setup();
  const seen: string[] = [];
  events.observe("claimed", () => {
    throw new Error("observer bug");
  });
  events.observe("claimed", (e) => seen.push(e.message.id));
  await commit.run((tx) => events.emit(tx, "claimed", { message: message("a"), atMs: 1 }));
  expect(seen).toEqual(["a"]);
  expect(errors).toEqual(["a message event observer failed"]);
});

test("an observer can stop observing", async () => {
  const { commit, events } = setup();
  const seen: string[] = [];
  const stop = events.observe("created", (e) => seen.push(e.message.id));
  await commit.run((tx) => events.emit(tx, "created", { message: message("a"), atMs: 1 }));
  stop();
  await commit.run((tx) => events.emit(tx, "created", { message: message("b"), atMs: 1 }));
  expect(seen).toEqual(["a"]);
});

test("observers that stop (themselves or others) while an event is handed out still get that event, and no later one", async () => {
  const { commit, events } = setup();
  const seen: string[] = [];
  const stops: Array<() => void> = [];
  stops.push(events.observe("created", (e) => (seen.push(`first ${e.message.id}`), stops.forEach((stop) => stop()))));
  stops.push(events.observe("created", (e) => seen.push(`second ${e.message.id}`)));
  // The same function observing twice: stopping one of them leaves the other.
  const twice = (e: { message: MessageRecord }) => seen.push(`twice ${e.message.id}`);
  events.observe("created", twice);
  const stopOneTwice = events.observe("created", twice);
  await commit.run(async (tx) => {
    await events.emit(tx, "created", { message: message("a"), atMs: 1 });
    await events.emit(tx, "created", { message: message("b"), atMs: 1 });
  });
  stopOneTwice();
  await commit.run((tx) => events.emit(tx, "created", { message: message("c"), atMs: 1 }));
  expect(seen).toEqual(["first a", "second a", "twice a", "twice a", "twice b", "twice b", "twice c"]);
});

test("onFinished follows the three ways a message ends, and nothing else", async () => {
  const { commit } = setup();
  const ends: string[] = [];
  const listener = onFinished((_tx, m, how, atMs) => void ends.push(`${m.id} ${how} ${atMs}`));
  const outcome = { ticket: 1, messageId: "x", startedAt: 0, durationMs: 1 };
  expect(Object.keys(listener).sort()).toEqual(["cancelled", "delivered", "failed"]);
  await commit.run(async (tx) => {
    await listener.delivered!({ message: message("a"), outcome, atMs: 1 }, tx);
    await listener.failed!({ message: message("b"), outcome, error: "no", dlqId: "1-0", atMs: 2 }, tx);
    await listener.cancelled!({ message: message("c"), atMs: 3 }, tx);
  });
  expect(ends).toEqual(["a delivered 1", "b failed 2", "c cancelled 3"]);
});
