import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { recordEvents } from "../helpers/events.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/** Each test gets its own path on one receiver; the handler answers by path and attempt. */
let s: TestServer;
let fast: TestServer;
let rx: Receiver;
const plans = new Map<string, (attempt: number) => Response | Promise<Response>>();
const attempts = new Map<string, number>();

let events: ReturnType<typeof recordEvents>;

beforeAll(async () => {
  s = await startTestServer();
  events = recordEvents(s);
  fast = await startTestServer({ config: { retryDelayScale: 0.001 } });
  rx = await startReceiver((req) => {
    const path = new URL(req.url).pathname;
    const n = attempts.get(path) ?? 0;
    attempts.set(path, n + 1);
    return plans.get(path)?.(n) ?? new Response("ok");
  });
});
afterAll(async () => {
  events.stop();
  rx.stop();
  await Promise.all([s.stop(), fast.stop()]);
});

const at = (path: string) => rx.received.filter((r) => new URL(r.url).pathname === path);

async function publish(server: TestServer, path: string, headers: Record<string, string> = {}, body = "payload") {
  const res = await server.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}

async function dlqFor(server: TestServer, messageId: string) {
  return waitUntil(async () => {
    const list = (await (await server.api(`/v2/dlq?messageId=${messageId}`)).json()) as { messages: Array<Record<string, any>> };
    return list.messages[0];
  }, { what: `DLQ entry of ${messageId}` });
}

