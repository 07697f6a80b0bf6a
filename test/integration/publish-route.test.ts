/**
 * Publish and enqueue are served by Bun's router before Elysia's (http/fast-route.ts). What every
 * other route gets from the Elysia app must hold for them too: authentication in both token
 * places, the dialect guard, the error mapping, the request log line and the request metrics;
 * and a path that only looks like a publish before Bun normalises it is not one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { createLogger } from "../../src/core/log.ts";
import { startReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const lines: string[] = [];
let s: TestServer;
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  s = await startTestServer({ logger: createLogger({ level: "info", format: "json", write: (line) => lines.push(line) }) });
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const requestLines = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");

test("the token is read from the header or the query parameter; a wrong or missing one is 401", async () => {
  const byQuery = await s.api(`/v2/publish/${rx.url}/q?svc_token=${s.token}`, { method: "POST", body: "a", token: null });
  expect(byQuery.status).toBe(200);
  expect(((await byQuery.json()) as { messageId: string }).messageId).toMatch(/^msg_/);
  const enqueued = await s.api(`/v2/enqueue/fast-q/${rx.url}/e?svc_token=${s.token}`, { method: "POST", body: "b", token: null });
  expect(enqueued.status).toBe(200);
  for (const path of [`/v2/publish/${rx.url}/x`, `/v2/enqueue/fast-q/${rx.url}/x`]) {
    const missing = await s.api(path, { method: "POST", body: "x", token: null });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ error: "Unauthorized" });
    expect((await s.api(path, { method: "POST", body: "x", token: "wrong" })).status).toBe(401);
  }
  await rx.waitFor(2);
});

test("a request in the other dialect is refused with the flag that serves it", async () => {
  const res = await s.api(`/v2/publish/${rx.url}/x`, { method: "POST", body: "x", headers: { "Upstash-Retries": "1" } });
  expect(res.status).toBe(400);
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(((await res.json()) as { error: string }).error).toContain("--dialect upstash");
});

test("errors of the publish itself map as on every route: 400, 404, 412 with {error}", async () => {
  const bad = await s.api("/v2/publish/ftp://example.com/x", { method: "POST", body: "x" });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: string }).error).toContain("scheme must be http or https");
  const group = await s.api("/v2/publish/no-such-group", { method: "POST", body: "x" });
  expect(group.status).toBe(404);
  const tooMany = await s.api(`/v2/publish/${rx.url}/x`, { method: "POST", body: "x", headers: { "Svc-Retries": "1000" } });
  expect(tooMany.status).toBe(412);
  const noQueue = await s.api("/v2/enqueue/only-a-queue", { method: "POST", body: "x" });
  expect(noQueue.status).toBe(400);
  expect(((await noQueue.json()) as { error: string }).error).toContain("/v2/enqueue/{queue}/{destination}");
});

test("other methods on the publish path still get 405 with Allow", async () => {
  const res = await s.api(`/v2/publish/${rx.url}/x`, { method: "PUT", body: "x" });
  expect(res.status).toBe(405);
  expect(res.headers.get("allow")).toContain("POST");
});

test("one request log line per publish, with the path only (no token, no credentials)", async () => {
  const target = rx.url.replace("http://", "http://alice:hunter2@");
  const res = await s.api(`/v2/publish/${target}/logged?svc_token=${s.token}`, { method: "POST", body: "x", token: null });
  expect(res.status).toBe(200);
  const line = requestLines().find((l) => String(l.path).endsWith("/logged"));
  expect(line).toMatchObject({ method: "POST", status: 200 });
  expect(String(line!.path)).toStartWith("/v2/publish/http://");
  expect(typeof line!.ms).toBe("number");
  const all = lines.join("\n");
  expect(all).not.toContain("hunter2");
  expect(all).not.toContain(s.token);
  const refused = requestLines().filter((l) => l.status === 401);
  expect(refused.length).toBeGreaterThanOrEqual(4);
});

test("a raw path that leaves /v2/publish/ once normalised is answered as that path", async () => {
  const port = new URL(s.url).port;
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1", () =>
      socket.write(`POST /v2/publish/../nowhere HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.token}\r\nContent-Length: 1\r\nConnection: close\r\n\r\nx`),
    );
    let text = "";
    socket.on("data", (chunk) => (text += chunk));
    socket.on("close", () => resolve(text));
    socket.on("error", reject);
  });
  expect(answer).toStartWith("HTTP/1.1 404");
  // Not a 400 about the destination "": the normalised path is no publish.
  expect(answer).toContain('{"error":"not found: POST /');
  expect(answer).toContain('nowhere"}');
});
