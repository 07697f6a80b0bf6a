/**
 * The SQLite engine stores a message's body once (src/engines/sqlite/bodies.ts): the message row and its
 * CREATED log entry refer to one row. The body must reach the receiver and the log byte for byte,
 * outlive whichever of its two holders goes first, and go with the last one.
 */
import { expect, test } from "bun:test";
import { ManualClock } from "../../src/core/clock.ts";
import { checkConsistency } from "../helpers/consistency.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const DAY = 24 * 3600 * 1000;
/** Every byte value, a few times: what a binary body can hold. */
const BODY = Uint8Array.from({ length: 1500 }, (_, i) => (i * 7) % 256);

const count = (s: TestServer, sql: string) => s.db.query<{ n: number }, []>(sql).get()!.n;
const bodiesStored = (s: TestServer) => count(s, "SELECT COUNT(*) AS n FROM message_bodies");
const loggedBody = async (s: TestServer, messageId: string) => {
  const { logs } = (await (await s.api(`/v2/logs?messageId=${messageId}`)).json()) as { logs: Array<{ state: string; body?: string }> };
  const created = logs.find((l) => l.state === "CREATED");
  return created?.body === undefined ? undefined : new Uint8Array(Buffer.from(created.body, "base64"));
};
const publish = async (s: TestServer, path: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) => {
  const res = await s.api(path, { method: "POST", body, headers: { "content-type": "application/octet-stream", ...headers } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
};

test("one copy of the body: delivered and logged whole, kept after delivery while the log needs it, dropped with the log entry", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const s = await startTestServer({ clock });
  const rx = await startReceiver();
  try {
    const id = await publish(s, `/v2/publish/${rx.url}/once`, BODY);
    await rx.waitFor(1);
    expect(rx.received[0]!.body).toEqual(BODY);
    await waitUntil(() => count(s, `SELECT COUNT(*) AS n FROM events WHERE message_id = '${id}' AND state = 'DELIVERED'`) === 1, { what: "the delivery recorded" });

    // Stored once: the log entry refers to the body, it does not copy it.
    expect(bodiesStored(s)).toBe(1);
    const created = s.db.query<{ body: Uint8Array | null; shared_body: number | null }, [string]>(
      "SELECT body, shared_body FROM events WHERE message_id = ? AND state = 'CREATED'",
    ).get(id)!;
    expect(created.body).toBeNull();
    expect(created.shared_body).not.toBeNull();
    // The message has ended, its log entry still shows the body.
    expect(await loggedBody(s, id)).toEqual(BODY);
    expect(checkConsistency(s.db)).toEqual([]);

    // Past the log's retention (payg: 7 days) the entry goes, and the body with it.
    clock.advanceTo(clock.now() + 7 * DAY + 11 * 60 * 1000);
    await waitUntil(() => bodiesStored(s) === 0, { what: "the body dropped with its log entry" });
    expect(await loggedBody(s, id)).toBeUndefined();
    expect(checkConsistency(s.db)).toEqual([]);
  } finally {
    rx.stop();
    await s.stop();
  }
});

test("a message that outlives its log entries keeps its body, delivers it whole, and the body goes when it ends", async () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const s = await startTestServer({ clock });
  const rx = await startReceiver();
  try {
    expect((await s.api("/v2/queues", { method: "POST", body: JSON.stringify({ queueName: "held", paused: true }), headers: { "content-type": "application/json" } })).status).toBe(200);
    const id = await publish(s, `/v2/enqueue/held/${rx.url}/late`, BODY);
    clock.advanceTo(clock.now() + 7 * DAY + 11 * 60 * 1000);
    await waitUntil(async () => (await loggedBody(s, id)) === undefined, { what: "the CREATED entry pruned" });
    // The paused queue still holds the message, and the message now holds its body alone.
    expect(s.db.query<{ body_alone: number }, [string]>("SELECT body_alone FROM messages WHERE id = ?").get(id)?.body_alone).toBe(1);
    expect(bodiesStored(s)).toBe(1);
    expect(checkConsistency(s.db)).toEqual([]);

    expect((await s.api("/v2/queues/held/resume", { method: "POST" })).status).toBe(200);
    await rx.waitFor(1);
    expect(rx.received[0]!.body).toEqual(BODY);
    await waitUntil(() => bodiesStored(s) === 0, { what: "the body dropped with its message" });
    expect(checkConsistency(s.db)).toEqual([]);
  } finally {
    rx.stop();
    await s.stop();
  }
});

test("a URL Group's messages, a small body kept inline, and an account reset leave no body behind", async () => {
  const s = await startTestServer();
  const rx = await startReceiver();
  try {
    const endpoints = [{ url: `${rx.url}/a` }, { url: `${rx.url}/b` }];
    expect((await s.api("/v2/topics/pair/endpoints", { method: "POST", body: JSON.stringify({ endpoints }), headers: { "content-type": "application/json" } })).status).toBe(200);
    await publish(s, "/v2/publish/pair", BODY, { "Svc-Delay": "1h" });
    const small = await publish(s, `/v2/publish/${rx.url}/small`, new TextEncoder().encode("tiny"), { "Svc-Delay": "1h" });
    // One body per message of the group; the small one stays in its rows.
    expect(bodiesStored(s)).toBe(2);
    const row = s.db.query<{ body: Uint8Array; shared_body: number | null }, [string]>("SELECT body, shared_body FROM messages WHERE id = ?").get(small)!;
    expect(row.shared_body).toBeNull();
    expect(new TextDecoder().decode(row.body)).toBe("tiny");
    expect(checkConsistency(s.db)).toEqual([]);

    expect((await s.api("/__svc/reset", { method: "POST" })).status).toBe(200);
    expect(bodiesStored(s)).toBe(0);
    expect(checkConsistency(s.db)).toEqual([]);
  } finally {
    rx.stop();
    await s.stop();
  }
});
