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
  const scope = new TickScope();
  const ticks = new PostgresTicks(writer, scope, [], () => {});
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