describe("retries", () => {
  test("500, 500, 200 → delivered on the third attempt with Svc-Retried 0, 1, 2", async () => {
    plans.set("/flaky", (n) => new Response("x", { status: n < 2 ? 500 : 200 }));
    const id = await publish(fast, "/flaky", { "Svc-Retries": "3" });
    await waitUntil(() => at("/flaky").length >= 3, { what: "3 attempts" });
    expect(at("/flaky").map((r) => r.headers.get("svc-retried"))).toEqual(["0", "1", "2"]);
    const logs = await waitUntil(async () => {
      const body = (await (await fast.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Array<{ state: string }> };
      return body.logs[0]?.state === "DELIVERED" ? body.logs : undefined;
    });
    expect(logs.map((l) => l.state).reverse()).toEqual([
      "CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED",
    ]);
  });

  /**
   * The delays the server set between the attempts (each failed attempt's retry time after the
   * moment it was recorded), and that each next attempt started no earlier. Arrival times at the
   * receiver would add however long a loaded machine takes to carry each request.
   */
  async function retryDelaysOf(messageId: string) {
    const delivered = await events.of("delivered", messageId, 15_000);
    const retries = events.all("retried").filter((e) => e.message.id === messageId);
    const nextStarts = [...retries.slice(1).map((e) => e.outcome.startedAt), delivered.outcome.startedAt];
    retries.forEach((e, i) => expect(nextStarts[i]!).toBeGreaterThanOrEqual(e.nextDeliveryAt));
    return retries.map((e) => e.nextDeliveryAt - e.atMs);
  }

  test("a custom Svc-Retry-Delay expression is followed", async () => {
    plans.set("/expr", (n) => new Response("x", { status: n < 2 ? 500 : 200 }));
    const id = await publish(s, "/expr", { "Svc-Retries": "2", "Svc-Retry-Delay": "300 * (retried + 1)" });
    expect(await retryDelaysOf(id)).toEqual([300, 600]);
    expect(at("/expr")).toHaveLength(3);
  });

  test("Retry-After from the receiver sets the next attempt", async () => {
    plans.set("/retry-after", (n) => (n === 0 ? new Response("slow down", { status: 429, headers: { "Retry-After": "1" } }) : new Response("ok")));
    const id = await publish(s, "/retry-after", { "Svc-Retries": "1" });
    // Not the default backoff (12 s).
    expect(await retryDelaysOf(id)).toEqual([1000]);
    expect(at("/retry-after")).toHaveLength(2);
  });

  test("a timeout counts as a failure", async () => {
    // The receiver answers only once the attempt is in the DLQ: the timeout came first, whatever the load.
    let answer!: () => void;
    const dlqReached = new Promise<void>((resolve) => (answer = resolve));
    plans.set("/slow", async () => {
      await dlqReached;
      return new Response("late");
    });
    const id = await publish(fast, "/slow", { "Svc-Retries": "0", "Svc-Timeout": "1s" });
    const entry = await dlqFor(fast, id).finally(answer);
    // No HTTP answer: responseStatus is 0 (clients require the field) and the reason is in error.
    expect(entry.responseStatus).toBe(0);
    expect(entry.error).toContain("timeout");
    const logs = (await (await fast.api(`/v2/logs?messageId=${id}&state=FAILED`)).json()) as { logs: Array<{ error: string }> };
    expect(logs.logs[0]!.error).toContain("timeout");
  });

  test("connection refused counts as a failure", async () => {
    const res = await fast.api("/v2/publish/http://127.0.0.1:9/refused", { method: "POST", body: "x", headers: { "Svc-Retries": "1" } });
    const id = ((await res.json()) as { messageId: string }).messageId;
    await dlqFor(fast, id);
    const logs = (await (await fast.api(`/v2/logs?messageId=${id}&state=ERROR`)).json()) as { logs: Array<{ error: string }> };
    expect(logs.logs).toHaveLength(2);
    expect(logs.logs[0]!.error.length).toBeGreaterThan(0);
  });
});

describe("exhaustion, DLQ and callbacks", () => {
  test("retries exhausted → DLQ entry with every field, failure callback with dlqId, callback after each attempt", async () => {
    plans.set("/always-fails", () => new Response(JSON.stringify({ oops: true }), { status: 503, headers: { "content-type": "application/json", "x-resp": "r" } }));
    const id = await publish(fast, "/always-fails", {
      "Svc-Retries": "2",
      "Svc-Callback": `${rx.url}/cb`,
      "Svc-Failure-Callback": `${rx.url}/fcb`,
      "Svc-Failure-Callback-Forward-X-Fcb": "fcb-header",
      "Svc-Label": "lbl",
      "Svc-Forward-X-Src": "src",
      "content-type": "text/plain",
    }, "source body");
    const entry = await dlqFor(fast, id);
    expect(entry).toMatchObject({
      messageId: id,
      url: `${rx.url}/always-fails`,
      method: "POST",
      header: { "Content-Type": ["text/plain"], "X-Src": ["src"] },
      body: "source body",
      maxRetries: 2,
      callback: `${rx.url}/cb`,
      failureCallback: `${rx.url}/fcb`,
      callerIP: "127.0.0.1",
      label: "lbl",
      responseStatus: 503,
      responseBody: '{"oops":true}',
    });
    expect(entry.responseHeader["X-Resp"]).toEqual(["r"]);
    expect(entry.dlqId).toMatch(/^\d{13}-\d+$/);
    expect(typeof entry.notBefore).toBe("number");
    expect(typeof entry.createdAt).toBe("number");
    const single = (await (await fast.api(`/v2/dlq/${entry.dlqId}`)).json()) as Record<string, unknown>;
    expect(single).toEqual(entry);

    const callbacks = await rx.waitFor(3, { match: (r) => r.path === "/cb" });
    expect(callbacks.map((c) => JSON.parse(c.text).retried)).toEqual([0, 1, 2]);
    const [fcb] = await rx.waitFor(1, { match: (r) => r.path === "/fcb" });
    expect(fcb!.headers.get("x-fcb")).toBe("fcb-header");
    expect(fcb!.headers.get("content-type")).toBe("application/json");
    expect(fcb!.headers.get("svc-signature")).toBeTruthy();
    const payload = JSON.parse(fcb!.text);
    expect(Object.keys(payload).sort()).toEqual(
      ["status", "header", "body", "retried", "maxRetries", "dlqId", "sourceMessageId", "topicName", "endpointName", "url", "method", "sourceHeader", "sourceBody", "notBefore", "createdAt", "scheduleId", "callerIP"].sort(),
    );
    expect(payload).toMatchObject({
      status: 503,
      retried: 2,
      maxRetries: 2,
      dlqId: entry.dlqId,
      sourceMessageId: id,
      url: `${rx.url}/always-fails`,
      method: "POST",
      callerIP: "127.0.0.1",
      notBefore: String(entry.notBefore),
      createdAt: String(entry.createdAt),
    });
    expect(Buffer.from(payload.body, "base64").toString()).toBe('{"oops":true}');
    expect(Buffer.from(payload.sourceBody, "base64").toString()).toBe("source body");
    expect(payload.header["X-Resp"]).toEqual(["r"]);
    expect(payload.sourceHeader["X-Src"]).toEqual(["src"]);
  });

  test("489 with NonRetryable-Error goes straight to the DLQ", async () => {
    plans.set("/fatal", () => new Response("no", { status: 489, headers: { "Svc-NonRetryable-Error": "true" } }));
    const id = await publish(fast, "/fatal", { "Svc-Retries": "3" });
    const entry = await dlqFor(fast, id);
    expect(entry.responseStatus).toBe(489);
    expect(at("/fatal")).toHaveLength(1);
  });

  test("non-utf8 response bodies are kept as base64", async () => {
    plans.set("/binary-fail", () => new Response(new Uint8Array([0xff, 0x00, 0xfe]), { status: 500 }));
    const id = await publish(fast, "/binary-fail", { "Svc-Retries": "0" });
    const entry = await dlqFor(fast, id);
    expect(entry.responseBody).toBeUndefined();
    expect(entry.responseBodyBase64).toBe(Buffer.from([0xff, 0x00, 0xfe]).toString("base64"));
  });

  test("DLQ retry re-delivers and removes the entry; delete removes one and many", async () => {
    let healthy = false;
    plans.set("/recover", () => new Response("", { status: healthy ? 200 : 500 }));
    const id = await publish(fast, "/recover", { "Svc-Retries": "0" });
    const entry = await dlqFor(fast, id);
    healthy = true;
    const retry = await fast.api(`/v2/dlq/retry/${entry.dlqId}`, { method: "POST" });
    expect(retry.status).toBe(201);
    const { messageId } = (await retry.json()) as { messageId: string };
    expect(messageId).not.toBe(id);
    await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === messageId });
    expect((await fast.api(`/v2/dlq/${entry.dlqId}`)).status).toBe(404);

    healthy = false;
    const ids = [await publish(fast, "/recover", { "Svc-Retries": "0" }), await publish(fast, "/recover", { "Svc-Retries": "0" }), await publish(fast, "/recover", { "Svc-Retries": "0" })];
    const entries = await Promise.all(ids.map((i) => dlqFor(fast, i)));
    const one = await fast.api(`/v2/dlq/${entries[0]!.dlqId}`, { method: "DELETE" });
    expect(one.status).toBe(200);
    expect((await fast.api(`/v2/dlq/${entries[0]!.dlqId}`, { method: "DELETE" })).status).toBe(404);
    const many = await fast.api("/v2/dlq", { method: "DELETE", body: JSON.stringify({ dlqIds: [entries[1]!.dlqId, entries[2]!.dlqId, "1-0"] }), headers: { "content-type": "application/json" } });
    expect(await many.json()).toEqual({ deleted: 2 });
  });

  test("DLQ list pages with a cursor, newest first; the last page has no cursor", async () => {
    plans.set("/page", () => new Response("", { status: 500 }));
    for (let i = 0; i < 5; i++) await publish(fast, "/page", { "Svc-Retries": "0", "Svc-Label": "paging" });
    await waitUntil(async () => ((await (await fast.api("/v2/dlq?label=paging")).json()) as { messages: unknown[] }).messages.length === 5);
    const first = (await (await fast.api("/v2/dlq?label=paging&count=3")).json()) as { cursor?: string; messages: Array<{ dlqId: string; createdAt: number }> };
    expect(first.messages).toHaveLength(3);
    expect(first.cursor).toBeDefined();
    const second = (await (await fast.api(`/v2/dlq?label=paging&count=3&cursor=${first.cursor}`)).json()) as { cursor?: string; messages: Array<{ dlqId: string }> };
    expect(second.messages).toHaveLength(2);
    expect("cursor" in second).toBe(false);
    const all = [...first.messages, ...second.messages].map((m) => m.dlqId);
    expect(new Set(all).size).toBe(5);
  });
});
