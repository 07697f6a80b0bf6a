import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { recordEvents } from "../helpers/events.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const ALICE = { email: "alice@example.com", apiKey: "alice-key", userId: "alice", token: "alice-token" };
const BOB = { email: "bob@example.com", apiKey: "bob-key", userId: "bob", token: "bob-token" };
const configFile: ConfigFile = { accounts: [ALICE, BOB] };

let s: TestServer;
let rx: Receiver;
beforeAll(async () => {
  s = await startTestServer({ configFile, config: { retryDelayScale: 0.001 } });
  rx = await startReceiver((req) => new Response("", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

type Point = { x: string; y: number };
type Stats = {
  daily_used: Point[];
  daily_qstash_messages: Array<{ id: string; data_points: Point[] }>;
  daily_requests: Point[];
  daily_billings: Point[];
  dlq_message_count: number;
  total_monthly_billing: number;
  daily_bandwidth_used: Point[];
};

const stats = async (who: typeof ALICE) =>
  (await (await s.mgmt(`/v2/svc/stats/${who.userId}?period=1h`, { email: who.email, apiKey: who.apiKey })).json()) as Stats;
/** The run may cross a minute boundary: count the last two one-minute buckets. */
const recent = (points: Point[]) => points.slice(-2).reduce((sum, p) => sum + p.y, 0);
const metric = (st: Stats, id: string) => recent(st.daily_qstash_messages.find((n) => n.id === id)!.data_points);

test("7 publishes, 5 delivered and 2 failed after a retry each: the statistics count exactly that", async () => {
  const events = recordEvents(s);
  for (let i = 0; i < 5; i++) {
    const res = await s.api(`/v2/publish/${rx.url}/ok/${i}`, { method: "POST", body: "hello", token: ALICE.token });
    expect(res.status).toBe(200);
  }
  for (let i = 0; i < 2; i++) {
    const res = await s.api(`/v2/publish/${rx.url}/fail/${i}`, { method: "POST", body: "hello", token: ALICE.token, headers: { "Svc-Retries": "1" } });
    expect(res.status).toBe(200);
  }
  // Every message ended, as the server's events tell: the two failures can be recorded
  // before the last of the five deliveries is.
  await waitUntil(() => events.all("delivered").length === 5 && events.all("failed").length === 2, { what: "5 deliveries and 2 failures" });
  const st = await stats(ALICE);
  expect(metric(st, "created")).toBe(7);
  expect(metric(st, "delivered")).toBe(5);
  expect(metric(st, "failed")).toBe(2);
  expect(metric(st, "retry")).toBe(2);
  expect(metric(st, "error")).toBe(4);
  expect(metric(st, "canceled")).toBe(0);
  expect(recent(st.daily_used)).toBe(7);
  expect(recent(st.daily_bandwidth_used)).toBeGreaterThanOrEqual(7 * 5);
  expect(st.dlq_message_count).toBe(2);
  // Default plan price: 1 USD per 100,000 messages.
  expect(st.total_monthly_billing).toBeCloseTo(7 / 100_000, 10);
  expect(st.daily_billings.reduce((sum, p) => sum + p.y, 0)).toBeCloseTo(st.total_monthly_billing, 10);

  const other = await stats(BOB);
  expect(other.dlq_message_count).toBe(0);
  expect(other.total_monthly_billing).toBe(0);
  for (const named of other.daily_qstash_messages) expect(named.data_points.every((p) => p.y === 0)).toBe(true);
  events.stop();
});

test("POST /__svc/reset wipes the caller's statistics and leaves the other account's", async () => {
  await s.api(`/v2/publish/${rx.url}/ok/bob`, { method: "POST", body: "b", token: BOB.token });
  await waitUntil(async () => metric(await stats(BOB), "delivered") === 1, { what: "Bob's delivery" });
  const reset = await s.api("/__svc/reset", { method: "POST", token: ALICE.token });
  expect(reset.status).toBe(200);
  const st = await stats(ALICE);
  expect(st.dlq_message_count).toBe(0);
  expect(st.total_monthly_billing).toBe(0);
  for (const named of st.daily_qstash_messages) expect(named.data_points.every((p) => p.y === 0)).toBe(true);
  expect(metric(await stats(BOB), "delivered")).toBe(1);
});
