/**
 * Fault injection (docs/test-double.md, Fault injection): rules at /__svc/faults shape API answers
 * and delivery attempts, every injected fault is marked in the logs and counted in /metrics, and a
 * reset clears the rules. Runs on both storage engines (the log entries are stored).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { verifySignature } from "../../src/signing/verify.js";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { advance, flush, json } from "../helpers/control.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

let s: TestServer;
let rx: Receiver;
/** svcd's own log lines (info and up), as an operator reads them. */
const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
const record = (msg: string, fields: Record<string, unknown> = {}) => void lines.push({ msg, fields });
const logger = { debug() {}, info: record, warn: record, error: record, enabled: (level: string) => level !== "debug" };

beforeAll(async () => {
  s = await startTestServer({ config: { clock: "manual" }, logger });
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});
beforeEach(async () => {
  expect((await s.api("/__svc/reset", { method: "POST" })).status).toBe(200);
  rx.received.length = 0;
});

interface Rule {
  id: string;
  seed: number;
  matched: number;
  fired: number;
}
async function addRule(rule: Record<string, unknown>): Promise<Rule> {
  const res = await s.api("/__svc/faults", json(rule));
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body as Rule;
}
const rules = async () => ((await (await s.api("/__svc/faults")).json()) as { rules: Rule[] }).rules;
async function publish(path: string, headers: Record<string, string> = {}) {
  const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}
interface LogEntry {
  state: string;
  error?: string;
  responseStatus?: number;
  fault?: { kind: string; rule: string };
}
const logsOf = async (messageId: string) =>
  ((await (await s.api(`/v2/logs?messageId=${messageId}`)).json()) as { logs: LogEntry[] }).logs.reverse();
const injected = async (kind: string) => {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
  return parseExposition(await res.text()).value("svcd_faults_injected_total", { kind });
};

