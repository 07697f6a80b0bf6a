import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { defaultBackoffMs } from "../../src/delivery/backoff.ts";
import { advance, flush, json } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

const HOUR = 3600_000;
const DAY = 24 * HOUR;

let manual: TestServer;
let real: TestServer;
let rx: Receiver;

beforeAll(async () => {
  [manual, real] = await Promise.all([startTestServer({ config: { clock: "manual" } }), startTestServer()]);
  rx = await startReceiver((req) => new Response(req.path.startsWith("/fail") ? "no" : "ok", { status: req.path.startsWith("/fail") ? 500 : 200 }));
});
afterAll(async () => {
  rx.stop();
  await Promise.all([manual.stop(), real.stop()]);
});

const now = async (s: TestServer) => ((await (await s.api("/__svc/clock")).json()) as { now: number; mode: string });
const at = (path: string) => rx.received.filter((r) => r.path === path);
async function publish(path: string, headers: Record<string, string> = {}) {
  const res = await manual.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}
const dlqOf = async (messageId: string) =>
  ((await (await manual.api(`/v2/dlq?messageId=${messageId}`)).json()) as { messages: Array<Record<string, unknown>> }).messages;

describe("GET /__svc/clock and the real clock", () => {
  test("the real clock tells the wall-clock time and refuses to be moved (409)", async () => {
    const before = Date.now();
    const clock = await now(real);
    expect(clock.mode).toBe("real");
    expect(clock.now).toBeGreaterThanOrEqual(before);
    expect(clock.now).toBeLessThanOrEqual(Date.now());
    const res = await real.api("/__svc/clock/advance", json({ ms: 1000 }));
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: string }).error).toContain("--clock manual");
  });

  test("the manual clock stands still until advanced, by ms or to an absolute time", async () => {
    const t0 = await now(manual);
    expect(t0.mode).toBe("manual");
    expect((await now(manual)).now).toBe(t0.now);
    expect((await advance(manual.api, { ms: 1500 })).now).toBe(t0.now + 1500);
    expect((await advance(manual.api, { to: t0.now + 10_000 })).now).toBe(t0.now + 10_000);
    expect((await now(manual)).now).toBe(t0.now + 10_000);
    // `curl -d '{"ms":5}'` sends a form Content-Type: the body is read as JSON anyway.
    const curlStyle = await manual.api("/__svc/clock/advance", { method: "POST", body: '{"ms":5}', headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(curlStyle.status).toBe(200);
    expect((await now(manual)).now).toBe(t0.now + 10_005);
  });

  test("backward, missing, doubled or malformed targets are 400 and leave the clock alone", async () => {
    const { now: t } = await now(manual);
    for (const body of [{ to: t - 1 }, {}, { ms: 1, to: t + 5 }, { ms: -5 }, { ms: 1.5 }, { ms: "soon" }]) {
      const res = await manual.api("/__svc/clock/advance", json(body));
      expect(res.status).toBe(400);
      expect(await res.json()).toHaveProperty("error");
    }
    const bad = await manual.api("/__svc/clock/advance", { method: "POST", body: "{not json", headers: { "content-type": "application/json" } });
    expect(bad.status).toBe(400);
    expect((await now(manual)).now).toBe(t);
  });
});

