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
  const a = commit.run(() => {
    insert("a");
    return 1;
  });
  const b = commit.run(() => {
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
  const good = commit.run(() => insert("good"));
  const bad = commit.run(() => {
    insert("half");
    throw new HttpError(400, "refused half-way");
  });
  const after = commit.run(() => insert("after"));
  await good;
  await expect(bad).rejects.toThrow("refused half-way");
  await after;
  expect(rows()).toEqual(["after", "good"]);
});

test("when the transaction itself fails, every caller gets a 503 and nothing of the group is stored", async () => {
  const { db, commit, insert, rows } = setup();
  // A write that ends SQLite's transaction behind the group's back (as a full disk does).
  const a = commit.run(() => insert("a"));
  const b = commit.run(() => {
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
  const ok = commit.run(() => {
    insert("x");
    commit.afterCommit((committed) => seen.push(`x ${committed}`));
  });
  const failing = commit.run(() => {
    commit.afterCommit((committed) => seen.push(`y ${committed}`));
    throw new Error("no");
  });
  await ok;
  await failing.catch(() => {});
  expect(seen.sort()).toEqual(["x true", "y false"]);
  // Outside a write it runs at once.
  commit.afterCommit((committed) => seen.push(`now ${committed}`));
  expect(seen.at(-1)).toBe("now true");
});

test("a follow-up runs before the caller's promise resolves", async () => {
  const { commit, insert } = setup();
  const order: string[] = [];
  await commit
    .run(() => {
      insert("x");
      commit.afterCommit(() => order.push("follow-up"));
    })
    .then(() => order.push("caller"));
  expect(order).toEqual(["follow-up", "caller"]);
});

test("nested(): a savepoint inside the write; when it throws, its rows and follow-ups go, the write goes on", async () => {
  const { commit, insert, rows } = setup();
  const seen: string[] = [];
  await commit.run(() => {
    insert("outer");
    expect(() =>
      commit.nested(() => {
        insert("inner-undone");
        commit.afterCommit((committed) => seen.push(`undone ${committed}`));
        throw new Error("a bug half-way");
      }),
    ).toThrow("a bug half-way");
    commit.nested(() => {
      insert("inner-kept");
      commit.afterCommit((committed) => seen.push(`kept ${committed}`));
    });
  });
  expect(rows()).toEqual(["inner-kept", "outer"]);
  // The undone follow-up heard false at once, during the write; the kept one after the commit.
  expect(seen).toEqual(["undone false", "kept true"]);
});

test("flush() commits what is queued at once (shutdown)", () => {
  const { commit, insert, rows } = setup();
  void commit.run(() => insert("late"));
  commit.flush();
  expect(rows()).toEqual(["late"]);
});
