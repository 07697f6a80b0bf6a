import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { ManualClock } from "../../src/core/clock.ts";
import { account, jsonBody } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const MIN = 60_000;
const T0 = Date.UTC(2031, 0, 6, 12, 0, 30); // a Monday, 30 s into 12:00 UTC
const at = (h: number, m: number, s = 0) => Date.UTC(2031, 0, 6, h, m, s);

interface Schedule {
  scheduleId: string;
  cron: string;
  destination: string;
  createdAt: number;
  method: string;
  isPaused: boolean;
  header?: Record<string, string[]>;
  body?: string;
  retries?: number;
  delay?: number;
  queueName?: string;
  flowControlKey?: string;
  rate?: number;
  period?: number;
  lastScheduleTime?: number;
  nextScheduleTime?: number;
  lastScheduleStates?: Record<string, string>;
}

let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver((req) => new Response("", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(() => rx.stop());

async function createSchedule(s: TestServer, destination: string, headers: Record<string, string>, body?: string) {
  const res = await s.api(`/v2/schedules/${destination}`, { method: "POST", headers, body });
  const json = (await res.json()) as { scheduleId: string; error?: string };
  return { status: res.status, ...json };
}
const getSchedule = async (s: TestServer, id: string) => (await (await s.api(`/v2/schedules/${id}`)).json()) as Schedule;
const hits = (path: string) => rx.received.filter((r) => r.path === path);

describe("schedules on a manual clock", () => {
  let s: TestServer;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(T0);
    s = await startTestServer({ clock });
  });
  afterAll(() => s.stop());

  test("GET /v2/schedules answers [] on a fresh server", async () => {
    const res = await s.api("/v2/schedules");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([]);
  });

  test("`* * * * *` fires on the minute with the schedule id and every publish header; pause stops it, resume restarts it", async () => {
    const created = await createSchedule(
      s,
      `${rx.url}/every-minute`,
      { "Svc-Cron": "* * * * *", "Svc-Method": "PUT", "Svc-Forward-X-From": "schedule", "Content-Type": "text/plain", "Svc-Retries": "2" },
      "tick",
    );
    expect(created.status).toBe(200);
    expect(created.scheduleId).toMatch(/^scd_/);
    const id = created.scheduleId;

    const fresh = await getSchedule(s, id);
    expect(fresh).toMatchObject({ scheduleId: id, cron: "* * * * *", destination: `${rx.url}/every-minute`, method: "PUT", isPaused: false, body: "tick", retries: 2 });
    expect(fresh.createdAt).toBe(T0);
    expect(fresh.header).toEqual({ "Content-Type": ["text/plain"], "X-From": ["schedule"] });
    expect(fresh.nextScheduleTime).toBe(at(12, 1));
    expect(fresh.lastScheduleTime).toBeUndefined();
    expect(fresh.lastScheduleStates).toBeUndefined();

    clock.advanceTo(at(12, 0, 59));
    clock.advanceTo(at(12, 1));
    const [first] = await rx.waitFor(1, { match: (r) => r.path === "/every-minute" });
    expect(first!.method).toBe("PUT");
    expect(first!.text).toBe("tick");
    expect(first!.headers.get("svc-schedule-id")).toBe(id);
    expect(first!.headers.get("x-from")).toBe("schedule");
    const messageId = first!.headers.get("svc-message-id")!;

    const afterFirst = await waitUntil(async () => {
      const sc = await getSchedule(s, id);
      return sc.lastScheduleStates?.[messageId] === "SUCCESS" ? sc : null;
    });
    expect(afterFirst.lastScheduleTime).toBe(at(12, 1));
    expect(afterFirst.nextScheduleTime).toBe(at(12, 2));
    expect(afterFirst.lastScheduleStates).toEqual({ [messageId]: "SUCCESS" });
    const logs = (await (await s.api(`/v2/logs?scheduleId=${id}&state=CREATED`)).json()) as { logs: Array<{ messageId: string }> };
    expect(logs.logs.map((l) => l.messageId)).toEqual([messageId]);

    // Paused: the trigger is skipped, nextScheduleTime keeps moving.
    expect((await s.api(`/v2/schedules/${id}/pause`, { method: "PATCH" })).status).toBe(200);
    expect((await getSchedule(s, id)).isPaused).toBe(true);
    clock.advanceTo(at(12, 2));
    const paused = await waitUntil(async () => {
      const sc = await getSchedule(s, id);
      return sc.nextScheduleTime === at(12, 3) ? sc : null;
    });
    expect(paused.lastScheduleTime).toBe(at(12, 1));
    expect(hits("/every-minute")).toHaveLength(1);

    expect((await s.api(`/v2/schedules/${id}/resume`, { method: "POST" })).status).toBe(200);
    expect((await getSchedule(s, id)).isPaused).toBe(false);
    clock.advanceTo(at(12, 3));
    const [, second] = await rx.waitFor(2, { match: (r) => r.path === "/every-minute" });
    expect(second!.headers.get("svc-schedule-id")).toBe(id);
    expect(hits("/every-minute")).toHaveLength(2);

    expect((await s.api(`/v2/schedules/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.api(`/v2/schedules/${id}`)).status).toBe(404);
    // Deletes are idempotent: clients delete before they create.
    expect((await s.api(`/v2/schedules/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.api(`/v2/schedules/${id}/pause`, { method: "POST" })).status).toBe(404);
  });

  test("lastScheduleStates records a failure", async () => {
    const { scheduleId } = await createSchedule(s, `${rx.url}/fail/scheduled`, { "Svc-Cron": "*/5 * * * *", "Svc-Retries": "0" });
    const { nextScheduleTime } = await getSchedule(s, scheduleId);
    expect(nextScheduleTime).toBe(at(12, 5));
    clock.advanceTo(at(12, 5));
    const failed = await waitUntil(async () => {
      const sc = await getSchedule(s, scheduleId);
      return Object.values(sc.lastScheduleStates ?? {}).includes("FAIL") ? sc : null;
    });
    expect(Object.values(failed.lastScheduleStates!)).toEqual(["FAIL"]);
    const dlq = (await (await s.api(`/v2/dlq?scheduleId=${scheduleId}`)).json()) as { messages: Array<{ scheduleId: string }> };
    expect(dlq.messages[0]!.scheduleId).toBe(scheduleId);
    await s.api(`/v2/schedules/${scheduleId}`, { method: "DELETE" });
  });

  test("a schedule to a URL Group, into a queue, with flow control: every message carries the schedule id", async () => {
    await s.api("/v2/topics/sched-group/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/sg/a`, name: "a" }, { url: `${rx.url}/sg/b` }] }));
    const { scheduleId, status } = await createSchedule(s, "sched-group", {
      "Svc-Cron": "10 12 * * *",
      "Svc-Schedule-Id": "daily-report",
      "Svc-Queue-Name": "reports",
      "Svc-Flow-Control-Key": "reports-key",
      "Svc-Flow-Control-Value": "rate=5, period=1m",
      "Svc-Delay": "0s",
    });
    expect(status).toBe(200);
    expect(scheduleId).toBe("daily-report");
    const view = await getSchedule(s, "daily-report");
    expect(view).toMatchObject({ destination: "sched-group", queueName: "reports", flowControlKey: "reports-key", rate: 5, period: 60 });
    expect(view.nextScheduleTime).toBe(at(12, 10));
    clock.advanceTo(at(12, 10));
    const got = await rx.waitFor(2, { match: (r) => r.path.startsWith("/sg/") });
    for (const r of got) {
      expect(r.headers.get("svc-schedule-id")).toBe("daily-report");
      expect(r.headers.get("svc-topic-name")).toBe("sched-group");
    }
    const states = await waitUntil(async () => {
      const st = (await getSchedule(s, "daily-report")).lastScheduleStates ?? {};
      return Object.keys(st).length === 2 && Object.values(st).every((v) => v === "SUCCESS") ? st : null;
    });
    expect(Object.keys(states).sort()).toEqual(got.map((r) => r.headers.get("svc-message-id")!).sort());
    const queue = (await (await s.api("/v2/queues/reports")).json()) as { name: string; lag: number };
    expect(queue).toMatchObject({ name: "reports", lag: 0 });
  });

  test("Svc-Schedule-Id replaces an existing schedule; CRON_TZ is honoured", async () => {
    const first = await createSchedule(s, `${rx.url}/replaced`, { "Svc-Cron": "0 0 * * *", "Svc-Schedule-Id": "replace-me" });
    expect(first.status).toBe(200);
    const second = await createSchedule(s, `${rx.url}/replaced-2`, {
      "Svc-Cron": "CRON_TZ=America/New_York 0 9 * * *",
      "Svc-Schedule-Id": "replace-me",
    });
    expect(second.scheduleId).toBe("replace-me");
    const list = (await (await s.api("/v2/schedules")).json()) as Schedule[];
    expect(list.filter((x) => x.scheduleId === "replace-me")).toHaveLength(1);
    const view = await getSchedule(s, "replace-me");
    expect(view.destination).toBe(`${rx.url}/replaced-2`);
    expect(view.cron).toBe("CRON_TZ=America/New_York 0 9 * * *");
    expect(view.nextScheduleTime).toBe(at(14, 0)); // 09:00 in New York in January
  });

  test("invalid input: 400 for a bad or missing cron, a bad header, a bad id; 404 for an unknown group", async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [`${rx.url}/x`, { "Svc-Cron": "61 * * * *" }, 400, "Svc-Cron"],
      [`${rx.url}/x`, { "Svc-Cron": "* * * * * *" }, 400, "Svc-Cron"],
      [`${rx.url}/x`, { "Svc-Cron": "CRON_TZ=Nowhere/Land * * * * *" }, 400, "time zone"],
      [`${rx.url}/x`, {}, 400, "Svc-Cron"],
      [`${rx.url}/x`, { "Svc-Cron": "* * * * *", "Svc-Retries": "many" }, 400, "Svc-Retries"],
      [`${rx.url}/x`, { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "no spaces allowed" }, 400, "Svc-Schedule-Id"],
      ["no-such-group", { "Svc-Cron": "* * * * *" }, 404, "no-such-group"],
      ["ftp://example.com/x", { "Svc-Cron": "* * * * *" }, 400, "destination"],
    ];
    for (const [destination, headers, status, mention] of cases) {
      const res = await createSchedule(s, destination, headers);
      expect({ destination, headers, status: res.status }).toEqual({ destination, headers, status });
      expect(res.error).toContain(mention);
    }
  });
});

