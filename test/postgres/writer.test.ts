import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { PostgresTicks, TickScope } from "../../src/engines/postgres/tick.ts";
import { TickTransaction } from "../../src/engines/postgres/tick-sql.ts";
import { Writer, WriterError } from "../../src/engines/postgres/writer.ts";
import { freshDatabase } from "../helpers/postgres.ts";

/**
 * The writer thread holds the connection a tick's writes run in: a write reads inside that
 * transaction (it sees the tick's earlier writes), a savepoint undoes one write alone, a row
 * lock held elsewhere makes the write wait a bounded time, and a connection that dies takes the
 * tick with it but not the next one.
 */

let url: string;
let sql: SQL;
let writer: Writer;

beforeAll(async () => {
  url = await freshDatabase();
  sql = new SQL(url, { max: 2 });
  await sql`CREATE TABLE t (id int PRIMARY KEY, v text, b bytea, n bigint)`;
  writer = await Writer.open({ url, lockTimeoutMs: 300, answerTimeoutMs: 10_000 });
});

afterAll(async () => {
  writer.close();
  await sql.close();
});

test("a write reads what the tick wrote before it; an undone write leaves nothing; the commit stores the rest", async () => {
  const tx = new TickTransaction(writer);
  tx.begin();
  tx.insert("t", { id: 1, v: "a", b: new Uint8Array([1, 2, 255]), n: 2 ** 40 });
  tx.keep();
  tx.begin();
  tx.insert("t", { id: 2, v: "b", b: null, n: 0 });
  expect(tx.query("SELECT id FROM t ORDER BY id").map((r) => r.id)).toEqual([1, 2]);
  tx.undo();
  expect(tx.query("SELECT id FROM t ORDER BY id").map((r) => r.id)).toEqual([1]);
  // Nothing is visible outside before the commit.
  expect(await sql`SELECT id FROM t`).toHaveLength(0);
  await tx.commit();
  const [row] = await sql`SELECT * FROM t`;
  expect(row.id).toBe(1);
  expect(new Uint8Array(row.b)).toEqual(new Uint8Array([1, 2, 255]));
  expect(Number(row.n)).toBe(2 ** 40);
});

test("early writes run first in their tick, in the order requested, before the inserts queued by the others", async () => {
  const scope = new TickScope(writer);
  const ticks = new PostgresTicks(scope, [], () => {});
  const order: string[] = [];
  const plain = ticks.run(() => {
    order.push("plain");
    scope.tx.insert("t", { id: 10, v: "p", b: null, n: 0 });
  });
  const seen = ticks.run(() => {
    order.push("early 1");
    return scope.tx.query("SELECT count(*)::int AS n FROM t WHERE id = 10")[0]!.n;
  }, { early: true });
  const second = ticks.run(() => void order.push("early 2"), { early: true });
  expect(await seen).toBe(0);
  await Promise.all([plain, second]);
  expect(order).toEqual(["early 1", "early 2", "plain"]);
  // One tick: the plain write's row committed with the early ones.
  expect(await sql`SELECT id FROM t WHERE id = 10`).toHaveLength(1);
  ticks.close();
});

test("a row held by another transaction makes the write fail after the lock timeout, and the tick is lost", async () => {
  const holder = await sql.reserve();
  try {
    await holder`BEGIN`;
    await holder`SELECT * FROM t WHERE id = 1 FOR UPDATE`;
    const tx = new TickTransaction(writer);
    tx.begin();
    let failure: unknown;
    try {
      tx.query("SELECT * FROM t WHERE id = 1 FOR UPDATE");
    } catch (error) {
      failure = error;
    }
    tx.undo();
    expect(failure).toBeInstanceOf(WriterError);
    expect((failure as WriterError).code).toBe("55P03"); // lock_not_available
    expect(tx.failed).toBe(failure as WriterError);
    await expect(tx.commit()).rejects.toBeInstanceOf(WriterError);
    await tx.rollback();
  } finally {
    await holder`ROLLBACK`;
    holder.release();
  }
  // The next tick runs on a clean transaction.
  const next = new TickTransaction(writer);
  next.queue("UPDATE t SET v = 'after' WHERE id = 1");
  await next.commit();
  expect((await sql`SELECT v FROM t WHERE id = 1`)[0].v).toBe("after");
});

test("the writer's connection killed mid-tick loses that tick; the next tick connects again", async () => {
  const tx = new TickTransaction(writer);
  const pid = tx.query("SELECT pg_backend_pid() AS pid")[0]?.pid;
  await sql`SELECT pg_terminate_backend(${pid})`;
  expect(() => tx.query("SELECT 1")).toThrow(WriterError);
  await expect(tx.commit()).rejects.toBeInstanceOf(WriterError);
  await tx.rollback();
  const next = new TickTransaction(writer);
  next.insert("t", { id: 3, v: "c", b: null, n: 1 });
  await next.commit();
  expect((await sql`SELECT count(*)::int AS n FROM t WHERE id = 3`)[0].n).toBe(1);
});

