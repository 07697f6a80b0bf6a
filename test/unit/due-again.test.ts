import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { dueAgainState, dueAgainStateSql } from "../../src/model/message.ts";

describe("a message due again", () => {
  test("is CREATED until it was retried, then RETRY", () => {
    expect([0, 1, 7].map(dueAgainState)).toEqual(["CREATED", "RETRY", "RETRY"]);
  });

  test("the SQL fragment answers as the function does, with and without the row's name", () => {
    const db = new Database(":memory:");
    db.run("CREATE TABLE messages (id INTEGER PRIMARY KEY, retried INTEGER NOT NULL)");
    for (const n of [0, 1, 7]) db.run("INSERT INTO messages (retried) VALUES (?)", [n]);
    const plain = db.query<{ s: string }, []>(`SELECT ${dueAgainStateSql()} AS s FROM messages ORDER BY id`).all();
    const named = db.query<{ s: string }, []>(`SELECT ${dueAgainStateSql("m")} AS s FROM messages m ORDER BY id`).all();
    const expected = [0, 1, 7].map(dueAgainState);
    expect(plain.map((r) => r.s)).toEqual(expected);
    expect(named.map((r) => r.s)).toEqual(expected);
    db.close();
  });
});
