/**
 * A message due at once, published while the dispatcher has caught up, is claimed in the write that
 * stores it (Dispatcher.claimOnInsert): decided before its row is written, the row written already
 * claimed, its log CREATED then ACTIVE. A write that fails after that decision must leave nothing
 * claimed: neither a row nor an attempt in memory nor a delivery.
 */
import { expect, test } from "bun:test";
import type { MessageListener } from "../../src/model/events.ts";
import type { MessageRecord } from "../../src/model/message.ts";
import { checkConsistency } from "../helpers/consistency.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const publish = (s: TestServer, to: string, body = "x") => s.api(`/v2/publish/${to}`, { method: "POST", body });
const idOf = async (res: Response) => {
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
};
/** The log of a message, oldest first. */
const states = async (s: TestServer, id: string) => {
  const { logs } = (await (await s.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Array<{ state: string }> };
  return logs.map((l) => l.state).reverse();
};
/** A delivered message first: the dispatcher's first claim pass has run and found every due message. */
async function caughtUp(s: TestServer, rx: Receiver) {
  const id = await idOf(await publish(s, `${rx.url}/warm-up`));
  await waitUntil(async () => (await states(s, id)).includes("DELIVERED"), { what: "the warm-up delivered" });
}

test("a message due at publish is written claimed: one INSERT of an ACTIVE row, its log CREATED, ACTIVE, DELIVERED", async () => {
  const s = await startTestServer();
  const rx = await startReceiver();
  try {
    await caughtUp(s, rx);
    const sqlite = s.server.storage.kind === "sqlite";
    if (sqlite) {
      // What each write did to the message rows, seen from inside the server's own connection.
      s.db.run(`CREATE TEMP TABLE row_writes (what TEXT, id TEXT, state TEXT, dispatch_at INTEGER)`);
      s.db.run(`CREATE TEMP TRIGGER row_inserted AFTER INSERT ON main.messages
        BEGIN INSERT INTO row_writes VALUES ('insert', NEW.id, NEW.state, NEW.dispatch_at); END`);
      s.db.run(`CREATE TEMP TRIGGER row_updated AFTER UPDATE ON main.messages
        BEGIN INSERT INTO row_writes VALUES ('update', NEW.id, NEW.state, NEW.dispatch_at); END`);
    }
    const id = await idOf(await publish(s, `${rx.url}/now`, "claimed at once"));
    await waitUntil(async () => (await states(s, id)).includes("DELIVERED"), { what: "the message delivered" });
    expect(await states(s, id)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
    expect(rx.received.filter((r) => r.path === "/now").map((r) => r.text)).toEqual(["claimed at once"]);
    if (sqlite) {
      const writes = s.db.query("SELECT what, state, dispatch_at FROM row_writes WHERE id = ?").all(id);
      // Never due: no entry in the due index for the claim's UPDATE to take out again.
      expect(writes).toEqual([{ what: "insert", state: "ACTIVE", dispatch_at: null }]);
      expect(checkConsistency(s.db)).toEqual([]);
    }
  } finally {
    rx.stop();
    await s.stop();
  }
});

test("a publish whose write fails after the claim was decided leaves nothing claimed, stored or delivered", async () => {
  const seen: MessageRecord[] = [];
  const claimed: string[] = [];
  // A bug in a listener, once the message is claimed (its `claimed` event) or while its neighbour
  // in the same write is created: the whole write is rolled back.
  const poison: MessageListener = {
    created: ({ message: m }) => {
      seen.push(m);
      if (m.url.endsWith("/poison-created")) throw new Error("boom at created");
    },
    claimed: ({ message: m }) => {
      claimed.push(m.url.slice(m.url.lastIndexOf("/")));
      if (m.url.endsWith("/poison-claimed")) throw new Error("boom at claimed");
    },
  };
  const s = await startTestServer({ messageListeners: [poison] });
  const rx = await startReceiver();
  try {
    await caughtUp(s, rx);
    seen.length = 0;
    claimed.length = 0;
    // A URL Group: its first endpoint is claimed as it is stored, then the second one's write fails.
    const endpoints = [{ url: `${rx.url}/first` }, { url: `${rx.url}/poison-created` }];
    const res = await s.api(`/v2/topics/pair/endpoints`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ endpoints }),
    });
    expect(res.status).toBe(200);
    expect((await publish(s, "pair")).status).toBe(500);
    expect((await publish(s, `${rx.url}/poison-claimed`)).status).toBe(500);
    const failed = [...seen];
    expect(failed.map((m) => m.url.slice(rx.url.length))).toEqual(["/first", "/poison-created", "/poison-claimed"]);
    // The first endpoint's message was taken by the dispatcher before its write failed; its record
    // says CREATED again, as its row was never stored.
    expect(claimed).toEqual(["/first", "/poison-claimed"]);
    expect(failed[0]!.state).toBe("CREATED");

    // Delivery goes on: a message published next arrives, and it is the only one since the failures.
    const after = await idOf(await publish(s, `${rx.url}/after`));
    await waitUntil(async () => (await states(s, after)).includes("DELIVERED"), { what: "the next message delivered" });
    expect(rx.received.map((r) => r.path).filter((p) => p !== "/warm-up")).toEqual(["/after"]);
    for (const m of failed) {
      expect(s.server.messaging.dispatcher.isInFlight(m.id)).toBe(false);
      expect((await s.api(`/v2/messages/${m.id}`)).status).toBe(404);
      expect(await states(s, m.id)).toEqual([]);
    }
    // No attempt ever started for them: the two handed to a worker are the warm-up and the last one.
    await s.server.messaging.probe.whenIdle();
    expect(s.server.messaging.probe.dispatchedCount).toBe(2);
    expect(s.server.messaging.probe.inFlightCount).toBe(0);
    if (s.server.storage.kind === "sqlite") expect(checkConsistency(s.db)).toEqual([]);
  } finally {
    rx.stop();
    await s.stop();
  }
});