describe("schedule limits and isolation", () => {
  test("the plan's schedule limit is 412; another account's schedules are 404", async () => {
    const small = account("small", { plan: "free" });
    const s = await startTestServer({ configFile: { plans: { free: { maxSchedules: 2 } }, accounts: [account("big"), small] } });
    try {
      const headers = { "Svc-Cron": "0 * * * *", authorization: `Bearer ${small.token}` };
      expect((await createSchedule(s, `${rx.url}/l`, { ...headers, "Svc-Schedule-Id": "one" })).status).toBe(200);
      expect((await createSchedule(s, `${rx.url}/l`, { ...headers, "Svc-Schedule-Id": "two" })).status).toBe(200);
      const third = await createSchedule(s, `${rx.url}/l`, { ...headers, "Svc-Schedule-Id": "three" });
      expect(third.status).toBe(412);
      expect(third.error).toContain("schedules");
      // Replacing one is not a new schedule.
      expect((await createSchedule(s, `${rx.url}/l2`, { ...headers, "Svc-Schedule-Id": "two" })).status).toBe(200);

      expect((await s.api("/v2/schedules/one")).status).toBe(404);
      expect(await (await s.api("/v2/schedules")).json()).toEqual([]);
      expect((await s.api("/v2/schedules/one/pause", { method: "POST" })).status).toBe(404);
      // Deleting another account's schedule answers as for a missing one, and leaves it.
      expect((await s.api("/v2/schedules/one", { method: "DELETE" })).status).toBe(200);
      expect(((await (await s.api("/v2/schedules", { token: small.token })).json()) as Schedule[]).map((x) => x.scheduleId).sort()).toEqual(["one", "two"]);
    } finally {
      await s.stop();
    }
  });
});

