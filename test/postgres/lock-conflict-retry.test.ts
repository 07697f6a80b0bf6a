import { expect, test } from "bun:test";
import { SQL } from "bun";
import { freshDatabase, openTestEngine } from "../helpers/postgres.ts";

/**
 * A statement a tick runs for all its writes (a queue's promotion) waits for a row held from
 * outside until `lock_timeout`: the tick fails, and its writes run again each in a tick of its own.
 * The write that asked for the promotion keeps waiting for the row; the one beside it, which needs
 * nothing held, is stored at its first run again, beside the other's. (Run again together, both
 * met the same wait five times and both were refused.)
 */

const T0 = 1_800_000_000_000;

test("a write beside one whose promotion waits for a held row is stored while the row is still held", async () => {
  const url = await freshDatabase();
  const storage = await openTestEngine(url, T0, 10_000);
  const outside = new SQL(url);
  const locker = await outside.reserve();
  try {
    const { queues } = storage.stores;
    await storage.commit.run((tx) => queues.upsert(tx, "acct", "held", {}, { parallelism: 1, paused: false }, T0));
    await locker`BEGIN`;
    await locker`SELECT 1 FROM queues WHERE name = 'held' FOR UPDATE`;

    let promoted = false;
    // Both asked for in the same turn of the event loop: one tick.
    const promotion = storage.commit.run((tx) => queues.promote(tx, "acct", "held", 1, T0)).then((n) => (promoted = true, n));
    const beside = storage.commit.run(async () => "stored");
    expect(await beside).toBe("stored");
    expect(promoted).toBe(false);
    // Stored before the promotion's second wait ran out: its tick did not wait for that one (a tick
    // PostgreSQL refused leaves no claims to settle, so the node's ticks need not run one at a time).
    expect(storage.commit.counts.retriedWrites).toBe(2);

    await locker`COMMIT`;
    expect(await promotion).toBe(1);
  } finally {
    locker.release();
    await outside.close();
    await storage.close();
  }
}, 30_000);
