/**
 * Fidelity to today's hosted API (fidelity.md §8), driven by the official TypeScript client
 * `@upstash/qstash` against svcd in the `upstash` dialect: what the client sends is exactly what it
 * sends to the hosted service, and what it reads back must be there.
 */
import { Client, QstashError, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver as TestReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: TestReceiver;
let client: Client;

const only = (path: string) => rx.received.filter((r) => r.path === path);
const reset = async () => {
  expect((await s.api("/__svc/reset", { method: "POST" })).status).toBe(200);
  rx.received.length = 0;
};
/** The error the client throws for a refused request. */
const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (e: unknown) => e as QstashError);

beforeAll(async () => {
  s = await startTestServer({ config: { dialect: "upstash" } });
  rx = await startReceiver((req) => new Response(req.path.startsWith("/fail") ? "nope" : "ok", { status: req.path.startsWith("/fail") ? 500 : 200 }));
  client = new Client({ baseUrl: s.url, token: s.token, retry: false });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});
beforeEach(reset);

describe("URLs are kept exactly as given", () => {
  test("destination, callback and failure callback without a path read back and sign without a trailing slash", async () => {
    const bare = rx.url; // http://127.0.0.1:<port>, no path
    const withQuery = `${rx.url}?tenant=a`;
    const { messageId, url } = await client.publish({ url: withQuery, body: "x", delay: 3600, callback: bare, failureCallback: bare });
    expect(url).toBe(withQuery);
    const message = await client.messages.get(messageId);
    expect(message).toMatchObject({ url: withQuery, callback: bare, failureCallback: bare });
    const logs = await client.logs({ messageIds: [messageId] });
    expect(logs.logs.map((l) => l.url)).toEqual([withQuery]);

    // Delivered and signed for the URL as given: the Receiver checks `sub` against it byte for byte.
    const sent = await client.publish({ url: bare, body: "signed" });
    expect(sent.url).toBe(bare);
    await flush(s.api);
    const [delivery] = rx.received.filter((r) => r.headers.get("upstash-message-id") === sent.messageId);
    const keys = (await client.http.request({ method: "GET", path: ["v2", "keys"] })) as { current: string; next: string };
    const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    expect(await receiver.verify({ signature: delivery!.headers.get("upstash-signature")!, body: "signed", url: bare })).toBe(true);
    await expect(receiver.verify({ signature: delivery!.headers.get("upstash-signature")!, body: "signed", url: `${bare}/` })).rejects.toThrow();
  });

  test("URL Group endpoints and schedule destinations and callbacks read back exactly as given", async () => {
    await client.urlGroups.addEndpoints({ name: "exact", endpoints: [{ url: rx.url, name: "bare" }, { url: `${rx.url}?x=1` }] });
    const group = await client.urlGroups.get("exact");
    expect(group.endpoints.map((e) => e.url)).toEqual([rx.url, `${rx.url}?x=1`]);
    const published = (await client.publish({ urlGroup: "exact", body: "fan", delay: 3600 })) as unknown as Array<{ url: string }>;
    expect(published.map((p) => p.url)).toEqual([rx.url, `${rx.url}?x=1`]);
    // Removing by another spelling of the same URL still finds it.
    await client.urlGroups.removeEndpoints({ name: "exact", endpoints: [{ url: `${rx.url}/` }] });
    expect((await client.urlGroups.get("exact")).endpoints.map((e) => e.url)).toEqual([`${rx.url}?x=1`]);

    const { scheduleId } = await client.schedules.create({ destination: rx.url, cron: "0 0 * * *", callback: rx.url, failureCallback: `${rx.url}?f=1` });
    const schedule = await client.schedules.get(scheduleId);
    expect(schedule).toMatchObject({ destination: rx.url, callback: rx.url, failureCallback: `${rx.url}?f=1` });
  });
});

describe("several labels", () => {
  test("a label list reads back as label (the first) and labels (all, in order) on the message, its logs and its DLQ entry", async () => {
    const pending = await client.publish({ url: `${rx.url}/later`, body: "x", delay: 3600, label: ["billing", "eu"] });
    const message = await client.messages.get(pending.messageId);
    expect(message.label).toBe("billing");
    expect(message.labels).toEqual(["billing", "eu"]);
    const [created] = (await client.logs({ messageIds: [pending.messageId] })).logs;
    expect(created).toMatchObject({ state: "CREATED", label: "billing", labels: ["billing", "eu"] });

    const failed = await client.publish({ url: `${rx.url}/fail/labelled`, body: "x", retries: 0, label: ["billing", "us"] });
    await flush(s.api);
    const [entry] = (await client.dlq.listMessages({ filter: { label: "us" } })).messages;
    expect(entry).toMatchObject({ messageId: failed.messageId, label: "billing", labels: ["billing", "us"] });
    // The label filter matches any of a message's labels.
    const byLabel = await client.logs({ filter: { label: "eu", state: "CREATED" } });
    expect(byLabel.logs.map((l) => l.messageId)).toEqual([pending.messageId]);
    const schedule = await client.schedules.create({ destination: `${rx.url}/cron`, cron: "0 0 * * *", label: ["nightly", "reports"] });
    expect(await client.schedules.get(schedule.scheduleId)).toMatchObject({ label: "nightly", labels: ["nightly", "reports"] });
  });
});

