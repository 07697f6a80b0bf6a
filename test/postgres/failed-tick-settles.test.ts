import { expect, test } from "bun:test";
import { SQL } from "bun";
import { freshDatabase, openTestEngine } from "../helpers/postgres.ts";

/**
 * A tick that fails in a way that leaves open whether it committed (here its COMMIT is refused; a
 * connection cut while the COMMIT was on its way looks the same to the node) leaves the node
 * something to settle: claims it may hold with no attempt behind them. Until a later tick has
 * settled them, the node is not idle: its pending writes count that settlement, so the test
 * double's flush and time control, and a test waiting for the engine to be idle, wait for it.
 */

const T0 = 1_800_000_000_000;

test("a tick whose COMMIT failed leaves its settlement pending until a later tick has done it", async () => {
  const url = await freshDatabase();
  const storage = await openTestEngine(url, T0, 10_000);
  const outside = new SQL(url);
  try {
    // The first COMMIT that inserted a queue fails (a deferred trigger runs at COMMIT); a sequence,
    // which no rollback undoes, lets every later one through.
    await outside.unsafe(`
      CREATE SEQUENCE fail_once;
      CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF nextval('fail_once') = 1 THEN RAISE EXCEPTION 'refused at COMMIT by the test'; END IF; RETURN NEW; END $$;
      CREATE CONSTRAINT TRIGGER fail_once AFTER INSERT ON queues DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW EXECUTE FUNCTION fail_once();`);
    const { queues } = storage.stores;
    const upsert = (name: string) =>
      storage.commit.run((tx) => queues.upsert(tx, "acct", name, {}, { parallelism: 1, paused: false }, T0));

    await expect(upsert("first")).rejects.toThrow();
    expect(storage.commit.counts.failedCommits).toBe(1);
    // Nothing is queued or in flight, yet the node is not idle: the failed tick's settlement waits.
    expect(storage.commit.pendingWrites).toBe(1);

    // The next tick settles it before its own writes.
    await upsert("second");
    expect(storage.commit.pendingWrites).toBe(0);
  } finally {
    await outside.close();
    await storage.close();
  }
}, 30_000);