describe("delays and retries follow the manual clock", () => {
  test("a delayed message waits for the clock, to the millisecond", async () => {
    await publish("/delayed", { "Svc-Delay": "1h" });
    await flush(manual.api);
    expect(at("/delayed")).toHaveLength(0);
    await advance(manual.api, { ms: HOUR - 1 }, { flush: true });
    expect(at("/delayed")).toHaveLength(0);
    await advance(manual.api, { ms: 1 }, { flush: true });
    expect(at("/delayed")).toHaveLength(1);
  });

  test("a claim pass of many due messages (one statement for the batch) claims and delivers each once, logged in order", async () => {
    const ids = await Promise.all(Array.from({ length: 40 }, (_, i) => publish(`/many-${i}`, { "Svc-Delay": "1h" })));
    await flush(manual.api);
    await advance(manual.api, { ms: HOUR }, { flush: true });
    for (let i = 0; i < 40; i++) expect(at(`/many-${i}`)).toHaveLength(1);
    for (const id of ids) {
      const logs = (await (await manual.api(`/v2/logs?messageId=${id}`)).json()) as { events: Array<{ state: string }> };
      expect(logs.events.map((e) => e.state).reverse()).toEqual(["CREATED", "ACTIVE", "DELIVERED"]);
    }
  });

  test("3 retries against a failing receiver reach the DLQ after advancing the 3 default backoffs (12 s, 2m28s, 30m8s)", async () => {
    const backoffs = [1, 2, 3].map(defaultBackoffMs);
    expect(backoffs.map((ms) => Math.round(ms / 1000))).toEqual([12, 148, 1808]);
    const id = await publish("/fail/three", { "Svc-Retries": "3" });
    await flush(manual.api);
    expect(at("/fail/three")).toHaveLength(1);
    for (const [i, backoff] of backoffs.entries()) {
      // One ms short of the backoff nothing happens; the last ms brings the next attempt.
      await advance(manual.api, { ms: backoff - 1 }, { flush: true });
      expect(at("/fail/three")).toHaveLength(i + 1);
      await advance(manual.api, { ms: 1 }, { flush: true });
      expect(at("/fail/three")).toHaveLength(i + 2);
    }
    expect(at("/fail/three").map((r) => r.headers.get("svc-retried"))).toEqual(["0", "1", "2", "3"]);
    const [entry] = await dlqOf(id);
    expect(entry).toMatchObject({ messageId: id, maxRetries: 3, responseStatus: 500 });
  });

  test("one flushed advance of a day plays out every retry in order, without real waiting", async () => {
    // Backoffs 12 s, 2m28s, 30m8s, 6h7m: four retries fit in a day.
    const id = await publish("/fail/day", { "Svc-Retries": "4" });
    const t0 = (await now(manual)).now;
    await flush(manual.api);
    // No real waiting: the jump answers once every retry it passed has played out (5 attempts at
    // the server clock's backoff instants, below); 12 s of real backoff would outlast its 10 s limit.
    await advance(manual.api, { ms: DAY }, { flush: true });
    expect(at("/fail/day")).toHaveLength(5);
    const [entry] = await dlqOf(id);
    expect(entry).toMatchObject({ messageId: id, maxRetries: 4 });
    // The attempts happened at the backoff instants of the server clock, not at the end of the jump.
    const logs = ((await (await manual.api(`/v2/logs?messageId=${id}&state=ACTIVE`)).json()) as { logs: Array<{ time: number }> }).logs;
    const expected = [0, 1, 2, 3].reduce((times, n) => [...times, times[times.length - 1]! + defaultBackoffMs(n + 1)], [t0]);
    expect(logs.map((l) => l.time).reverse()).toEqual(expected);
  });

  test("without flush an advance hands the due attempt to the dispatcher and answers", async () => {
    await publish("/later/no-flush", { "Svc-Delay": "10s" });
    await flush(manual.api);
    const res = await advance(manual.api, { ms: 10_000 });
    expect(res.timersFired).toBeGreaterThanOrEqual(1);
    await rx.waitFor(1, { match: (r) => r.path === "/later/no-flush" });
  });
});

describe("flow-control periods follow the manual clock", () => {
  test("rate 1 per hour: one flushed advance of 3 hours delivers the 3 messages an hour apart", async () => {
    const headers = { "Svc-Flow-Control-Key": "hourly-key", "Svc-Flow-Control-Value": "rate=1, period=1h" };
    const ids = [await publish("/flow/1", headers), await publish("/flow/2", headers), await publish("/flow/3", headers)];
    const t0 = (await now(manual)).now;
    await flush(manual.api);
    expect(rx.received.filter((r) => r.path.startsWith("/flow/"))).toHaveLength(1);
    await advance(manual.api, { ms: 3 * HOUR }, { flush: true });
    expect(rx.received.filter((r) => r.path.startsWith("/flow/")).map((r) => r.path)).toEqual(["/flow/1", "/flow/2", "/flow/3"]);
    const deliveredAt = await Promise.all(
      ids.map(async (id) => ((await (await manual.api(`/v2/logs?messageId=${id}&state=DELIVERED`)).json()) as { logs: Array<{ time: number }> }).logs[0]!.time),
    );
    expect(deliveredAt).toEqual([t0, t0 + HOUR, t0 + 2 * HOUR]);
  });
});

describe("cron schedules follow the manual clock", () => {
  test("a `0 * * * *` schedule fires 24 times over a one-day advance, each at its own hour", async () => {
    const res = await manual.api(`/v2/schedules/${rx.url}/hourly`, { method: "POST", body: "tick", headers: { "Svc-Cron": "0 * * * *" } });
    expect(res.status).toBe(200);
    const { scheduleId } = (await res.json()) as { scheduleId: string };
    const start = (await now(manual)).now;
    const result = await advance(manual.api, { ms: DAY });
    expect(result.now).toBe(start + DAY);
    await flush(manual.api);
    const ticks = at("/hourly");
    expect(ticks).toHaveLength(24);
    expect(new Set(ticks.map((r) => r.headers.get("svc-schedule-id")))).toEqual(new Set([scheduleId]));
    // Each trigger's message was created at its own full hour, not at the end of the jump.
    const created = ((await (await manual.api(`/v2/logs?scheduleId=${scheduleId}&state=CREATED`)).json()) as { logs: Array<{ time: number }> }).logs;
    const firstHour = Math.ceil((start + 1) / HOUR) * HOUR;
    expect(created.map((l) => l.time).sort((a, b) => a - b)).toEqual(Array.from({ length: 24 }, (_, i) => firstHour + i * HOUR));
    expect((await manual.api(`/v2/schedules/${scheduleId}`, { method: "DELETE" })).status).toBe(200);
  });
});