describe("plan limits are 412, malformed values 400", () => {
  test("retries, delay and timeout above the plan answer 412 naming the limit; nothing is stored", async () => {
    for (const [request, header] of [
      [{ retries: 21 }, "Upstash-Retries"],
      [{ delay: "400d" }, "Upstash-Delay"],
      [{ timeout: "3h" }, "Upstash-Timeout"],
    ] as const) {
      const error = await refusal(client.publish({ url: `${rx.url}/over`, body: "x", ...request }));
      expect(error).toBeInstanceOf(QstashError);
      expect(error!.status).toBe(412);
      expect(JSON.parse(error!.message).error).toContain(header);
    }
    const malformed = await refusal(client.publish({ url: `${rx.url}/over`, body: "x", delay: "soon" as never }));
    expect(malformed!.status).toBe(400);
    expect((await client.logs()).logs).toEqual([]);
  });
});

describe("lenient where clients are sloppy", () => {
  test("null in a batch element means not set (as the Python client sends it)", async () => {
    const res = await s.api("/v2/batch", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify([
        { destination: `${rx.url}/null-fields`, headers: null, body: null, queue: null },
        { destination: `${rx.url}/null-queue`, body: "b", queue: null },
      ]),
    });
    expect(res.status).toBe(200);
    const answers = (await res.json()) as Array<{ messageId?: string; error?: string }>;
    expect(answers.map((a) => a.error)).toEqual([undefined, undefined]);
    await flush(s.api);
    expect(only("/null-fields").map((r) => r.text)).toEqual([""]);
    expect(only("/null-queue").map((r) => r.text)).toEqual(["b"]);
  });

  test("deleting a URL Group, queue or schedule that does not exist succeeds (clients delete before they create)", async () => {
    await client.urlGroups.delete("never-created");
    await client.queue({ queueName: "never-created" }).delete();
    await client.schedules.delete("never-created");
    // Reads of what does not exist stay 404.
    expect((await refusal(client.urlGroups.get("never-created")))!.status).toBe(404);
    expect((await refusal(client.dlq.delete("1-0")))!.status).toBe(404);
  });
});

describe("fields clients require", () => {
  test("every log entry of a message with a retry delay expression carries it under both names", async () => {
    const { messageId } = await client.publish({ url: `${rx.url}/expr`, body: "x", retryDelay: "pow(2, retried) * 1000" });
    await flush(s.api);
    const { logs } = await client.logs({ messageIds: [messageId] });
    expect(logs.map((l) => l.state)).toEqual(["DELIVERED", "ACTIVE", "CREATED"]);
    for (const entry of logs as Array<Record<string, unknown>>) {
      expect(entry.retryDelayExpression).toBe("pow(2, retried) * 1000");
      expect(entry.retryDelayExpr).toBe("pow(2, retried) * 1000");
    }
  });

  test("a DLQ entry without an HTTP answer has responseStatus 0 and the error", async () => {
    const { messageId } = await client.publish({ url: "http://127.0.0.1:9/refused", body: "x", retries: 0 });
    await flush(s.api);
    const [entry] = (await client.dlq.listMessages()).messages as Array<Record<string, unknown>>;
    expect(entry).toMatchObject({ messageId, responseStatus: 0 });
    expect(typeof entry!.error).toBe("string");
  });
});

describe("the other dialect is never silently ignored", () => {
  test("Svc-* headers and svc_token sent to the upstash dialect answer 400 naming them and the flag", async () => {
    const res = await s.api(`/v2/publish/${rx.url}/svc`, { method: "POST", body: "x", headers: { "Svc-Retries": "1" } });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: string };
    expect(error).toContain("Svc-Retries");
    expect(error).toContain("--dialect svc");
    const byToken = await s.api(`/v2/dlq?svc_token=${s.token}`, { token: null });
    expect(byToken.status).toBe(400);
    expect(((await byToken.json()) as { error: string }).error).toContain("svc_token");
    expect((await client.logs()).logs).toEqual([]);
  });

  test("the official client against the svc dialect gets a 400 that names the header and --dialect upstash", async () => {
    const svc = await startTestServer();
    try {
      const wrong = new Client({ baseUrl: svc.url, token: svc.token, retry: false });
      const error = await refusal(wrong.publish({ url: `${rx.url}/wrong-dialect`, body: "x", retries: 1 }));
      expect(error!.status).toBe(400);
      const text = JSON.parse(error!.message).error as string;
      expect(text).toContain("Upstash-");
      expect(text).toContain("--dialect upstash");
      const byToken = await svc.api(`/v2/logs?qstash_token=${svc.token}`, { token: null });
      expect(byToken.status).toBe(400);
      expect(((await byToken.json()) as { error: string }).error).toContain("qstash_token");
      // Telemetry headers are no configuration: ignored.
      const telemetry = await svc.api(`/v2/publish/${rx.url}/telemetry?svc-delay=1h`, { method: "POST", body: "x", headers: { "Upstash-Telemetry-Sdk": "x" } });
      expect(telemetry.status).toBe(200);
    } finally {
      await svc.stop();
    }
  });
});