describe("schedules across restarts", () => {
  test("a restart never fires the same minute twice; a trigger missed while down fires once at start", async () => {
    const clockA = new ManualClock(T0);
    const a = await startTestServer({ clock: clockA });
    const dbPath = a.config.dbPath!;
    const dirs = [a.dir];
    const servers: TestServer[] = [];
    const countCreated = async (s: TestServer) =>
      ((await (await s.api("/v2/logs?scheduleId=survivor&state=CREATED")).json()) as { logs: unknown[] }).logs.length;
    // A publish answered 200 was committed after anything queued before it (a catch-up trigger).
    const barrier = async (s: TestServer) => {
      const res = await s.api(`/v2/publish/${rx.url}/barrier`, { method: "POST" });
      expect(res.status).toBe(200);
    };
    try {
      expect((await createSchedule(a, `${rx.url}/survivor`, { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "survivor" })).status).toBe(200);
      clockA.advanceTo(at(12, 1));
      await rx.waitFor(1, { match: (r) => r.path === "/survivor" });
      await waitUntil(async () => (await getSchedule(a, "survivor")).lastScheduleTime === at(12, 1));
      await a.server.stop({ deadlineMs: 500 });

      // Same minute: nothing fires again.
      const clockB = new ManualClock(at(12, 1, 20));
      const b = await startTestServer({ clock: clockB, config: { dbPath } });
      servers.push(b);
      dirs.push(b.dir);
      await barrier(b);
      expect(await countCreated(b)).toBe(1);
      expect((await getSchedule(b, "survivor")).nextScheduleTime).toBe(at(12, 2));
      clockB.advanceTo(at(12, 2));
      await rx.waitFor(2, { match: (r) => r.path === "/survivor" });
      await waitUntil(async () => (await getSchedule(b, "survivor")).lastScheduleTime === at(12, 2));
      await b.server.stop({ deadlineMs: 500 });
      servers.pop();

      // Down from 12:02:00 to 12:05:10: 12:03, 12:04 and 12:05 were missed; they fire once, at start.
      const clockC = new ManualClock(at(12, 5, 10));
      const c = await startTestServer({ clock: clockC, config: { dbPath } });
      servers.push(c);
      dirs.push(c.dir);
      await rx.waitFor(3, { match: (r) => r.path === "/survivor" });
      const caughtUp = await waitUntil(async () => {
        const sc = await getSchedule(c, "survivor");
        return sc.lastScheduleTime === at(12, 5, 10) ? sc : null;
      });
      expect(caughtUp.nextScheduleTime).toBe(at(12, 6));
      await barrier(c);
      expect(await countCreated(c)).toBe(3);
      expect(hits("/survivor")).toHaveLength(3);
    } finally {
      for (const s of servers) await s.server.stop({ deadlineMs: 500 });
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a manual-clock jump fires every trigger it passes while the server runs", async () => {
    const clock = new ManualClock(T0);
    const s = await startTestServer({ clock });
    try {
      await createSchedule(s, `${rx.url}/jump`, { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "jumper" });
      clock.advanceTo(T0 + 5 * MIN); // 12:05:30: 12:01 .. 12:05
      await rx.waitFor(5, { match: (r) => r.path === "/jump" });
      const sc = await waitUntil(async () => {
        const v = await getSchedule(s, "jumper");
        return v.lastScheduleTime === at(12, 5) ? v : null;
      });
      expect(sc.nextScheduleTime).toBe(at(12, 6));
      expect(hits("/jump")).toHaveLength(5);
    } finally {
      await s.stop();
    }
  });
});

describe("test-double reset", () => {
  test("wipes the account's groups, queues, schedules (their timers too) and dedup keys", async () => {
    const clock = new ManualClock(T0);
    const s = await startTestServer({ clock });
    try {
      await s.api("/v2/topics/g/endpoints", jsonBody("POST", { endpoints: [{ url: `${rx.url}/reset/g` }] }));
      await s.api("/v2/queues", jsonBody("POST", { queueName: "q", parallelism: 2 }));
      await createSchedule(s, `${rx.url}/reset/scheduled`, { "Svc-Cron": "* * * * *", "Svc-Schedule-Id": "wiped" });
      const dedup = { "Svc-Deduplication-Id": "once" };
      expect((await s.api(`/v2/publish/${rx.url}/reset/dedup`, { method: "POST", headers: dedup })).status).toBe(200);

      const res = await s.api("/__svc/reset", { method: "POST" });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { parts: string[] }).parts).toEqual(expect.arrayContaining(["url-groups", "queues", "schedules", "dedup"]));
      for (const path of ["/v2/topics", "/v2/queues", "/v2/schedules"]) expect(await (await s.api(path)).json()).toEqual([]);
      expect((await s.api(`/v2/publish/${rx.url}/reset/dedup`, { method: "POST", headers: dedup })).status).toBe(200);

      clock.advanceTo(at(12, 1));
      const probe = await s.api(`/v2/publish/${rx.url}/reset/probe`, { method: "POST" });
      const { messageId } = (await probe.json()) as { messageId: string };
      await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === messageId });
      expect(hits("/reset/scheduled")).toHaveLength(0);
    } finally {
      await s.stop();
    }
  });
});