/** Writes a test row from outside the writer's transaction (another connection). */
async function lockedElsewhere(id: number): Promise<boolean> {
  const other = await sql.reserve();
  try {
    await other`BEGIN`;
    await other`SELECT * FROM t WHERE id = ${id} FOR UPDATE NOWAIT`;
    return false;
  } catch (error) {
    if ((error as { errno?: string }).errno !== "55P03") throw error;
    return true;
  } finally {
    await other`ROLLBACK`;
    other.release();
  }
}

test("a read sent ahead goes out while the tick before commits; the next tick is its transaction and reads its answer without a round trip", async () => {
  let blocking = 0;
  const counted = {
    runNow: (s: Parameters<Writer["runNow"]>[0], e?: "commit" | "rollback") => (blocking++, writer.runNow(s, e)),
    run: (s: Parameters<Writer["run"]>[0], e?: "commit" | "rollback") => writer.run(s, e),
    send: (s: Parameters<Writer["send"]>[0]) => writer.send(s),
  };
  const scope = new TickScope(counted);
  const ticks = new PostgresTicks(scope, [], () => {});
  await sql`INSERT INTO t (id, v) VALUES (20, 'ahead')`;
  const first = ticks.run(() => scope.tx.insert("t", { id: 21, v: "first", b: null, n: 0 }));
  // The first tick is committing now.
  await new Promise((resolve) => setImmediate(resolve));
  const next = scope.upcoming();
  const read = next.ahead("SELECT v FROM t WHERE id = 20 FOR UPDATE");
  // Its lock is taken before any write of its tick runs, and held by that tick's transaction.
  await first;
  const deadline = Date.now() + 10_000;
  while (!(await lockedElsewhere(20))) {
    if (Date.now() > deadline) throw new Error("the read sent ahead took no lock");
    await Bun.sleep(10);
  }
  const seen = await ticks.run(() => {
    scope.tx.insert("t", { id: 22, v: "second", b: null, n: 0 });
    return { same: scope.current === next, v: read.rows()[0]?.v };
  });
  expect(seen).toEqual({ same: true, v: "ahead" });
  expect(blocking).toBe(0);
  expect(await lockedElsewhere(20)).toBe(false);
  expect((await sql`SELECT id FROM t WHERE id IN (21, 22) ORDER BY id`).map((r: { id: number }) => r.id)).toEqual([21, 22]);
  ticks.close();
});

test("a read sent ahead of a tick whose predecessor fails is rolled back with it; that tick begins anew and commits", async () => {
  const scope = new TickScope(writer);
  const ticks = new PostgresTicks(scope, [], () => {});
  await sql`INSERT INTO t (id, v) VALUES (30, 'taken')`;
  // Fails at its commit: the key exists.
  const failing = ticks.run(() => scope.tx.insert("t", { id: 30, v: "again", b: null, n: 0 }));
  await new Promise((resolve) => setImmediate(resolve));
  const ahead = scope.upcoming();
  const read = ahead.ahead("SELECT v FROM t WHERE id = 30 FOR UPDATE");
  const after = ticks.run(() => {
    // A savepoint and a read: both need the tick's own transaction to be open.
    scope.tx.insert("t", { id: 31, v: "after", b: null, n: 0 });
    return { same: scope.current === ahead, n: scope.tx.query("SELECT count(*)::int AS n FROM t WHERE id IN (30, 31)")[0]!.n };
  });
  await expect(failing).rejects.toThrow();
  expect(await after).toEqual({ same: false, n: 2 });
  expect(() => read.rows()).toThrow();
  expect(await lockedElsewhere(30)).toBe(false);
  expect((await sql`SELECT v FROM t WHERE id IN (30, 31) ORDER BY id`).map((r: { v: string }) => r.v)).toEqual(["taken", "after"]);
  ticks.close();
});

test("the commit goes out with the tick's statements: one that fails ends the transaction there, nothing kept, none left open", async () => {
  await sql`INSERT INTO t (id, v) VALUES (60, 'one')`;
  const pid = writer.runNow([{ text: "SELECT pg_backend_pid() AS pid", params: [] }])[0]!.pid;
  const failed = writer.run(
    [
      { text: "BEGIN", params: [] },
      { text: "INSERT INTO t (id, v) VALUES (61, 'kept?')", params: [] },
      { text: "INSERT INTO t (id, v) VALUES (60, 'twice')", params: [] },
    ],
    "commit",
  );
  await expect(failed).rejects.toMatchObject({ failedAt: 2 });
  // No rollback was asked for: the connection is idle, not in an aborted transaction.
  const [session] = await sql`SELECT state FROM pg_stat_activity WHERE pid = ${pid}`;
  expect(session.state).toBe("idle");
  expect(await sql`SELECT id FROM t WHERE id = 61`).toHaveLength(0);
});
