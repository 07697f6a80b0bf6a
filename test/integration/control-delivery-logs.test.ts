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

test("delivery lines keep one type per field whatever the outcome; a move to the DLQ is a warning", async () => {
  const refused = `http://127.0.0.1:${await closedPort()}`;
  const retried = (await (await s.api(`/v2/publish/${rx.url}/fail-then`, { method: "POST", body: "r", headers: { "Svc-Retries": "1", "Svc-Retry-Delay": "0" } })).json()) as { messageId: string };
  const noAnswer = (await (await s.api(`/v2/publish/${refused}/nobody`, { method: "POST", body: "n", headers: { "Svc-Retries": "0" } })).json()) as { messageId: string };
  await flush(s.api);
  const lines = logged().filter((l) => l.msg === "delivery" && (l.messageId === retried.messageId || l.messageId === noAnswer.messageId));
  expect(lines.map((l) => l.result).sort()).toEqual(["failed", "failed", "retry"]);
  for (const line of logged().filter((l) => l.msg === "delivery")) {
    expect(["delivered", "retry", "failed"]).toContain(line.result as string);
    expect(typeof line.messageId).toBe("string");
    expect(typeof line.account).toBe("string");
    expect(typeof line.attempt).toBe("number");
    expect(typeof line.ms).toBe("number");
    expect(line.status === null || typeof line.status === "number").toBe(true);
    expect(line.error === null || typeof line.error === "string").toBe(true);
    expect(line.nextAttemptAt === null || typeof line.nextAttemptAt === "string").toBe(true);
    expect(line.dlqId === null || typeof line.dlqId === "string").toBe(true);
  }
  const refusedLine = lines.find((l) => l.messageId === noAnswer.messageId)!;
  expect(refusedLine).toMatchObject({ result: "failed", status: null, attempt: 1 });
  expect(typeof refusedLine.error).toBe("string");
  const retryLine = lines.find((l) => l.result === "retry")!;
  expect(retryLine).toMatchObject({ status: 503, attempt: 1, dlqId: null });
  expect(Date.parse(retryLine.nextAttemptAt as string)).toBeGreaterThan(0);

  const warnings = logged().filter((l) => l.msg === "message moved to the DLQ");
  const dlq = ((await (await s.api("/v2/dlq")).json()) as { messages: Array<{ messageId: string; dlqId: string }> }).messages;
  for (const id of [retried.messageId, noAnswer.messageId]) {
    const warning = warnings.find((w) => w.messageId === id)!;
    expect(warning.level).toBe("warn");
    expect(warning.dlqId).toBe(dlq.find((e) => e.messageId === id)!.dlqId);
  }
  expect(warnings.find((w) => w.messageId === retried.messageId)).toMatchObject({ attempts: 2, status: 503 });
});

test("a stop logs what it drained, what stays for the next start, and how long it took", async () => {
  const stopLines: string[] = [];
  const logger = createLogger({ level: "info", format: "json", write: (line) => stopLines.push(line) });
  const held: Array<() => void> = [];
  const slow = await startReceiver(() => new Promise<Response>((resolve) => held.push(() => resolve(new Response("ok")))));
  const stopping = await startTestServer({ logger });
  const summary = () => stopLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "stopped");
  try {
    // Two attempts in flight: one answers during the stop, one never does; one message waits for later.
    await stopping.api(`/v2/publish/${slow.url}/answers`, { method: "POST", body: "a" });
    await stopping.api(`/v2/publish/${slow.url}/never`, { method: "POST", body: "b" });
    await stopping.api(`/v2/publish/${slow.url}/later`, { method: "POST", body: "c", headers: { "Svc-Delay": "1h" } });
    await slow.waitFor(2);
    const stopped = stopping.server.stop({ deadlineMs: 300 });
    held.shift()!();
    await stopped;
    // SQLite keeps the cut-off attempt ACTIVE for its next start; a PostgreSQL node hands it back
    // as it leaves, due again for any node at once.
    const cutOff = stopping.server.storage.kind === "sqlite" ? { redeliveredAtNextStart: 1, waiting: 1 } : { redeliveredAtNextStart: 0, waiting: 2 };
    expect(summary()).toMatchObject({ level: "info", inFlightAtStop: 2, drained: 1, ...cutOff });
    expect(typeof summary()!.durationMs).toBe("number");
  } finally {
    for (const release of held) release();
    slow.stop();
    await stopping.stop();
  }
});

/** A port nothing listens on (bound, then freed). */
async function closedPort(): Promise<number> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  return port;
}
