import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../../src/core/log.ts";
import { flush } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { DEFAULT_ACCOUNT, startTestServer, type TestServer } from "../helpers/server.ts";

const TOKEN = "secret-token-never-logged";
const lines: string[] = [];
let s: TestServer;
let rx: Receiver;

beforeAll(async () => {
  const logger = createLogger({ level: "debug", format: "json", write: (line) => lines.push(line) });
  s = await startTestServer({ logger, config: { defaultAccount: { ...DEFAULT_ACCOUNT, token: TOKEN } } });
  rx = await startReceiver((req) => new Response("x", { status: req.path.startsWith("/fail") ? 503 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const logged = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

test("each delivery outcome is one log line: message id, URL, status, attempt, ms", async () => {
  const ok = (await (await s.api(`/v2/publish/${rx.url}/ok`, { method: "POST", body: "a" })).json()) as { messageId: string };
  const bad = (await (await s.api(`/v2/publish/${rx.url}/fail`, { method: "POST", body: "b", headers: { "Svc-Retries": "0" } })).json()) as { messageId: string };
  await flush(s.api);
  const deliveries = logged().filter((l) => l.msg === "delivery");
  const of = (id: string) => deliveries.filter((l) => l.messageId === id);
  expect(of(ok.messageId)).toHaveLength(1);
  expect(of(ok.messageId)[0]).toMatchObject({ level: "info", url: `${rx.url}/ok`, status: 200, attempt: 1 });
  expect(typeof of(ok.messageId)[0]!.ms).toBe("number");
  expect(of(bad.messageId)[0]).toMatchObject({ url: `${rx.url}/fail`, status: 503, attempt: 1 });
});

test("tokens never reach the logs, whether sent as a header or as the query parameter", async () => {
  await s.api(`/v2/publish/${rx.url}/query-token?svc_token=${TOKEN}`, { method: "POST", body: "c", token: null });
  await s.api(`/v2/dlq?svc_token=${TOKEN}`, { token: null });
  await s.api("/__svc/reset?svc_token=wrong-" + TOKEN, { method: "POST", token: null });
  await s.api("/v2/messages/unknown");
  await flush(s.api);
  expect(rx.received.some((r) => r.path === "/query-token")).toBe(true);
  expect(lines.length).toBeGreaterThan(5);
  expect(lines.filter((l) => l.includes(TOKEN))).toEqual([]);
});
