import { afterEach, beforeEach, expect, test } from "bun:test";
import { silentLogger } from "../../src/core/log.ts";
import type { SqliteStorage } from "../../src/engines/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import type { EventRecord, EventState } from "../../src/logs/model.ts";

/**
 * The SQLite event log keeps a tick's entries in memory and inserts them just before the COMMIT,
 * many rows per statement: what is stored must be what one INSERT per entry stored.
 */

let engine: SqliteStorage;
beforeEach(() => {
  engine = openSqliteEngine({ path: null, busyTimeoutMs: 1000, log: silentLogger });
});
afterEach(() => engine.close());

const entry = (messageId: string, state: EventState = "CREATED", accountId = "acct"): EventRecord => ({
  time: 1_000,
  accountId,
  messageId,
  state,
  url: "http://127.0.0.1:9/x",
});
const stored = (accountId = "acct") =>
  engine.db
    .query<{ seq: number; message_id: string; state: string }, [string]>(
      "SELECT seq, message_id, state FROM events WHERE account_id = ? ORDER BY seq",
    )
    .all(accountId);

test("a tick's entries are stored with its commit, in the order they were appended, with increasing seq", async () => {
  const { commit, stores } = engine;
  const ids = Array.from({ length: 50 }, (_, i) => `m${i}`); // 32 + 8 + 8 + 1 + 1 rows
  const writes = ids.map((id) => commit.run((tx) => stores.events.append(tx, entry(id))));
  const last = commit.run((tx) => stores.events.append(tx, entry("m0", "ACTIVE")));
  expect(stored()).toEqual([]);
  await Promise.all([...writes, last]);
  const rows = stored();
  expect(rows.map((r) => r.message_id)).toEqual([...ids, "m0"]);
  expect(rows.at(-1)!.state).toBe("ACTIVE");
  rows.forEach((r, i) => expect(r.seq).toBe(rows[0]!.seq + i));
  // The log reads them back newest first, as before.
  expect((await stores.events.list("acct", {}, null, 2)).map((e) => [e.messageId, e.state])).toEqual([
    ["m0", "ACTIVE"],
    ["m49", "CREATED"],
  ]);
});

test("a write that fails drops its entries; the entries of the other writes of its tick stay, in order", async () => {
  const { commit, stores } = engine;
  const results = await Promise.allSettled([
    commit.run((tx) => stores.events.append(tx, entry("before"))),
    commit.run(async (tx) => {
      await stores.events.append(tx, entry("lost-1"));
      await stores.events.append(tx, entry("lost-2"));
      throw new Error("refused half-way");
    }),
    commit.run((tx) => stores.events.append(tx, entry("after"))),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  expect(stored().map((r) => r.message_id)).toEqual(["before", "after"]);
});

test("a nested step that throws drops its entries; its write keeps the others", async () => {
  const { commit, stores } = engine;
  await commit.run(async (tx) => {
    await stores.events.append(tx, entry("outer-1"));
    await expect(
      tx.nested(async (tx) => {
        await stores.events.append(tx, entry("inner"));
        throw new Error("inner refused");
      }),
    ).rejects.toThrow("inner refused");
    await tx.nested((tx) => stores.events.append(tx, entry("inner-kept")));
    await stores.events.append(tx, entry("outer-2"));
  });
  expect(stored().map((r) => r.message_id)).toEqual(["outer-1", "inner-kept", "outer-2"]);
});

test("an entry the table would refuse (no url, no time) fails its own write only", async () => {
  const { commit, stores } = engine;
  const results = await Promise.allSettled([
    commit.run((tx) => stores.events.append(tx, { ...entry("bad"), url: undefined as never })),
    commit.run((tx) => stores.events.append(tx, { ...entry("bad-time"), time: Number.NaN })),
    commit.run((tx) => stores.events.append(tx, entry("good"))),
  ]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "fulfilled"]);
  expect(stored().map((r) => r.message_id)).toEqual(["good"]);
});

test("a reset in a tick removes the entries appended before it, not those after", async () => {
  const { commit, stores } = engine;
  await commit.run((tx) => stores.events.append(tx, entry("old")));
  await Promise.all([
    commit.run((tx) => stores.events.append(tx, entry("same-tick"))),
    commit.run((tx) => stores.events.append(tx, entry("other", "CREATED", "other"))),
    commit.run((tx) => stores.events.deleteAccount(tx, "acct")),
    commit.run((tx) => stores.events.append(tx, entry("new"))),
  ]);
  expect(stored().map((r) => r.message_id)).toEqual(["new"]);
  expect(stored("other").map((r) => r.message_id)).toEqual(["other"]);
});

test("a write that fails right after a reset keeps the reset; a reset in a failed write is dropped", async () => {
  const { commit, stores } = engine;
  await commit.run((tx) => stores.events.append(tx, entry("old")));
  await commit.run((tx) => stores.events.append(tx, entry("kept", "CREATED", "other")));
  const results = await Promise.allSettled([
    commit.run((tx) => stores.events.deleteAccount(tx, "acct")),
    commit.run(async (tx) => {
      await stores.events.append(tx, entry("lost"));
      throw new Error("refused");
    }),
    commit.run(async (tx) => {
      await stores.events.deleteAccount(tx, "other");
      throw new Error("refused too");
    }),
    // 33 entries: a chunk of 32 rows and one of 1 after the reset.
    commit.run(async (tx) => {
      for (let i = 0; i < 33; i++) await stores.events.append(tx, entry(`new-${i}`));
    }),
  ]);
  expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
  expect(stored().map((r) => r.message_id)).toEqual(Array.from({ length: 33 }, (_, i) => `new-${i}`));
  expect(stored("other").map((r) => r.message_id)).toEqual(["kept"]);
});

test("a tick that fails as a whole leaves no entry behind for the next tick", async () => {
  const { commit, stores, db } = engine;
  const failed = await Promise.allSettled([
    commit.run((tx) => stores.events.append(tx, entry("lost"))),
    commit.run(async () => {
      db.run("ROLLBACK"); // as a full disk ends SQLite's transaction
      throw new Error("disk I/O error");
    }),
  ]);
  expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  await commit.run((tx) => stores.events.append(tx, entry("next")));
  expect(stored().map((r) => r.message_id)).toEqual(["next"]);
});