describe("the rules at /__svc/faults", () => {
  test("are created, listed in order, deleted one by one or all, and cleared by reset", async () => {
    const a = await addRule({ kind: "error", status: 503, match: { route: "/v2/queues" } });
    const b = await addRule({ kind: "duplicate", match: { url: rx.url }, times: 1 });
    expect(a.id).toMatch(/^fault_/);
    expect((await rules()).map((r) => r.id)).toEqual([a.id, b.id]);
    expect((await s.api(`/__svc/faults/${a.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.api(`/__svc/faults/${a.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await rules()).map((r) => r.id)).toEqual([b.id]);
    await addRule({ kind: "slow", delayMs: 10 });
    const reset = (await (await s.api("/__svc/reset", { method: "POST" })).json()) as { parts: string[] };
    expect(reset.parts).toContain("faults");
    expect(await rules()).toEqual([]);
    await addRule({ kind: "quota" });
    expect(await (await s.api("/__svc/faults", { method: "DELETE" })).json()).toEqual({ deleted: 1 });
    expect(await rules()).toEqual([]);
  });

  test("are described in the OpenAPI document", async () => {
    const doc = (await (await fetch(`${s.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths["/__svc/faults"] ?? {}).sort()).toEqual(["delete", "get", "post"]);
    expect(Object.keys(doc.paths["/__svc/faults/{id}"] ?? {})).toEqual(["delete"]);
  });

  test("refuse a rule that cannot work, with the reason (400)", async () => {
    const bad = [
      [{ kind: "explode" }, "kind"],
      [{ kind: "duplicate", match: { route: "/v2/publish" } }, "matches deliveries"],
      [{ kind: "rate-limit", match: { url: "http://x" } }, "matches API requests"],
      [{ kind: "delay" }, "delayMs"],
      [{ kind: "error", every: 2, times: 3 }, "at most one"],
      [{ kind: "error", seed: 7 }, "needs \"probability\""],
      [{ kind: "quota", status: 500 }, "applies to error"],
    ] as const;
    for (const [rule, reason] of bad) {
      const res = await s.api("/__svc/faults", json(rule));
      expect(res.status, JSON.stringify(rule)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toContain(reason);
    }
    expect((await s.api("/__svc/faults", { method: "GET", token: null })).status).toBe(401);
  });
});

describe("API faults", () => {
  test("429 carries the rate-limit headers, then the next request goes through (times)", async () => {
    const before = await injected("rate-limit");
    await addRule({ kind: "rate-limit", scope: "daily", limit: 500, times: 1, match: { route: "/v2/publish", method: "POST" } });
    const now = ((await (await s.api("/__svc/clock")).json()) as { now: number }).now;
    const res = await s.api(`/v2/publish/${rx.url}/x`, { method: "POST", body: "x" });
    expect(res.status).toBe(429);
    expect(res.headers.get("ratelimit-limit")).toBe("500");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(res.headers.get("ratelimit-reset"))).toBe(Math.ceil((Math.floor(now / 86_400_000) + 1) * 86_400));
    expect(res.headers.get("svcd-injected-fault")).toMatch(/^rate-limit; rule=fault_/);
    const line = lines.find((l) => l.msg === "injected fault" && l.fields.fault === "rate-limit");
    expect(line?.fields).toMatchObject({ method: "POST", path: `/v2/publish/${rx.url}/x` });
    // Nothing was stored: the second publish is the only message.
    await publish("/x");
    await flush(s.api);
    expect(rx.received).toHaveLength(1);
    expect(await injected("rate-limit")).toBe(before + 1);
  });

  test("a burst 429 uses the Burst-RateLimit-* headers; 412 says the quota; 503 and 500; other routes pass", async () => {
    await addRule({ kind: "rate-limit", match: { route: "/v2/queues" }, times: 1 });
    const burst = await s.api("/v2/queues");
    expect(burst.status).toBe(429);
    expect(burst.headers.get("burst-ratelimit-limit")).toBe("100");
    expect(burst.headers.get("ratelimit-limit")).toBeNull();
    await addRule({ kind: "quota", match: { route: "/v2/schedules" }, times: 1 });
    const quota = await s.api("/v2/schedules");
    expect(quota.status).toBe(412);
    expect(((await quota.json()) as { error: string }).error).toContain("quota");
    await addRule({ kind: "error", status: 503, match: { route: "/v2/dlq" }, every: 2 });
    expect((await s.api("/v2/dlq")).status).toBe(200);
    expect((await s.api("/v2/dlq")).status).toBe(503);
    expect((await s.api("/v2/dlq")).status).toBe(200);
    expect((await s.api("/v2/logs")).status).toBe(200);
    // The control plane is never matched: a test can always remove the rule that blocks it.
    await addRule({ kind: "error" });
    expect((await s.api("/v2/topics")).status).toBe(500);
    expect((await s.api("/__svc/faults")).status).toBe(200);
  });

  test("a slow answer waits on the manual clock", async () => {
    await addRule({ kind: "slow", delayMs: 5_000, match: { route: "/v2/queues" }, times: 1 });
    let answered = false;
    const pending = s.api("/v2/queues").then((res) => {
      answered = true;
      return res;
    });
    await advance(s.api, { ms: 4_000 });
    // Requests sent after it are answered while it still waits: 4 s of its 5 are not enough.
    for (let i = 0; i < 3; i++) expect((await s.api("/v2/topics")).status).toBe(200);
    expect(answered).toBe(false);
    await advance(s.api, { ms: 1_000 });
    expect((await pending).status).toBe(200);
  });

  test("a seeded probability rule fires on the same matches every time", async () => {
    const pattern = async () => {
      await addRule({ kind: "error", probability: 0.5, seed: 42, match: { route: "/v2/topics" } });
      const statuses: number[] = [];
      for (let i = 0; i < 16; i++) statuses.push((await s.api("/v2/topics")).status);
      await s.api("/__svc/faults", { method: "DELETE" });
      return statuses;
    };
    const first = await pattern();
    expect(first).toContain(500);
    expect(first).toContain(200);
    expect(await pattern()).toEqual(first);
  });
});

describe("delivery faults", () => {
  test("duplicate: the receiver gets the same message twice, both signed", async () => {
    await addRule({ kind: "duplicate", match: { url: `${rx.url}/dup` }, times: 1 });
    const id = await publish("/dup");
    await flush(s.api);
    const copies = rx.received.filter((r) => r.path === "/dup");
    expect(copies).toHaveLength(2);
    const keys = (await (await s.api("/v2/keys")).json()) as { current: string; next: string };
    for (const copy of copies) {
      expect(copy.headers.get("svc-message-id")).toBe(id);
      const check = await verifySignature({
        signature: copy.headers.get("svc-signature")!,
        body: copy.body,
        currentSigningKey: keys.current,
        nextSigningKey: keys.next,
        url: `${rx.url}/dup`,
      });
      expect(check.ok).toBe(true);
    }
    const delivered = (await logsOf(id)).find((e) => e.state === "DELIVERED")!;
    expect(delivered.fault?.kind).toBe("duplicate");
  });

  test("timeout after answer: the receiver did its work, the attempt fails and is retried, the log says so", async () => {
    const before = await injected("timeout-after-answer");
    const rule = await addRule({ kind: "timeout-after-answer", match: { label: "billing" }, times: 1 });
    const id = await publish("/billing", { "Svc-Label": "billing", "Svc-Retries": "2", "Svc-Retry-Delay": "1000" });
    await flush(s.api);
    expect(rx.received).toHaveLength(1);
    await advance(s.api, { ms: 1_000 }, { flush: true });
    expect(rx.received).toHaveLength(2);
    const log = await logsOf(id);
    expect(log.map((e) => e.state)).toEqual(["CREATED", "ACTIVE", "ERROR", "RETRY", "ACTIVE", "DELIVERED"]);
    const error = log.find((e) => e.state === "ERROR")!;
    expect(error.fault).toEqual({ kind: "timeout-after-answer", rule: rule.id });
    expect(error.error).toContain("injected fault: the receiver answered 200");
    expect(log.find((e) => e.state === "DELIVERED")!.fault).toBeUndefined();
    // svcd's own delivery lines say it too: the failed attempt was injected, the retry was real.
    const attempts = lines.filter((l) => l.msg === "delivery" && l.fields.messageId === id);
    expect(attempts.map((l) => [l.fields.result, l.fields.fault ?? null])).toEqual([["retry", "timeout-after-answer"], ["delivered", null]]);
    expect(await injected("timeout-after-answer")).toBe(before + 1);
  });

  test("delay: the attempt waits on the manual clock", async () => {
    await addRule({ kind: "delay", delayMs: 60_000, match: { url: `${rx.url}/late` } });
    const id = await publish("/late");
    await advance(s.api, { ms: 59_000 });
    expect(rx.received).toHaveLength(0);
    await advance(s.api, { ms: 1_000 });
    await rx.waitFor(1);
    await flush(s.api);
    expect((await logsOf(id)).find((e) => e.state === "DELIVERED")!.fault?.kind).toBe("delay");
  });

  test("a message cancelled while an injected delay holds it is never delivered, and its key's slot is free again", async () => {
    await addRule({ kind: "delay", delayMs: 60_000, times: 1, match: { flowControlKey: "one" } });
    const flow = { "Svc-Flow-Control-Key": "one", "Svc-Flow-Control-Value": "parallelism=1" };
    const held = await publish("/held", flow);
    await waitUntil(async () => (await logsOf(held)).some((e) => e.state === "ACTIVE"), { what: "the held attempt started" });
    expect((await s.api(`/v2/messages/${held}`, { method: "DELETE" })).status).toBe(200);
    await publish("/next", flow);
    await flush(s.api);
    expect(rx.received.map((r) => r.path)).toEqual(["/next"]);
    await advance(s.api, { ms: 60_000 }, { flush: true });
    expect(rx.received.map((r) => r.path)).toEqual(["/next"]);
  });

  test("reorder: a message of a flow-control key is overtaken by the next ones of its key", async () => {
    await addRule({ kind: "reorder", delayMs: 10_000, match: { flowControlKey: "k" }, times: 1 });
    // Parallelism 2: the held message keeps one slot, so 2 and 3 go one after the other, in order.
    const flow = { "Svc-Flow-Control-Key": "k", "Svc-Flow-Control-Value": "parallelism=2" };
    for (const n of [1, 2, 3]) await publish(`/seq/${n}`, flow);
    await rx.waitFor(2);
    await advance(s.api, { ms: 10_000 });
    await rx.waitFor(3);
    await flush(s.api);
    expect(rx.received.map((r) => r.path)).toEqual(["/seq/2", "/seq/3", "/seq/1"]);
  });
});
