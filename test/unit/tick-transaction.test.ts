import { expect, test } from "bun:test";
import { TickTransaction } from "../../src/engines/postgres/tick-sql.ts";
import type { Statement, StatementRunner } from "../../src/engines/postgres/writer-protocol.ts";

/** Records what would go to PostgreSQL, batch by batch; a query answers with no rows. */
function recordingWriter() {
  const batches: Array<{ texts: string[]; params: unknown[][]; end?: string }> = [];
  const record = (statements: Statement[], end?: string) =>
    batches.push({ texts: statements.map((s) => s.text), params: statements.map((s) => [...s.params]), end });
  const writer: StatementRunner = {
    runNow(statements: Statement[], end?: "commit" | "rollback") {
      record(statements, end);
      return [];
    },
    async run(statements: Statement[], end?: "commit" | "rollback") {
      record(statements, end);
      return [];
    },
    send(statements: Statement[]) {
      record(statements);
      return { rows: () => [] };
    },
  };
  return { writer, batches };
}

test("inserts of one table queued one after another go as one statement, across writes", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  for (const id of ["a", "b", "c"]) {
    tx.begin();
    tx.insert("messages", { id, state: "CREATED" });
    tx.keep();
  }
  await tx.commit();
  expect(batches).toEqual([
    { texts: ["BEGIN", "INSERT INTO messages (id, state) VALUES ($1, $2), ($3, $4), ($5, $6)"], params: [[], ["a", "CREATED", "b", "CREATED", "c", "CREATED"]], end: "commit" },
  ]);
});

test("a failed write whose statements never went out is dropped without a savepoint", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  tx.begin();
  tx.insert("t", { id: 1 });
  tx.keep();
  tx.begin();
  tx.insert("t", { id: 2 });
  tx.queue("UPDATE t SET v = 1");
  tx.undo();
  await tx.commit();
  expect(batches.map((b) => b.texts)).toEqual([["BEGIN", "INSERT INTO t (id) VALUES ($1)"]]);
  expect(batches[0]!.params[1]).toEqual([1]);
});

test("a query inside a write sends its savepoint first, where the write began, even inside a multi-row insert", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  tx.begin();
  tx.insert("t", { id: 1 });
  tx.keep();
  tx.begin();
  tx.insert("t", { id: 2 });
  tx.query("SELECT 1");
  tx.insert("t", { id: 3 });
  tx.undo();
  tx.begin();
  tx.insert("t", { id: 4 });
  tx.keep();
  await tx.commit();
  expect(batches.map((b) => b.texts)).toEqual([
    ["BEGIN", "INSERT INTO t (id) VALUES ($1)", "SAVEPOINT s0", "INSERT INTO t (id) VALUES ($1)", "SELECT 1"],
    ["ROLLBACK TO SAVEPOINT s0", "RELEASE SAVEPOINT s0", "INSERT INTO t (id) VALUES ($1)"],
  ]);
  expect(batches[0]!.params.slice(1, 4)).toEqual([[1], [], [2]]);
  expect(batches[1]!.params[2]).toEqual([4]);
});

test("nested parts get savepoints of their own; a kept write whose savepoint went out is released", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  tx.begin();
  tx.queue("UPDATE a SET x = 1");
  tx.begin();
  tx.queue("UPDATE b SET x = 1");
  tx.query("SELECT 2");
  tx.undo();
  tx.keep();
  await tx.commit();
  expect(batches.map((b) => b.texts)).toEqual([
    ["BEGIN", "SAVEPOINT s0", "UPDATE a SET x = 1", "SAVEPOINT s1", "UPDATE b SET x = 1", "SELECT 2"],
    ["ROLLBACK TO SAVEPOINT s1", "RELEASE SAVEPOINT s1", "RELEASE SAVEPOINT s0"],
  ]);
});

test("a row still queued can be changed; once sent it cannot", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  const first = tx.insert("m", { id: "a", state: "CREATED" });
  expect(tx.patchQueued(first, { state: "ACTIVE" })).toBe(true);
  expect(tx.patchQueued(first, { nope: 1 })).toBe(false);
  tx.query("SELECT 1");
  expect(tx.patchQueued(first, { state: "RETRY" })).toBe(false);
  await tx.commit();
  expect(batches[0]!.params[1]).toEqual(["a", "ACTIVE"]);
});

test("consecutive queueEach calls of one text go as one statement with every key; a savepoint can split them", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  const del = "DELETE FROM m WHERE id = ANY($1::text[])";
  tx.begin();
  tx.queueEach(del, "a");
  tx.keep();
  tx.begin();
  tx.queueEach(del, "b");
  tx.query("SELECT 1");
  tx.keep();
  tx.queueEach(del, "c");
  tx.queueEach(del, "d");
  await tx.commit();
  expect(batches.map((b) => b.texts)).toEqual([
    ["BEGIN", del, "SAVEPOINT s0", del, "SELECT 1"],
    ["RELEASE SAVEPOINT s0", del],
  ]);
  expect(batches[0]!.params[1]).toEqual([["a"]]);
  expect(batches[0]!.params[3]).toEqual([["b"]]);
  expect(batches[1]!.params[1]).toEqual([["c", "d"]]);
});

test("a tick that wrote nothing sends nothing", async () => {
  const { writer, batches } = recordingWriter();
  const tx = new TickTransaction(writer);
  tx.begin();
  tx.keep();
  await tx.commit();
  expect(batches).toEqual([]);
});
