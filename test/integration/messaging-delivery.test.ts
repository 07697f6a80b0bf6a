import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifySignature } from "../../src/signing/verify.js";
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
    const t0 = Date.now();
    const { body } = await publish(`${rx.url}/later`, { body: "d", headers: { "Svc-Delay": "1s" } });
    const pending = (await (await s.api(`/v2/messages/${body.messageId}`)).json()) as Record<string, unknown>;
    expect(pending.messageId).toBe(body.messageId);
    expect(pending.notBefore as number).toBeGreaterThanOrEqual(t0 + 1000);
    expect(pending.body).toBe("d");
    const [got] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === body.messageId });
    expect(got!.receivedAt - t0).toBeGreaterThanOrEqual(990);
    // The attempt started at its time, by the server's clock; not a whole delay later (the delay
    // counted twice). How long the request then took to arrive depends on the machine's load.
    const { outcome } = await events.of("delivered", body.messageId);
    expect(outcome.startedAt).toBeGreaterThanOrEqual(pending.notBefore as number);
    expect(outcome.startedAt - (pending.notBefore as number)).toBeLessThan(1000);

    const notBefore = Math.ceil(Date.now() / 1000) + 1;
    const nb = await publish(`${rx.url}/nb`, { body: "n", headers: { "Svc-Not-Before": String(notBefore), "Svc-Delay": "1h" } });
    const [arrived] = await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === nb.body.messageId });
    expect(arrived!.receivedAt).toBeGreaterThanOrEqual(notBefore * 1000 - 5);
  });

  test("cancelling a delayed message prevents its delivery", async () => {
    const { body } = await publish(`${rx.url}/cancelled`, { body: "c", headers: { "Svc-Delay": "1s" } });
    const del = await s.api(`/v2/messages/${body.messageId}`, { method: "DELETE" });
    expect(await del.json()).toEqual({ cancelled: 1 });
    expect((await s.api(`/v2/messages/${body.messageId}`)).status).toBe(404);
    expect((await s.api(`/v2/messages/${body.messageId}`, { method: "DELETE" })).status).toBe(404);
    // A later message to the same receiver arrives; the cancelled one never does.
    const { body: after } = await publish(`${rx.url}/cancelled`, { body: "after", headers: { "Svc-Delay": "1s" } });
    await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === after.messageId, timeoutMs: 5000 });
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
