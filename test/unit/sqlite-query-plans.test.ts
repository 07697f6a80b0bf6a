import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { silentLogger } from "../../src/core/log.ts";
import type { SqliteStorage } from "../../src/engines/engine.ts";
import { openSqliteEngine } from "../../src/engines/sqlite/engine.ts";
import { messageRecord } from "../helpers/message-record.ts";

/**
 * Reads whose cost must not grow with the table: the plans SQLite makes for the statements the
 * stores really run (captured as they are prepared), on a store with messages of two accounts.
 */

let engine: SqliteStorage;
beforeEach(() => {
  engine = openSqliteEngine({ path: null, busyTimeoutMs: 1000, log: silentLogger });
});
afterEach(() => engine.close());

const T0 = 1_800_000_000_000;
const message = (id: string, accountId: string, createdAt: number) =>
  messageRecord({ id, accountId, createdAt, dispatchAt: T0 + 3_600_000 });

/** Runs `read` and returns the SQL of every statement it queried, with the parameters it gave. */
async function capture(db: Database, read: () => Promise<void>): Promise<Array<{ sql: string; params: unknown }>> {
  const seen: Array<{ sql: string; params: unknown }> = [];
  const query = db.query.bind(db);
  db.query = ((sql: string) => {
    const statement = query(sql);
    const all = statement.all.bind(statement);
    statement.all = ((params: unknown) => (seen.push({ sql, params }), all(params as never))) as never;
    return statement;
  }) as typeof db.query;
  try {
    await read();
  } finally {
    db.query = query;
  }
  return seen;
}

const plan = (db: Database, sql: string, params: unknown) =>
  db
    .query<{ detail: string }, [Record<string, string | number>]>(`EXPLAIN QUERY PLAN ${sql}`)
    .all(params as Record<string, string | number>)
    .map((row) => row.detail)
    .join(" | ");

test("bulk cancel's pages walk one account's messages in the order they were stored, without sorting them", async () => {
  const { commit, stores, db } = engine;
  // Created-at times out of publish order (clocks move back): the order is still the stored one.
  const mine = Array.from({ length: 30 }, (_, i) => message(`msg_mine_${i}`, "acct", T0 - i));
  const theirs = Array.from({ length: 30 }, (_, i) => message(`msg_theirs_${i}`, "other", T0 + i));
  await commit.run(async (tx) => {
    for (const [i, m] of mine.entries()) {
      await stores.messages.insert(tx, m);
      await stores.messages.insert(tx, theirs[i]!);
    }
  });

  const pages: string[][] = [];
  let after: number | null = null;
  const statements = await capture(db, () =>
    commit.run(async (tx) => {
      for (;;) {
        const page = await stores.messages.find(tx, "acct", {}, after, 8);
        if (page.length === 0) break;
        pages.push(page.map((m) => m.id));
        after = page.at(-1)!.seq;
      }
    }),
  );
  expect(pages.flat()).toEqual(mine.map((m) => m.id));
  expect(statements.length).toBeGreaterThan(1);
  for (const { sql, params } of statements) {
    const detail = plan(db, sql, params);
    expect(detail).toContain("messages_account");
    expect(detail).not.toContain("TEMP B-TREE");
  }
});
