import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ configFile: { accounts: [{ email: "f@x.io", apiKey: "k", userId: "free-user", token: "free-token", plan: "free" }] } });
});
afterAll(() => s.stop());

const DEST = "http://127.0.0.1:9/target";

/** [name, headers, the header the error names, status when not 400 (412: above a plan limit)] */
const cases: Array<[string, Record<string, string>, string, number?]> = [
  ["retries not a number", { "Svc-Retries": "lots" }, "Svc-Retries"],
  ["negative retries", { "Svc-Retries": "-1" }, "Svc-Retries"],
  ["retries above the plan cap", { "Svc-Retries": "4" }, "Svc-Retries", 412],
  ["delay without unit", { "Svc-Delay": "10x" }, "Svc-Delay"],
  ["delay above the plan max", { "Svc-Delay": "8d" }, "Svc-Delay", 412],
  ["not-before not a number", { "Svc-Not-Before": "tomorrow" }, "Svc-Not-Before"],
  ["unknown method", { "Svc-Method": "FETCH" }, "Svc-Method"],
  ["bad retry delay expression", { "Svc-Retry-Delay": "pow(2, retried" }, "Svc-Retry-Delay"],
  ["eval attempt in retry delay", { "Svc-Retry-Delay": "process.exit(1)" }, "Svc-Retry-Delay"],
  ["timeout with days", { "Svc-Timeout": "1d" }, "Svc-Timeout"],
  ["timeout above plan max", { "Svc-Timeout": "16m" }, "Svc-Timeout", 412],
  ["callback not a URL", { "Svc-Callback": "not a url" }, "Svc-Callback"],
  ["callback with ftp scheme", { "Svc-Callback": "ftp://example.com/x" }, "Svc-Callback"],
  ["failure callback invalid", { "Svc-Failure-Callback": "::" }, "Svc-Failure-Callback"],
  ["callback retries above cap", { "Svc-Callback": "http://127.0.0.1:9/cb", "Svc-Callback-Retries": "99" }, "Svc-Callback-Retries", 412],
  ["header forward not boolean", { "Svc-Header-Forward": "maybe" }, "Svc-Header-Forward"],
  ["flow control value without key", { "Svc-Flow-Control-Value": "rate=1" }, "Svc-Flow-Control-Value"],
  ["flow control key without value", { "Svc-Flow-Control-Key": "k" }, "Svc-Flow-Control"],
  ["flow control bad value", { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "rate=fast" }, "Svc-Flow-Control-Value"],
  ["dedup id with colon", { "Svc-Deduplication-Id": "a:b" }, "Svc-Deduplication-Id"],
];

async function pendingCount() {
  const logs = (await (await s.api("/v2/logs")).json()) as { logs: unknown[] };
  return logs.logs.length;
}

describe("invalid publish input → 400 (412 above a plan limit) naming the header, nothing stored", () => {
  for (const [name, headers, named, status = 400] of cases) {
    test(name, async () => {
      const res = await s.api(`/v2/publish/${DEST}`, { method: "POST", body: "x", headers });
      expect(res.status).toBe(status);
      const body = (await res.json()) as { error: string };
      expect(body.error).toContain(named);
      expect(await pendingCount()).toBe(0);
    });
  }

  test("destination without a scheme or with a wrong one", async () => {
    for (const dest of ["ftp://example.com/x", "javascript:alert(1)", "not/a/url", "http://"]) {
      const res = await s.api(`/v2/publish/${dest}`, { method: "POST", body: "x" });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(((await res.json()) as { error: string }).error.length).toBeGreaterThan(0);
    }
    expect(await pendingCount()).toBe(0);
  });

  test("a body over the plan's max message size → 412, declared or streamed", async () => {
    const big = new Uint8Array(1024 * 1024 + 1);
    const declared = await s.api(`/v2/publish/${DEST}`, { method: "POST", body: big });
    expect(declared.status).toBe(412);
    expect(((await declared.json()) as { error: string }).error).toContain("too large");
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(128 * 1024));
        controller.close();
      },
    });
    const streamed = await s.api(`/v2/publish/${DEST}`, { method: "POST", body: stream });
    expect(streamed.status).toBe(412);
    expect(await pendingCount()).toBe(0);
  });

  test("a body at exactly the limit is accepted", async () => {
    const res = await s.api(`/v2/publish/${DEST}?svc-delay=1h`, { method: "POST", body: new Uint8Array(1024 * 1024) });
    expect(res.status).toBe(200);
  });
});
