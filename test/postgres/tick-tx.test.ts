import { afterAll, beforeAll, beforeEach, expect, test } from "bun:test";
import { SQL } from "bun";
import { PgWriteError } from "../../src/engines/postgres/pipeline.ts";
import { TickTransaction } from "../../src/engines/postgres/tick-tx.ts";
import { freshDatabase } from "../helpers/postgres.ts";

/**
 * A tick's transaction on real PostgreSQL: the writes' statements go out pipelined, inserts of
 * several writes as one statement, and a statement PostgreSQL refuses fails only its own write,
 * whether it was refused with the commit, before another write's read, or during its own.
 */

let sql: SQL;

beforeAll(async () => {
  sql = new SQL(await freshDatabase(), { max: 2 });
  await sql`CREATE TABLE t (id INT PRIMARY KEY, v TEXT NOT NULL CHECK (v <> 'bad'))`;
});
afterAll(() => sql.close());
beforeEach(async () => {
  await sql`TRUNCATE t`;
});

/** Runs writes in one tick as the group commit does: each begun, kept or undone. */
async function tick(writes: Array<(t: TickTransaction) => Promise<void> | void>) {
  const conn = await sql.reserve();
  const t = new TickTransaction(conn);
  const thrown = new Map<number, unknown>();
  try {
    for (const [n, write] of writes.entries()) {
      t.beginWrite(n);
      try {
        await write(t);
        const refused = await t.endWrite(true);
        if (refused) thrown.set(n, refused);
      } catch (error) {
        await t.endWrite(false);
        thrown.set(n, error);
      }
    }
    await t.commit();
    return { failed: [...t.failedWrites.keys()], thrown: [...thrown.keys()], errors: thrown };
  } finally {
    conn.release();
  }
}

const stored = async () => (await sql`SELECT id FROM t ORDER BY id`).map((r: { id: number }) => r.id);
const insert = (id: number, v = "ok") => (t: TickTransaction) => t.insert("t", { id, v });

test("writes that only queue commit in one pipeline; a refused row fails only its write", async () => {
  expect(await tick([insert(1), insert(2), insert(3)])).toMatchObject({ failed: [], thrown: [] });
  expect(await stored()).toEqual([1, 2, 3]);
  await sql`TRUNCATE t`;
  // The three rows go as one INSERT; the second is refused: the other two are stored.
  expect(await tick([insert(1), insert(2, "bad"), insert(3)])).toMatchObject({ failed: [1], thrown: [] });
  expect(await stored()).toEqual([1, 3]);
});

test("a write that ended and was refused before another write's read fails alone; the read sees the rest", async () => {
  let seen: number[] = [];
  const result = await tick([
    insert(1),
    insert(2, "bad"),
    async (t) => {
      seen = (await t.query("SELECT id FROM t ORDER BY id")).map((r) => Number(r.id));
      t.insert("t", { id: 4, v: "ok" });
    },
  ]);
  expect(result).toMatchObject({ failed: [1], thrown: [] });
  expect(seen).toEqual([1]);
  expect(await stored()).toEqual([1, 4]);
});

test("a statement of the write under way refused before its read is that write's error; the others stay", async () => {
  const result = await tick([
    insert(1),
    async (t) => {
      t.insert("t", { id: 2, v: "bad" });
      await t.query("SELECT 1");
    },
    insert(3),
  ]);
  expect(result).toMatchObject({ failed: [], thrown: [1] });
  expect(result.errors.get(1)).toBeInstanceOf(PgWriteError);
  expect((result.errors.get(1) as PgWriteError).code).toBe("23514");
  expect(await stored()).toEqual([1, 3]);
});

test("a nested part that fails is undone alone, whether or not its statements went out", async () => {
  const result = await tick([
    async (t) => {
      t.insert("t", { id: 1, v: "ok" });
      t.begin();
      t.insert("t", { id: 2, v: "ok" });
      t.undo();
      t.begin();
      t.insert("t", { id: 3, v: "ok" });
      await t.query("SELECT 1");
      t.undo();
      t.insert("t", { id: 4, v: "ok" });
    },
  ]);
  expect(result).toMatchObject({ failed: [], thrown: [] });
  expect(await stored()).toEqual([1, 4]);
});

test("a unique row taken by an earlier write of the tick fails the later one only", async () => {
  const result = await tick([insert(1), insert(1), async (t) => void (await t.query("SELECT 1")), insert(2)]);
  expect(result).toMatchObject({ failed: [1], thrown: [] });
  expect(await stored()).toEqual([1, 2]);
});

test("a lost connection loses the tick: nothing is stored and commit rejects", async () => {
  const conn = await sql.reserve();
  const t = new TickTransaction(conn);
  t.beginWrite(0);
  t.insert("t", { id: 1, v: "ok" });
  await t.endWrite(true);
  t.beginWrite(1);
  await expect(t.query("SELECT pg_terminate_backend(pg_backend_pid())")).rejects.toBeInstanceOf(PgWriteError);
  await t.endWrite(false);
  await expect(t.commit()).rejects.toBeInstanceOf(PgWriteError);
  conn.release();
  expect(await stored()).toEqual([]);
});
