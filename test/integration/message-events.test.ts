import { afterAll, beforeAll, expect, test } from "bun:test";
import { recordEvents } from "../helpers/events.ts";
import { logsOf } from "../helpers/inspect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer({
    config: { retryDelayScale: 0 },
    // A listener bug on one message: its write fails after the event was emitted to the listeners.
    messageListeners: [
      {
        created: (e) => {
          if (e.message.url.endsWith("/refused-by-a-listener")) throw new Error("listener bug");
        },
      },
    ],
  });
  rx = await startReceiver((req) => new Response(req.path, { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const publish = async (path: string, headers: Record<string, string> = {}) => {
  const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
};

test("a delivered message with a callback: every transition is an event, in order, matching the log", async () => {
  const events = recordEvents(s);
  try {
    const id = await publish("/ok", { "Svc-Callback": `${rx.url}/callback` });
    const callback = await events.next((e) => e.type === "created" && e.kind === "callback");
    await events.next((e) => e.type === "delivered" && e.messageId === callback.messageId);

    const ofMessage = events.seen.filter((e) => e.messageId === id).map((e) => e.type);
    expect(ofMessage).toEqual(["created", "claimed", "delivered"]);
    const delivered = events.seen.find((e) => e.type === "delivered" && e.messageId === id)!.event as { outcome: { status?: number } };
    expect(delivered.outcome.status).toBe(200);
    // The callback is created in the write that records the delivery, after it.
    const order = events.seen.map((e) => `${e.type} ${e.messageId}`);
    expect(order.indexOf(`created ${callback.messageId}`)).toBeGreaterThan(order.indexOf(`delivered ${id}`));
    // Observers saw what the event log holds.
    expect((await logsOf(s, id)).map((l) => l.state)).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
  } finally {
    events.stop();
  }
});

test("a failing message: retried, then failed with the id of its DLQ entry", async () => {
  const events = recordEvents(s);
  try {
    const id = await publish("/fail", { "Svc-Retries": "1" });
    const failed = await events.next((e) => e.type === "failed" && e.messageId === id);
    expect(events.seen.filter((e) => e.messageId === id).map((e) => e.type)).toEqual([
      "created",
      "claimed",
      "retried",
      "claimed",
      "failed",
    ]);
    const { dlqId } = failed.event as { dlqId: string };
    const res = await s.api(`/v2/dlq/${dlqId}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { messageId: string }).messageId).toBe(id);
  } finally {
    events.stop();
  }
});

test("a cancelled message: created then cancelled, and nothing after", async () => {
  const events = recordEvents(s);
  try {
    const id = await publish("/later", { "Svc-Delay": "1h" });
    expect((await s.api(`/v2/messages/${id}`, { method: "DELETE" })).status).toBe(200);
    await events.next((e) => e.type === "cancelled" && e.messageId === id);
    expect(events.seen.filter((e) => e.messageId === id).map((e) => e.type)).toEqual(["created", "cancelled"]);
  } finally {
    events.stop();
  }
});

test("a write that fails after its event was emitted is never observed", async () => {
  const events = recordEvents(s);
  try {
    const res = await s.api(`/v2/publish/${rx.url}/refused-by-a-listener`, { method: "POST", body: "x" });
    expect(res.status).toBe(500);
    const ok = await publish("/ok-after");
    await events.next((e) => e.type === "created" && e.messageId === ok);
    expect(events.seen.filter((e) => e.event.message.url.endsWith("/refused-by-a-listener"))).toEqual([]);
  } finally {
    events.stop();
  }
});
