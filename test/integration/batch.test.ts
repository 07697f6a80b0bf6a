import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { jsonBody } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer({ config: { retryDelayScale: 0.001 } });
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const batch = async (elements: unknown) => {
  const res = await s.api("/v2/batch", jsonBody("POST", elements));
  return { status: res.status, body: (await res.json()) as any };
};

describe("POST /v2/batch", () => {
  test("URL, group and queue elements mixed with invalid ones: an aligned answer, the valid ones delivered", async () => {
    await s.api("/v2/topics/batch-group/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/bg/1` }, { url: `${rx.url}/bg/2`, name: "two" }] }));
    const { status, body } = await batch([
      { destination: `${rx.url}/b/url`, body: "plain", headers: { "Content-Type": "text/plain", "Svc-Forward-X-Tag": "batch", "Svc-Method": "PUT" } },
      { destination: "batch-group", body: "fan" },
      { destination: `${rx.url}/b/queued`, body: "queued", queue: "batch-queue" },
      { destination: `${rx.url}/b/bad-retries`, headers: { "Svc-Retries": "lots" } },
      { destination: "no-such-group" },
      { destination: "mailto:someone@example.com" },
      { body: "no destination" },
      { destination: `${rx.url}/b/bad-queue`, queue: "not a name" },
      "not an object",
    ]);
    expect(status).toBe(200);
    expect(body).toHaveLength(9);
    expect(body[0]).toEqual({ messageId: expect.stringMatching(/^msg_/), url: `${rx.url}/b/url` });
    expect(body[1]).toEqual([
      { messageId: expect.stringMatching(/^msg_/), url: `${rx.url}/bg/1` },
      { messageId: expect.stringMatching(/^msg_/), url: `${rx.url}/bg/2` },
    ]);
    expect(body[2].messageId).toMatch(/^msg_/);
    expect(body[3].error).toContain("Svc-Retries");
    expect(body[4].error).toContain("no-such-group");
    expect(body[5].error).toContain("invalid destination");
    expect(body[6].error).toContain("destination");
    expect(body[7].error).toContain("queue");
    expect(body[8].error).toContain("batch[8]");

    const [plain] = await rx.waitFor(1, { match: (r) => r.path === "/b/url" });
    expect(plain!.method).toBe("PUT");
    expect(plain!.text).toBe("plain");
    expect(plain!.headers.get("content-type")).toBe("text/plain");
    expect(plain!.headers.get("x-tag")).toBe("batch");
    const fan = await rx.waitFor(2, { match: (r) => r.path.startsWith("/bg/") });
    expect(fan.every((r) => r.headers.get("svc-topic-name") === "batch-group")).toBe(true);
    await rx.waitFor(1, { match: (r) => r.path === "/b/queued" });
    const queue = (await (await s.api("/v2/queues/batch-queue")).json()) as { name: string };
    expect(queue.name).toBe("batch-queue");
    const logs = (await (await s.api(`/v2/logs?messageId=${body[2].messageId}&state=CREATED`)).json()) as { logs: Array<{ queueName: string }> };
    expect(logs.logs[0]!.queueName).toBe("batch-queue");
    expect(rx.received.some((r) => r.path.includes("bad"))).toBe(false);
  });

  test("the body must be a JSON array (400 with an error)", async () => {
    for (const value of [{ destination: `${rx.url}/x` }, "text", 42]) {
      const { status, body } = await batch(value);
      expect(status).toBe(400);
      expect(typeof body.error).toBe("string");
    }
    const res = await s.api("/v2/batch", { method: "POST", body: "[not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(await batch([])).toEqual({ status: 200, body: [] });
  });
});
