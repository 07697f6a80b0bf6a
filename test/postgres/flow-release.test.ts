import { expect, test } from "bun:test";
import { SQL } from "bun";
import { messageRecord } from "../helpers/message-record.ts";
import { freshDatabase, openTestEngine } from "../helpers/postgres.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * Two transactions in flight at once (two ticks of one node, or two nodes) each release one held
 * message of the same flow-control key, as two deliveries of the key end: two different messages
 * go, never the same one twice. (Releasing the same one twice made it due again after a claim had
 * taken it: delivered twice.)
 */

const T0 = 1_800_000_000_000;

test("two ticks in flight that release one held message of a key each release two different ones", async () => {
  const url = await freshDatabase();
  const storage = await openTestEngine(url, T0, 2000);
  const outside = new SQL(url);
  try {
    const flow = { key: "k", parallelism: 1, periodMs: 1000 };
    const held = Array.from({ length: 3 }, (_, i) =>
      messageRecord({ id: `msg_held_${i}`, accountId: "acct", createdAt: T0 + i, dispatchAt: T0 + i, flow }),
    );
    await storage.commit.run(async (tx) => {
      for (const m of held) {
        await storage.stores.messages.insert(tx, m);
        await storage.stores.flow.hold(tx, m.id);
      }
    });
    const waiting = async () => {
      const [row] = await outside<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      return row!.n;
    };
    // The oldest held row is locked from outside, so that the first release waits with its snapshot taken.
    const locker = await outside.reserve();
    await locker`BEGIN`;
    await locker`SELECT 1 FROM messages WHERE id = 'msg_held_0' FOR UPDATE`;
    const release = () => storage.commit.run((tx) => storage.stores.flow.releaseHeld(tx, "acct", "k", 1, T0 + 10));
    const first = release();
    await waitUntil(async () => (await waiting()) === 1);
    const second = release();
    await waitUntil(async () => (await waiting()) === 2);
    await locker`COMMIT`;
    locker.release();
    await Promise.all([first, second]);

    const rows = await outside<{ id: string; state: string }[]>`SELECT id, state FROM messages ORDER BY id`;
    expect(rows.map((r) => `${r.id} ${r.state}`)).toEqual(["msg_held_0 CREATED", "msg_held_1 CREATED", "msg_held_2 HELD"]);
  } finally {
    await outside.close();
    await storage.close();
  }
}, 30_000);
