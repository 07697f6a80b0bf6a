import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { MetricsEngine } from "../../src/metrics/engine.ts";
import { PERIOD_NAMES } from "../../src/metrics/time.ts";
import { MessagingMetric } from "../../src/metrics/usage.ts";
import {
  expectDailySeries, expectJsonError, expectPeriodSeries, MESSAGING_STATS_FIELDS, parseX, type Point,
} from "../helpers/management.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const NOW = Date.UTC(2026, 10, 22, 10, 17, 30, 250);
const MONTH_START = Date.UTC(2026, 10, 1);
const PRICE = 2.5;
const ALICE = { email: "alice@example.com", apiKey: "alice-key", userId: "alice", token: "alice-token", plan: "payg" as const };
const BOB = { email: "bob@example.com", apiKey: "bob-key", userId: "bob", token: "bob-token", plan: "free" as const };
const configFile: ConfigFile = { plans: { payg: { pricePer100k: PRICE } }, accounts: [ALICE, BOB] };

interface Named {
  id: string;
  data_points: Point[];
}
type Stats = {
  days: string[];
  daily_requests: Array<Point & { workflow_message: number; workflow_run: number }>;
  daily_billings: Point[];
  daily_bandwidths: Point[];
  daily_used: Point[];
  daily_used_workflow: Point[];
  daily_qstash_messages: Named[];
  daily_workflow_messages: Named[];
  dlq_message_count: number;
  daily_bandwidth_used: Point[];
  total_monthly_billing: number;
};

let s: TestServer;
/** Records the way the messaging engine does: `count(accountId, MessagingMetric.x, n, atMs)`. */
let recorder: MetricsEngine;
beforeAll(async () => {
  const clock = new ManualClock(NOW);
  s = await startTestServer({ configFile, clock });
  recorder = new MetricsEngine(s.server.storage.stores.rollups, clock);
});
afterAll(() => s.stop());

const stats = async (period?: string, as: { userId: string; email: string; apiKey: string } = ALICE) => {
  const res = await s.mgmt(`/v2/svc/stats/${as.userId}${period ? `?period=${period}` : ""}`, { email: as.email, apiKey: as.apiKey });
  expect(res.status).toBe(200);
  return (await res.json()) as Stats;
};
const series = (st: Stats, id: string) => st.daily_qstash_messages.find((n) => n.id === id)!.data_points;
const lastY = (points: Point[]) => points.at(-1)!.y;

describe("GET /v2/svc/stats/{id}: shape", () => {
  test("every documented field, in order, nothing else", async () => {
    expect(Object.keys(await stats())).toEqual(MESSAGING_STATS_FIELDS);
  });

  test("for every period: 60 points (240 for 30d), one step apart, aligned, last holding now", async () => {
    for (const period of PERIOD_NAMES) {
      const st = await stats(period);
      for (const points of [st.daily_used, st.daily_used_workflow, st.daily_bandwidth_used]) expectPeriodSeries(points, period, NOW);
      for (const named of [...st.daily_qstash_messages, ...st.daily_workflow_messages]) {
        expect(Object.keys(named)).toEqual(["id", "data_points"]);
        expectPeriodSeries(named.data_points, period, NOW);
      }
    }
  });

  test("named series ids", async () => {
    const st = await stats();
    expect(st.daily_qstash_messages.map((n) => n.id)).toEqual(["delivered", "failed", "retry", "error", "canceled", "created"]);
    expect(st.daily_workflow_messages.length).toBeGreaterThan(0);
  });

  test("days and daily arrays cover every day of the month, future days included", async () => {
    const st = await stats();
    expect(st.days).toHaveLength(30);
    expect(st.days[0]).toBe("Sunday"); // 1 Nov 2026
    for (const points of [st.daily_requests, st.daily_billings, st.daily_bandwidths]) expectDailySeries(points, st.days, MONTH_START);
    for (const p of st.daily_requests) expect(Object.keys(p)).toEqual(["x", "y", "workflow_message", "workflow_run"]);
  });

  test("missing period means 1h; anything else is 400", async () => {
    expectPeriodSeries((await stats()).daily_used, "1h", NOW);
    for (const bad of ["2h", "week", "", "30"])
      expect(await expectJsonError(await s.mgmt(`/v2/svc/stats/${ALICE.userId}?period=${bad}`), 400)).toContain("period");
  });

  test("{id} must be the caller's own user id (404), credentials are required (401)", async () => {
    await expectJsonError(await s.mgmt(`/v2/svc/stats/${BOB.userId}`), 404);
    await expectJsonError(await s.mgmt(`/v2/svc/stats/nobody`), 404);
    const res = await s.mgmt(`/v2/svc/stats/${ALICE.userId}`, { noAuth: true });
    await expectJsonError(res, 401);
    expect(res.headers.get("www-authenticate")).toStartWith("Basic");
  });
});

