import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { HttpError } from "../../src/core/errors.ts";
import { GroupCommit } from "../../src/engines/sqlite/group-commit.ts";

function setup() {
  const db = new Database(":memory:", { strict: true });
  db.run("CREATE TABLE t (id TEXT PRIMARY KEY)");
  const commit = new GroupCommit(db);
  const insert = (id: string) => db.run("INSERT INTO t (id) VALUES (?)", [id]);
  const rows = () => db.query<{ id: string }, []>("SELECT id FROM t ORDER BY id").all().map((r) => r.id);
  return { db, commit, insert, rows };
}

test("writes requested in one tick commit together, each caller gets its own value after the commit", async () => {
  const { db, commit, insert, rows } = setup();
  let changesBefore = -1;
  const a = commit.run(async () => {
    insert("a");
    return 1;
  });
  const b = commit.run(async () => {
    insert("b");
    changesBefore = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM t").get()!.n;
    return 2;
  });
  expect(commit.pendingWrites).toBe(2);
  expect(rows()).toEqual([]);
  expect(await Promise.all([a, b])).toEqual([1, 2]);
  // Both ran inside one transaction: the second saw the first.
  expect(changesBefore).toBe(2);
  expect(rows()).toEqual(["a", "b"]);
  expect(commit.pendingWrites).toBe(0);
});

test("a write that throws is rolled back to its savepoint; the others of the group still commit", async () => {
  const { commit, insert, rows } = setup();
  const good = commit.run(async () => insert("good"));
  const bad = commit.run(async () => {
    insert("half");
    throw new HttpError(400, "refused half-way");
  });
  const after = commit.run(async () => insert("after"));
  await good;
  await expect(bad).rejects.toThrow("refused half-way");
  await after;
  expect(rows()).toEqual(["after", "good"]);
});

test("when the transaction itself fails, every caller gets a 503 and nothing of the group is stored", async () => {
  const { db, commit, insert, rows } = setup();
  // A write that ends SQLite's transaction behind the group's back (as a full disk does).
  const a = commit.run(async () => insert("a"));
  const b = commit.run(async () => {
    db.run("ROLLBACK");
    throw Object.assign(new Error("disk I/O error"), { code: "SQLITE_IOERR" });
  });
  const results = await Promise.allSettled([a, b]);
  for (const r of results) {
    expect(r.status).toBe("rejected");
    expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 503 });
    expect(String((r as PromiseRejectedResult).reason.message)).toStartWith("storage unavailable");
  }
  expect(rows()).toEqual([]);
});

test("afterCommit follow-ups run after the commit with true, or with false when their write failed", async () => {
  const { commit, insert } = setup();
  const seen: string[] = [];
  const ok = commit.run(async (tx) => {
    insert("x");
    tx.afterCommit((committed) => seen.push(`x ${committed}`));
  });
  const failing = commit.run(async (tx) => {
    tx.afterCommit((committed) => seen.push(`y ${committed}`));
    throw new Error("no");
  });
  await ok;
  await failing.catch(() => {});
  expect(seen.sort()).toEqual(["x true", "y false"]);
});

test("a follow-up runs before the caller's promise resolves", async () => {
  const { commit, insert } = setup();
  const order: string[] = [];
  await commit
    .run(async (tx) => {
      insert("x");
      tx.afterCommit(() => order.push("follow-up"));
    })
    .then(() => order.push("caller"));
  expect(order).toEqual(["follow-up", "caller"]);
});

test("nested(): a savepoint inside the write; when it throws, its rows and follow-ups go, the write goes on", async () => {
  const { commit, insert, rows } = setup();
  const seen: string[] = [];
  await commit.run(async (tx) => {
    insert("outer");
    const undone = tx.nested(async (inner) => {
      insert("inner-undone");
      inner.afterCommit((committed) => seen.push(`undone ${committed}`));
      throw new Error("a bug half-way");
    });
    await expect(undone).rejects.toThrow("a bug half-way");
    await tx.nested(async (inner) => {
      insert("inner-kept");
      inner.afterCommit((committed) => seen.push(`kept ${committed}`));
    });
  });
  expect(rows()).toEqual(["inner-kept", "outer"]);
  // The undone follow-up heard false at once, during the write; the kept one after the commit.
  expect(seen).toEqual(["undone false", "kept true"]);
});

test("flush() commits what is queued at once (shutdown)", async () => {
  const { commit, insert, rows } = setup();
  void commit.run(async () => insert("late"));
  await commit.flush();
  expect(rows()).toEqual(["late"]);
});

test("a tick runs from BEGIN to COMMIT in one turn of the event loop; a write that awaits real I/O fails its tick", async () => {
  const { db, commit, insert, rows } = setup();
  let seenOutside = -1;
  await commit.run(async () => {
    insert("a");
    // A callback of the next turn, asked for half-way: it finds the tick over, not half done.
    setImmediate(() => (seenOutside = db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM t").get()!.n));
    await Promise.resolve();
    insert("b");
  });
  await new Promise((resolve) => setImmediate(resolve));
  expect(seenOutside).toBe(2);
  const awaitsTimer = commit.run(async () => {
    insert("c");
    await new Promise((resolve) => setTimeout(resolve, 1));
    insert("d");
  });
  await expect(awaitsTimer).rejects.toThrow("storage unavailable");
  expect(rows()).toEqual(["a", "b"]);
});
