import { expect, test } from "bun:test";
import { byWrite, statementsOf, TickQueue } from "../../src/engines/postgres/tick-queue.ts";

/**
 * What a PostgreSQL tick sends when a write reads or the tick commits (the sending itself, and
 * PostgreSQL's refusals, are in test/postgres/tick-tx.test.ts): inserts of several writes as one
 * statement, the write under way apart with its savepoints where its parts began, and each write's
 * rows again apart when a refusal must be found.
 */

const texts = (statements: Array<{ text: string }>) => statements.map((s) => s.text);

/** Write `n` queues what `body` does and ends well. */
function write(q: TickQueue, n: number, body: () => void): void {
  q.write = n;
  q.pushFrame();
  body();
  q.popFrame(false);
  q.write = -1;
}

test("inserts of one table queued one after another go as one statement, across writes", () => {
  const q = new TickQueue();
  for (const [n, id] of ["a", "b", "c"].entries()) write(q, n, () => q.insert("messages", { id, state: "CREATED" }));
  const { ended, own } = q.takeForSending();
  expect(own).toEqual([]);
  expect(statementsOf(ended)).toEqual([
    { text: "INSERT INTO messages (id, state) VALUES ($1, $2), ($3, $4), ($5, $6)", params: ["a", "CREATED", "b", "CREATED", "c", "CREATED"] },
  ]);
  // Looked for write by write (a refusal), each write's rows go alone.
  expect([...byWrite(ended)].map(([n, statements]) => [n, statements.map((s) => s.params)])).toEqual([
    [0, [["a", "CREATED"]]],
    [1, [["b", "CREATED"]]],
    [2, [["c", "CREATED"]]],
  ]);
});

test("a write that fails before its statements went out leaves none of them", () => {
  const q = new TickQueue();
  write(q, 0, () => q.insert("t", { id: 1 }));
  q.write = 1;
  q.pushFrame();
  q.insert("t", { id: 2 });
  q.queue("UPDATE t SET v = 1");
  q.popFrame(true);
  expect(statementsOf(q.takeForSending().ended)).toEqual([{ text: "INSERT INTO t (id) VALUES ($1)", params: [1] }]);
});

test("the write under way owns what follows its savepoint, placed where it began, even inside a multi-row insert", () => {
  const q = new TickQueue();
  write(q, 0, () => q.insert("t", { id: 1 }));
  q.write = 1;
  q.pushFrame();
  q.insert("t", { id: 2 });
  q.pushFrame();
  q.queue("UPDATE t SET v = 2");
  const { ended, own } = q.takeForSending();
  expect(statementsOf(ended)).toEqual([{ text: "INSERT INTO t (id) VALUES ($1)", params: [1] }]);
  expect(texts(own)).toEqual(["SAVEPOINT f0", "INSERT INTO t (id) VALUES ($1)", "SAVEPOINT f1", "UPDATE t SET v = 2"]);
  expect(q.frames.map((f) => f.sent)).toEqual([true, true]);
  // Once its savepoint went out, all it queues is its own.
  q.insert("t", { id: 3 });
  const again = q.takeForSending();
  expect(again.ended).toEqual([]);
  expect(texts(again.own)).toEqual(["INSERT INTO t (id) VALUES ($1)"]);
});

test("rows written on behalf of writes that ended go at the end of their part, before the write under way", () => {
  const q = new TickQueue();
  write(q, 0, () => q.insert("messages", { id: "a" }));
  write(q, 1, () => q.insert("messages", { id: "b" }));
  q.insertLate("events", { message_id: "a" }, "", 0);
  q.insertLate("events", { message_id: "b" }, "", 1);
  q.write = 2;
  q.pushFrame();
  q.insert("messages", { id: "c" });
  const { ended, own } = q.takeForSending();
  expect(texts(statementsOf(ended))).toEqual([
    "INSERT INTO messages (id) VALUES ($1), ($2)",
    "INSERT INTO events (message_id) VALUES ($1), ($2)",
  ]);
  expect(texts(own)).toEqual(["SAVEPOINT f0", "INSERT INTO messages (id) VALUES ($1)"]);
  expect([...byWrite(ended)].map(([n, statements]) => [n, statements.map((s) => s.params)])).toEqual([
    [0, [["a"], ["a"]]],
    [1, [["b"], ["b"]]],
  ]);
});

test("consecutive queueEach calls of one text go as one statement with every key; a savepoint splits them", () => {
  const q = new TickQueue();
  const del = "DELETE FROM m WHERE id = ANY($1::text[])";
  write(q, 0, () => q.queueEach(del, "a"));
  write(q, 1, () => q.queueEach(del, "b"));
  q.write = 2;
  q.pushFrame();
  q.queueEach(del, "c");
  const { ended, own } = q.takeForSending();
  expect(statementsOf(ended)).toEqual([{ text: del, params: [["a", "b"]] }]);
  expect(own).toEqual([{ text: "SAVEPOINT f0", params: [] }, { text: del, params: [["c"]] }]);
});

test("a tick that wrote nothing has nothing to send", () => {
  const q = new TickQueue();
  write(q, 0, () => {});
  expect(q.empty).toBe(true);
  expect(q.takeForSending()).toEqual({ ended: [], own: [] });
});
