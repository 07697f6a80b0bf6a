import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifySignature } from "../../src/signing/verify.js";
import { advance, flush } from "../helpers/control.ts";
import { recordEvents } from "../helpers/events.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer();
  events = recordEvents(s);
  rx = await startReceiver();
});
afterAll(async () => {
  events.stop();
  rx.stop();
  await s.stop();
});

let events: ReturnType<typeof recordEvents>;
const keys = () => ({ current: s.ctx.accounts.all()[0]!.currentSigningKey, next: s.ctx.accounts.all()[0]!.nextSigningKey });

async function publish(path: string, init: RequestInit = {}) {
  const res = await s.api(`/v2/publish/${path}`, { method: "POST", ...init });
  const body = await res.json();
  return { status: res.status, body: body as { messageId: string; url: string; error?: string } };
}

describe("publish and deliver", () => {
  test("delivers method, body bytes, Content-Type, forwarded and delivery headers, signed", async () => {
    const { status, body } = await publish(`${rx.url}/orders?x=1&y=two`, {
      body: JSON.stringify({ hello: "world" }),
      headers: { "content-type": "application/json", "Svc-Method": "PUT", "Svc-Forward-X-Trace": "abc", "X-Not-Forwarded": "nope" },
    });
    expect(status).toBe(200);
    expect(body.messageId).toMatch(/^msg_/);
    expect(body.url).toBe(`${rx.url}/orders?x=1&y=two`);
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    expect(got!.method).toBe("PUT");
    expect(got!.path).toBe("/orders?x=1&y=two");
    expect(got!.text).toBe('{"hello":"world"}');
    expect(got!.headers.get("content-type")).toBe("application/json");
    expect(got!.headers.get("x-trace")).toBe("abc");
    expect(got!.headers.get("x-not-forwarded")).toBeNull();
    expect(got!.headers.get("user-agent")).toBe("Svc");
    expect(got!.headers.get("svc-retried")).toBe("0");
    expect(got!.headers.get("svc-caller-ip")).toBe("127.0.0.1");
    const signature = got!.headers.get("svc-signature")!;
    const ok = await verifySignature({ signature, body: got!.body, currentSigningKey: keys().current, nextSigningKey: keys().next, url: got!.url });
    expect(ok.ok).toBe(true);
    const wrong = await verifySignature({ signature, body: got!.body, currentSigningKey: "sig_wrong", nextSigningKey: "sig_wrong2" });
    expect(wrong.ok).toBe(false);
  });

  test("non-utf8 body bytes arrive unchanged", async () => {
    const bytes = new Uint8Array([0, 255, 254, 1, 128, 10, 13, 0]);
    const { body } = await publish(`${rx.url}/bin`, { body: bytes, headers: { "content-type": "application/octet-stream" } });
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    expect([...got!.body]).toEqual([...bytes]);
  });

  test("configuration as lowercase query parameters; config keys are not forwarded", async () => {
    const { body } = await publish(`${rx.url}/q?keep=1&svc-method=PATCH&svc-forward-x-q=fromquery&svc-retries=0`, { body: "q" });
    expect(body.url).toBe(`${rx.url}/q?keep=1`);
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    expect(got!.method).toBe("PATCH");
    expect(got!.path).toBe("/q?keep=1");
    expect(got!.headers.get("x-q")).toBe("fromquery");
  });

  test("Svc-Header-Forward: true forwards incoming headers except credentials and Svc-*", async () => {
    const { body } = await publish(`${rx.url}/fwd`, { body: "f", headers: { "Svc-Header-Forward": "true", "X-Custom": "yes", "Svc-Retries": "1" } });
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    expect(got!.headers.get("x-custom")).toBe("yes");
    expect(got!.headers.get("authorization")).toBeNull();
    expect(got!.headers.get("svc-retries")).toBeNull();
  });

  test("delay and Svc-Not-Before are honoured; the message is visible while pending", async () => {
    // On a manual clock: the attempt starts at its instant, not a millisecond before, and not a
    // whole delay later (the delay counted twice); the machine's speed decides nothing.
    const m = await startTestServer({ config: { clock: "manual" } });
    const mEvents = recordEvents(m);
    try {
      const t0 = ((await (await m.api("/__svc/clock")).json()) as { now: number }).now;
      const res = await m.api(`/v2/publish/${rx.url}/later`, { method: "POST", body: "d", headers: { "Svc-Delay": "1s" } });
      const { messageId } = (await res.json()) as { messageId: string };
      const pending = (await (await m.api(`/v2/messages/${messageId}`)).json()) as Record<string, unknown>;
      expect(pending.messageId).toBe(messageId);
      expect(pending.notBefore).toBe(t0 + 1000);
      expect(pending.body).toBe("d");
      const arrived = (id: string) => rx.received.filter((r) => r.headers.get("svc-message-id") === id);
      await flush(m.api);
      await advance(m.api, { ms: 999 }, { flush: true });
      expect(arrived(messageId)).toHaveLength(0);
      await advance(m.api, { ms: 1 }, { flush: true });
      expect(arrived(messageId)).toHaveLength(1);
      expect((await mEvents.of("delivered", messageId)).outcome.startedAt).toBe(t0 + 1000);

      // Svc-Not-Before (Unix seconds) wins over Svc-Delay.
      const notBefore = Math.ceil((t0 + 1000) / 1000) + 1;
      const nbRes = await m.api(`/v2/publish/${rx.url}/nb`, {
        method: "POST",
        body: "n",
        headers: { "Svc-Not-Before": String(notBefore), "Svc-Delay": "1h" },
      });
      const nb = ((await nbRes.json()) as { messageId: string }).messageId;
      await advance(m.api, { to: notBefore * 1000 - 1 }, { flush: true });
      expect(arrived(nb)).toHaveLength(0);
      await advance(m.api, { ms: 1 }, { flush: true });
      expect(arrived(nb)).toHaveLength(1);
      expect((await mEvents.of("delivered", nb)).outcome.startedAt).toBe(notBefore * 1000);
    } finally {
      mEvents.stop();
      await m.stop();
    }
  });

  test("cancelling a delayed message prevents its delivery", async () => {
    const { body } = await publish(`${rx.url}/cancelled`, { body: "c", headers: { "Svc-Delay": "1s" } });
    const del = await s.api(`/v2/messages/${body.messageId}`, { method: "DELETE" });
    expect(await del.json()).toEqual({ cancelled: 1 });
    expect((await s.api(`/v2/messages/${body.messageId}`)).status).toBe(404);
    expect((await s.api(`/v2/messages/${body.messageId}`, { method: "DELETE" })).status).toBe(404);
    // A later message to the same receiver arrives; the cancelled one never does.
    const { body: after } = await publish(`${rx.url}/cancelled`, { body: "after", headers: { "Svc-Delay": "1s" } });
    await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === after.messageId });
    expect(rx.received.some((r) => r.headers.get("svc-message-id") === body.messageId)).toBe(false);
    const logs = (await (await s.api(`/v2/logs?messageId=${body.messageId}`)).json()) as { logs: Array<{ state: string }> };
    expect(logs.logs.map((l) => l.state).reverse()).toEqual(["CREATED", "CANCEL_REQUESTED", "CANCELED"]);
  });

  test("bulk cancel by filter", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await publish(`${rx.url}/bulk`, { body: "b", headers: { "Svc-Delay": "1h", "Svc-Label": "bulk-label" } })).body.messageId);
    const res = await s.api("/v2/messages", { method: "DELETE", body: JSON.stringify({ label: "bulk-label" }), headers: { "content-type": "application/json" } });
    expect(await res.json()).toEqual({ cancelled: 3 });
    for (const id of ids) expect((await s.api(`/v2/messages/${id}`)).status).toBe(404);
  });

  test("keys rotate: the next key becomes current and signs deliveries", async () => {
    const before = keys();
    const rotated = (await (await s.api("/v2/keys/rotate", { method: "POST" })).json()) as { current: string; next: string };
    expect(rotated.current).toBe(before.next);
    expect(rotated.next).not.toBe(before.next);
    const { body } = await publish(`${rx.url}/rotated`, { body: "r" });
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    const sig = got!.headers.get("svc-signature")!;
    expect((await verifySignature({ signature: sig, body: got!.body, currentSigningKey: rotated.current, nextSigningKey: rotated.next })).ok).toBe(true);
    expect((await verifySignature({ signature: sig, body: got!.body, currentSigningKey: before.current, nextSigningKey: "sig_x" })).ok).toBe(false);
  });
});
