/**
 * Injected faults as the hosted service's official client meets them (@upstash/qstash, unchanged,
 * upstash dialect): a 429 raises the rate-limit error it raises for the hosted service, burst or
 * daily as the headers say, with the limit, remaining and reset read from them; a duplicate
 * delivery passes its Receiver's signature check both times.
 */
import { Client, QstashDailyRatelimitError, QstashError, QstashRatelimitError, Receiver } from "@upstash/qstash";
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { startReceiver, type Receiver as TestReceiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { testUnless } from "../helpers/skip.ts";

let s: TestServer;
let rx: TestReceiver;
let client: Client;

beforeAll(async () => {
  s = await startTestServer({ config: { dialect: "upstash" } });
  rx = await startReceiver();
  client = new Client({ baseUrl: s.url, token: s.token, retry: false });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});
beforeEach(async () => {
  expect((await s.api("/__svc/reset", { method: "POST" })).status).toBe(200);
  rx.received.length = 0;
});

async function addRule(rule: Record<string, unknown>) {
  const res = await s.api("/__svc/faults", { method: "POST", body: JSON.stringify(rule), headers: { "content-type": "application/json" } });
  expect(res.status).toBe(201);
}
const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error("expected the call to fail"); }, (e: unknown) => e);

describe("@upstash/qstash against injected API faults", () => {
  test("a daily 429 raises QstashDailyRatelimitError with the headers' limit, remaining and reset", async () => {
    await addRule({ kind: "rate-limit", scope: "daily", limit: 500, times: 1, match: { route: "/v2/publish" } });
    const error = await failure(client.publish({ url: `${rx.url}/a`, body: "x" }));
    expect(error).toBeInstanceOf(QstashDailyRatelimitError);
    const e = error as QstashDailyRatelimitError;
    expect(e.status).toBe(429);
    expect(e.limit).toBe("500");
    expect(e.remaining).toBe("0");
    expect(Number(e.reset) % 86_400).toBe(0);
    // `times: 1`: the next call goes through.
    expect((await client.publish({ url: `${rx.url}/a`, body: "x" })).messageId).toMatch(/^msg_/);
  });

  test("a burst 429 raises QstashRatelimitError (the burst limit) with its headers' values", async () => {
    await addRule({ kind: "rate-limit", scope: "burst", limit: 7, match: { route: "/v2/queues", method: "GET" } });
    const error = await failure(client.queue().list());
    expect(error).toBeInstanceOf(QstashRatelimitError);
    expect(error).not.toBeInstanceOf(QstashDailyRatelimitError);
    const e = error as QstashRatelimitError;
    expect(e.limit).toBe("7");
    expect(e.remaining).toBe("0");
    expect(Number(e.reset)).toBeGreaterThan(0);
  });

  test("412 and 503 reach the client as QstashError with the status and the text", async () => {
    await addRule({ kind: "quota", match: { route: "/v2/schedules" }, times: 1 });
    const quota = (await failure(client.schedules.list())) as QstashError;
    expect(quota).toBeInstanceOf(QstashError);
    expect(quota.status).toBe(412);
    expect(quota.message).toContain("quota");
    await addRule({ kind: "error", status: 503, match: { route: "/v2/topics" }, times: 1 });
    const unavailable = (await failure(client.urlGroups.list())) as QstashError;
    expect(unavailable.status).toBe(503);
  });

  test("a duplicate delivery: same message id, and the Receiver verifies both copies", async () => {
    await addRule({ kind: "duplicate", match: { url: rx.url }, times: 1 });
    const { messageId } = await client.publish({ url: `${rx.url}/dup`, body: "twice" });
    expect((await s.api("/__svc/flush", { method: "POST" })).status).toBe(200);
    expect(rx.received).toHaveLength(2);
    const keys = (await (await s.api("/v2/keys")).json()) as { current: string; next: string };
    const receiver = new Receiver({ currentSigningKey: keys.current, nextSigningKey: keys.next });
    for (const copy of rx.received) {
      expect(copy.headers.get("upstash-message-id")).toBe(messageId);
      expect(await receiver.verify({ signature: copy.headers.get("upstash-signature")!, body: copy.text, url: `${rx.url}/dup` })).toBe(true);
    }
  });
});

const python = Bun.spawnSync(["python3", "-c", "import qstash"], { stdout: "ignore", stderr: "ignore" });
describe("the Python client", () => {
  // PyPI is unreachable where this suite was written; the test runs wherever `pip install qstash` worked.
  testUnless(python.exitCode !== 0 ? "no python3 with the qstash package" : null)("raises DailyRateLimitExceededError on the injected daily 429", async () => {
    await addRule({ kind: "rate-limit", scope: "daily", limit: 500, times: 1, match: { route: "/v2/publish" } });
    const script = `
import sys
from qstash import QStash
from qstash.errors import DailyRateLimitExceededError
client = QStash(sys.argv[2], base_url=sys.argv[1])
try:
    client.message.publish(url=sys.argv[3], body="x")
except DailyRateLimitExceededError as e:
    print(e.limit, e.remaining)
`;
    const run = Bun.spawnSync(["python3", "-c", script, s.url, s.token, `${rx.url}/py`]);
    expect(run.stdout.toString().trim()).toBe("500 0");
  });
});