describe("GET /v2/svc/stats/{id}: activity", () => {
  test("7 messages, 5 delivered, 2 failed after one retry each (recorded as the messaging engine records)", async () => {
    const at = NOW - 1000;
    for (let i = 0; i < 7; i++) {
      recorder.count(ALICE.userId, MessagingMetric.requests, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.created, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.billable, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.bandwidth, 100, at);
    }
    recorder.count(ALICE.userId, MessagingMetric.delivered, 5, at);
    for (let i = 0; i < 2; i++) {
      recorder.count(ALICE.userId, MessagingMetric.error, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.retry, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.error, 1, at);
      recorder.count(ALICE.userId, MessagingMetric.failed, 1, at);
    }
    await recorder.flush();

    for (const period of PERIOD_NAMES) {
      const st = await stats(period);
      expect(lastY(series(st, "delivered"))).toBe(5);
      expect(lastY(series(st, "failed"))).toBe(2);
      expect(lastY(series(st, "retry"))).toBe(2);
      expect(lastY(series(st, "error"))).toBe(4);
      expect(lastY(series(st, "created"))).toBe(7);
      expect(lastY(series(st, "canceled"))).toBe(0);
      expect(lastY(st.daily_used)).toBe(7);
      expect(st.daily_used.reduce((a, p) => a + p.y, 0)).toBe(7);
      expect(lastY(st.daily_bandwidth_used)).toBe(700);
      expect(st.daily_used_workflow.every((p) => p.y === 0)).toBe(true);
    }

    const st = await stats("1h");
    const today = st.daily_requests.findIndex((p) => parseX(p.x) === Date.UTC(2026, 10, 22));
    expect(today).toBe(21);
    expect(st.daily_requests[today]).toEqual({ x: "2026-11-22 00:00:00 +0000 UTC", y: 7, workflow_message: 0, workflow_run: 0 });
    expect(st.daily_bandwidths[today]!.y).toBe(700);
    expect(st.daily_billings[today]!.y).toBeCloseTo((7 / 100_000) * PRICE, 12);
    expect(st.daily_requests.slice(today + 1).every((p) => p.y === 0)).toBe(true);
    expect(st.total_monthly_billing).toBe(st.daily_billings.reduce((a, p) => a + p.y, 0));
    expect(st.total_monthly_billing).toBeCloseTo((7 / 100_000) * PRICE, 12);

    const bob = await stats("1h", BOB);
    expect(bob.daily_used.every((p) => p.y === 0)).toBe(true);
    expect(bob.daily_qstash_messages.every((n) => n.data_points.every((p) => p.y === 0))).toBe(true);
    expect(bob.daily_requests.every((p) => p.y === 0)).toBe(true);
    expect(bob.total_monthly_billing).toBe(0);
    expect(bob.dlq_message_count).toBe(0);
  });

  test("earlier days of the month are billed on their own day", async () => {
    recorder.count(BOB.userId, MessagingMetric.billable, 300_000, Date.UTC(2026, 10, 3, 12));
    await recorder.flush();
    const st = await stats("1h", BOB);
    expect(st.daily_billings[2]!.y).toBe(3); // free plan: 1 USD per 100,000
    expect(st.total_monthly_billing).toBe(3);
  });

});

describe("upstash dialect", () => {
  test("the statistics live under /v2/qstash/stats/{id}", async () => {
    const up = await startTestServer({ configFile, config: { dialect: "upstash" } });
    try {
      const res = await up.mgmt(`/v2/qstash/stats/${ALICE.userId}?period=3h`);
      expect(res.status).toBe(200);
      expect(Object.keys(await res.json())).toEqual(MESSAGING_STATS_FIELDS);
      expect((await up.mgmt(`/v2/svc/stats/${ALICE.userId}`)).status).toBe(404);
    } finally {
      await up.stop();
    }
  });
});
