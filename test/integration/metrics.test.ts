import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { flush } from "../helpers/control.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { DEFAULT_ACCOUNT, startTestServer, type TestServer } from "../helpers/server.ts";

let s: TestServer;
let rx: Receiver;
const ACCOUNT = DEFAULT_ACCOUNT.userId;

beforeAll(async () => {
  s = await startTestServer();
  rx = await startReceiver((req) => new Response("x", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const scrape = async () => {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain; version=0.0.4");
  return parseExposition(await res.text());
};

test("/metrics needs the metrics token; an account's token does not open it", async () => {
  for (const authorization of [undefined, `Bearer ${s.token}`, "Bearer wrong", `Basic ${btoa(`${DEFAULT_ACCOUNT.email}:${DEFAULT_ACCOUNT.apiKey}`)}`]) {
    const res = await fetch(`${s.url}/metrics`, { headers: authorization ? { authorization } : {} });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toContain("metrics token");
  }
});

test("parses as Prometheus text, and its counters, histograms and gauges move with real traffic", async () => {
  const before = await scrape();
  const publish = async (path: string, headers: Record<string, string> = {}) => {
    const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path, headers });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messageId: string }).messageId;
  };
  for (let i = 0; i < 3; i++) await publish(`/ok/${i}`);
  await publish("/fail/once", { "Svc-Retries": "1", "Svc-Retry-Delay": "0" });
  const cancelled = await publish("/later/cancelled", { "Svc-Delay": "1h" });
  await publish("/later/kept", { "Svc-Delay": "1h" });
  expect((await s.api(`/v2/messages/${cancelled}`, { method: "DELETE" })).status).toBe(200);
  await flush(s.api);

  const after = await scrape();
  const moved = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
  const mine = { account: ACCOUNT };
  expect(moved("svcd_messages_published_total", { ...mine, kind: "message" })).toBe(6);
  expect(moved("svcd_messages_delivered_total", mine)).toBe(3);
  expect(moved("svcd_messages_retried_total", mine)).toBe(1);
  expect(moved("svcd_messages_failed_total", mine)).toBe(1);
  expect(moved("svcd_messages_cancelled_total", mine)).toBe(1);
  expect(moved("svcd_delivery_attempt_duration_seconds_count", { result: "2xx" })).toBe(3);
  expect(moved("svcd_delivery_attempt_duration_seconds_count", { result: "5xx" })).toBe(2);
  expect(moved("svcd_delivery_latency_seconds_count")).toBe(3);
  expect(moved("svcd_http_requests_total", { method: "POST", route: "/v2/publish/*", status: "200" })).toBe(6);
  expect(moved("svcd_http_requests_total", { method: "DELETE", route: "/v2/messages/:messageId", status: "200" })).toBe(1);

  expect(after.value("svcd_messages", { state: "delayed" })).toBe(1);
  expect(after.value("svcd_messages", { state: "due" })).toBe(0);
  expect(after.value("svcd_messages", { state: "in_flight" })).toBe(0);
  expect(after.value("svcd_dlq_messages", mine)).toBe(1);
  expect(after.value("svcd_delivery_workers")).toBe(s.config.workers);
  expect(after.samples.filter((x) => x.name === "svcd_worker_attempts_in_flight")).toHaveLength(s.config.workers);
  expect(after.value("svcd_storage_bytes", { file: "database" })).toBeGreaterThan(0);
  expect(after.samples.find((x) => x.name === "svcd_storage_bytes" && x.labels.file === "wal")).toBeDefined();
  expect(after.samples.find((x) => x.name === "svcd_build_info")?.value).toBe(1);
  // Six publishes and a cancel, each a write of its own, besides the claims and outcomes; grouped
  // into transactions, none of which failed.
  const writes = moved("svcd_storage_writes_total");
  expect(writes).toBeGreaterThanOrEqual(7);
  expect(moved("svcd_storage_commits_total", { result: "committed" })).toBeGreaterThanOrEqual(1);
  expect(moved("svcd_storage_commits_total", { result: "committed" })).toBeLessThanOrEqual(writes);
  expect(moved("svcd_storage_commits_total", { result: "failed" })).toBe(0);
  const families = [
    ["svcd_messages_delivered_total", "counter"],
    ["svcd_delivery_latency_seconds", "histogram"],
    ["svcd_messages", "gauge"],
    ["svcd_storage_commits_total", "counter"],
  ] as const;
  for (const [family, type] of families)
    expect(after.types.get(family)).toBe(type);
});

test("svcd_worker_busy_seconds_total: each worker's CPU time, growing with the deliveries it makes", async () => {
  const busy = (e: Awaited<ReturnType<typeof scrape>>) => e.samples.filter((x) => x.name === "svcd_worker_busy_seconds_total");
  const before = await scrape();
  expect(before.types.get("svcd_worker_busy_seconds_total")).toBe("counter");
  expect(busy(before).map((x) => x.labels.worker).sort()).toEqual(Array.from({ length: s.config.workers }, (_, i) => String(i)));
  // Distinct flow-control keys spread over the workers (a key always goes to the same one).
  for (let i = 0; i < 16; i++) {
    const res = await s.api(`/v2/publish/${rx.url}/busy/${i}`, {
      method: "POST",
      body: "x".repeat(4096),
      headers: { "Svc-Flow-Control-Key": `busy-${i}`, "Svc-Flow-Control-Value": "parallelism=1" },
    });
    expect(res.status).toBe(200);
  }
  await flush(s.api);
  const after = await scrape();
  for (const sample of busy(after)) {
    const was = before.value("svcd_worker_busy_seconds_total", sample.labels);
    expect(sample.value).toBeGreaterThan(was);
  }
  expect(busy(after)).toHaveLength(s.config.workers);
});
