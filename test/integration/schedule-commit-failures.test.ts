import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_METRICS_TOKEN } from "../../src/config/config.ts";
import { ManualClock } from "../../src/core/clock.ts";
import { whileCommitsFail } from "../helpers/commit-failures.ts";
import { flush } from "../helpers/control.ts";
import { parseExposition } from "../helpers/prometheus.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * A schedule's trigger whose transaction fails (the storage refused it) is tried again shortly:
 * its slot fires late rather than never, and the schedule goes on. On PostgreSQL the next slot's
 * trigger would otherwise find the schedule's next run time still at the refused slot and take it
 * for a slot another node fired: the schedule fired no more until a restart.
 */

const T0 = Date.UTC(2030, 0, 1, 12, 0, 0);
let s: TestServer;
let rx: Receiver;
let clock: ManualClock;

beforeAll(async () => {
  clock = new ManualClock(T0);
  s = await startTestServer({ clock });
  rx = await startReceiver();
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const refusedWrites = async () => {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${DEFAULT_METRICS_TOKEN}` } });
  return parseExposition(await res.text()).value("svcd_storage_writes_refused_total");
};

test("a trigger the storage refused fires once it answers again, and the next slots fire on time", async () => {
  const cron = { "Svc-Cron": "* * * * *" };
  const res = await s.api(`/v2/schedules/${rx.url}/every-minute`, { method: "POST", body: "tick", headers: cron });
  expect(res.status).toBe(200);
  const { scheduleId } = (await res.json()) as { scheduleId: string };
  const deliveries = () => rx.received.filter((r) => r.path === "/every-minute");

  // Every log entry fails now: the 12:01 trigger's transaction is refused.
  await whileCommitsFail(s, "1 = 1", async () => {
    clock.advanceTo(T0 + 60_000);
    await waitUntil(async () => (await refusedWrites()) > 0, { what: "the refused trigger" });
  });
  expect(deliveries()).toHaveLength(0);
  // Tried again a moment later, with the storage answering: the 12:01 slot fires.
  clock.advanceTo(T0 + 65_000);
  await rx.waitFor(1, { match: (r) => r.path === "/every-minute" });
  // And the schedule goes on: 12:02, 12:03.
  for (const minute of [2, 3]) {
    clock.advanceTo(T0 + minute * 60_000);
    await rx.waitFor(minute, { match: (r) => r.path === "/every-minute" });
  }
  // Once each: the refused slot's second try armed no second timer for the next slots.
  await flush(s.api);
  expect(deliveries()).toHaveLength(3);
  type Times = { lastScheduleTime: number; nextScheduleTime: number };
  const schedule = (await (await s.api(`/v2/schedules/${scheduleId}`)).json()) as Times;
  expect(schedule.lastScheduleTime).toBe(T0 + 3 * 60_000);
  expect(schedule.nextScheduleTime).toBe(T0 + 4 * 60_000);
});
