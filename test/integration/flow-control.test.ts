import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { ManualClock } from "../../src/core/clock.ts";
import { account } from "../helpers/accounts.ts";
import { advance, flush } from "../helpers/control.ts";
import type { FlowControlView } from "../../src/flow-control/service.ts";
import { recordEvents } from "../helpers/events.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

type FlowView = FlowControlView;

/** Per path: requests being answered now, the most at once, and [start, end] of each. */
class Concurrency {
  now = new Map<string, number>();
  max = new Map<string, number>();
  spans = new Map<string, Array<[number, number]>>();
  enter(lane: string) {
    this.now.set(lane, (this.now.get(lane) ?? 0) + 1);
    this.max.set(lane, Math.max(this.max.get(lane) ?? 0, this.now.get(lane)!));
    return performance.now();
  }
  leave(lane: string, started: number) {
    this.now.set(lane, this.now.get(lane)! - 1);
    (this.spans.get(lane) ?? this.spans.set(lane, []).get(lane)!).push([started, performance.now()]);
  }
}

const other = account("other");
let s: TestServer;
let rx: Receiver;
const c = new Concurrency();
/** Requests to /blocked/... wait until the test opens the gate. */
let openGate: () => void = () => {};
let gate = new Promise<void>((resolve) => (openGate = resolve));

beforeAll(async () => {
  s = await startTestServer({ config: { retryDelayScale: 0.001 }, configFile: { accounts: [account("main"), other] } });
  rx = await startReceiver(async (req) => {
    const lane = req.path.split("/")[1]!;
    const t0 = c.enter(lane);
    if (lane === "blocked") await gate;
    if (lane.startsWith("slow")) await Bun.sleep(60);
    if (lane === "paced") await Bun.sleep(2);
    c.leave(lane, t0);
    return new Response("ok");
  });
});
afterAll(async () => {
  openGate();
  rx.stop();
  await s.stop();
});

async function publish(path: string, key: string, value: string, opts: { token?: string; body?: string } = {}, server = s) {
  const res = await server.api(`/v2/publish/${rx.url}${path}`, {
    method: "POST",
    body: opts.body ?? "",
    token: opts.token,
    headers: { "Svc-Flow-Control-Key": key, "Svc-Flow-Control-Value": value },
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}
const flowOf = async (key: string, token?: string) => (await (await s.api(`/v2/flowControl/${key}`, { token })).json()) as FlowView;

describe("flow control", () => {
  test("rate=10, period=1s on 50 messages: never more than 10 deliveries started in any 1-second window", async () => {
    const events = recordEvents(s);
    const ids = new Set(await Promise.all(Array.from({ length: 50 }, (_, i) => publish("/rate", "rate-key", "rate=10, period=1s", { body: String(i) }))));
    const got = await rx.waitFor(50, { match: (r) => r.path === "/rate", timeoutMs: 15_000 });
    expect(new Set(got.map((r) => r.text)).size).toBe(50);
    // The limit is on starts: when the server began each attempt (a request's arrival at the
    // receiver comes later, by however long a loaded machine takes to carry it).
    const startsRecorded = () => events.all("delivered").flatMap((e) => (ids.has(e.message.id) ? [e.outcome.startedAt] : []));
    await waitUntil(() => startsRecorded().length === 50, { what: "50 recorded deliveries" });
    const starts = startsRecorded().sort((a, b) => a - b);
    events.stop();
    // Any 11 consecutive starts span at least a second.
    const spans = starts.slice(10).map((t, i) => t - starts[i]!);
    expect(Math.min(...spans)).toBeGreaterThanOrEqual(1000);
    // That the limit is a rate, not a trickle (each period lets the next 10 go at once), is
    // counted on a manual clock below: here, wall-clock time would decide.
  }, 20_000);

  test("parallelism=2 with a slow receiver: never more than 2 in flight, all delivered", async () => {
    await Promise.all(Array.from({ length: 10 }, (_, i) => publish("/slow-par", "par-key", "parallelism=2", { body: String(i) })));
    await rx.waitFor(10, { match: (r) => r.path === "/slow-par" });
    await waitUntil(() => c.spans.get("slow-par")?.length === 10);
    expect(c.max.get("slow-par")).toBe(2);
  });

  test("two keys do not limit each other, nor do two accounts' keys of the same name", async () => {
    await Promise.all([
      ...Array.from({ length: 4 }, () => publish("/slow-a", "key-a", "parallelism=1")),
      ...Array.from({ length: 4 }, () => publish("/slow-b", "key-b", "parallelism=1")),
      ...Array.from({ length: 4 }, () => publish("/slow-same", "same-name", "parallelism=1")),
      ...Array.from({ length: 4 }, () => publish("/slow-same2", "same-name", "parallelism=1", { token: other.token })),
    ]);
    await waitUntil(() => ["slow-a", "slow-b", "slow-same", "slow-same2"].every((l) => c.spans.get(l)?.length === 4));
    for (const lane of ["slow-a", "slow-b", "slow-same", "slow-same2"]) expect(c.max.get(lane)).toBe(1);
    const overlaps = (x: string, y: string) =>
      c.spans.get(x)!.some(([s1, e1]) => c.spans.get(y)!.some(([s2, e2]) => s1 < e2 && s2 < e1));
    expect(overlaps("slow-a", "slow-b")).toBe(true);
    expect(overlaps("slow-same", "slow-same2")).toBe(true);
  });

  test("waiting messages are counted, in order, never failed; the dispatcher holds a key's backlog beyond its cap", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) ids.push(await publish("/blocked", "backlog", "parallelism=1", { body: String(i) }));
    await rx.waitFor(1, { match: (r) => r.path === "/blocked" });
    const view = await waitUntil(async () => {
      const v = await flowOf("backlog");
      return v.waitListSize === 149 ? v : null;
    });
    expect(view).toMatchObject({ flowControlKey: "backlog", parallelismMax: 1, parallelismCount: 1, rateMax: 0, ratePeriod: 1, isPaused: false });
    // Only a few dozen went to the worker; the rest wait in the database, so other keys keep flowing.
    const held = await s.server.storage.stores.flow.heldCount(account("main").userId, "backlog");
    expect(held).toBeGreaterThan(50);
    // The console's Overview reads these: one attempt running, the rest held, nothing due.
    const status = (await (await s.api("/__svc/status")).json()) as { messages: Record<string, number> };
    expect(status.messages).toMatchObject({ inFlight: 1, waiting: 149, due: 0 });
    const other = await publish("/unrelated", "unrelated-key", "parallelism=5");
    await rx.waitFor(1, { match: (r) => r.headers.get("svc-message-id") === other });
    const list = (await (await s.api("/v2/flowControl")).json()) as FlowView[];
    expect(list.map((f) => f.flowControlKey)).toContain("backlog");

    // A waiting message can be cancelled: it is never delivered.
    expect((await s.api(`/v2/messages/${ids[1]}`, { method: "DELETE" })).status).toBe(200);
    expect((await s.api(`/v2/messages/${ids[149]}`, { method: "DELETE" })).status).toBe(200);
    openGate();
    const got = await rx.waitFor(148, { match: (r) => r.path === "/blocked" });
    const expected = ids.map((_, i) => String(i)).filter((b) => b !== "1" && b !== "149");
    expect(got.map((r) => r.text)).toEqual(expected);
    expect(c.max.get("blocked")).toBe(1);
    // Nothing pending and nothing in flight: the key is forgotten.
    await waitUntil(async () => (await s.api("/v2/flowControl/backlog")).status === 404);
    const dlq = (await (await s.api("/v2/dlq?flowControlKey=backlog")).json()) as { messages: unknown[] };
    expect(dlq.messages).toHaveLength(0);
  });

  test("a backlog beyond the cap, published while the key's deliveries run, is delivered in publish order", async () => {
    // Each finished delivery lets the oldest held message go; a newer message that was due but not
    // yet claimed at that moment used to be claimed first (it was due earlier than the release),
    // so the receiver saw e.g. 121, 122, 123, 128, 124: every run of this test did, before. On
    // PostgreSQL a delivery ending in the tick that claimed a newer message let it pass the held ones.
    const n = 300;
    for (let i = 0; i < n; i++) await publish("/paced", "paced", "parallelism=1", { body: String(i) });
    // 300 publishes one after the other and 300 deliveries one at a time: on a loaded machine that
    // takes far longer than the file's other tests (25 s was seen on PostgreSQL), so a longer deadline.
    const got = await rx.waitFor(n, { match: (r) => r.path === "/paced", timeoutMs: 90_000 });
    expect(got.map((r) => Number(r.text))).toEqual(Array.from({ length: n }, (_, i) => i));
    expect(c.max.get("paced")).toBe(1);
  }, 120_000);

  test("keys are per account: another account sees none of them; unknown key is 404", async () => {
    expect(await (await s.api("/v2/flowControl", { token: other.token })).json()).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ flowControlKey: "backlog" })]),
    );
    expect((await s.api("/v2/flowControl/backlog", { token: other.token })).status).toBe(404);
    expect((await s.api("/v2/flowControl/never-used")).status).toBe(404);
  });
});

describe("flow control on a manual clock", () => {
  test("rate=10, period=1s on 50 messages: each second of the server's clock lets exactly the next 10 go", async () => {
    const m = await startTestServer({ config: { clock: "manual" } });
    try {
      const path = "/manual-ten";
      for (let i = 0; i < 50; i++) await publish(path, "ten-key", "rate=10, period=1s", { body: String(i) }, m);
      const arrived = () => rx.received.filter((r) => r.path === path).length;
      // flush does not wait for what the rate holds for a later period.
      await flush(m.api);
      expect(arrived()).toBe(10);
      for (let second = 1; second <= 4; second++) {
        await advance(m.api, { ms: 999 }, { flush: true });
        expect(arrived()).toBe(10 * second);
        await advance(m.api, { ms: 1 }, { flush: true });
        expect(arrived()).toBe(10 * (second + 1));
      }
      const bodies = rx.received.filter((r) => r.path === path).map((r) => Number(r.text));
      expect(bodies.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    } finally {
      await m.stop();
    }
  });

  test("rate periods pass when the server's clock is advanced, not before", async () => {
    const T0 = Date.UTC(2031, 2, 3, 10, 0, 0);
    const clock = new ManualClock(T0);
    const m = await startTestServer({ clock });
    try {
      const send = () =>
        m.api(`/v2/publish/${rx.url}/manual-rate`, {
          method: "POST",
          headers: { "Svc-Flow-Control-Key": "minute", "Svc-Flow-Control-Value": "rate=2, period=1m" },
        });
      for (let i = 0; i < 5; i++) expect((await send()).status).toBe(200);
      await rx.waitFor(2, { match: (r) => r.path === "/manual-rate" });
      const waiting = await waitUntil(async () => {
        const v = (await (await m.api("/v2/flowControl/minute")).json()) as FlowView;
        return v.waitListSize === 3 ? v : null;
      });
      expect(waiting).toMatchObject({ rateMax: 2, rateCount: 2, ratePeriod: 60, ratePeriodStart: T0 / 1000 });
      expect(rx.received.filter((r) => r.path === "/manual-rate")).toHaveLength(2);

      clock.advanceTo(T0 + 59_999);
      clock.advanceTo(T0 + 60_000);
      await rx.waitFor(4, { match: (r) => r.path === "/manual-rate" });
      const next = await waitUntil(async () => {
        const v = (await (await m.api("/v2/flowControl/minute")).json()) as FlowView;
        return v.waitListSize === 1 && v.rateCount === 2 ? v : null;
      });
      expect(next.ratePeriodStart).toBe((T0 + 60_000) / 1000);
      clock.advanceTo(T0 + 120_000);
      await rx.waitFor(5, { match: (r) => r.path === "/manual-rate" });
    } finally {
      await m.stop();
    }
  });
});

describe("flow control across a stop", () => {
  test("jobs waiting for their rate do not hold the shutdown; the rate window survives the restart; they are delivered without using a retry", async () => {
    const a = await startTestServer();
    const aEvents = recordEvents(a);
    const dirs = [a.dir];
    try {
      const send = (srv: TestServer) =>
        srv.api(`/v2/publish/${rx.url}/stop-rate`, {
          method: "POST",
          headers: { "Svc-Flow-Control-Key": "slowly", "Svc-Flow-Control-Value": "rate=1, period=1h" },
        });
      for (let i = 0; i < 3; i++) expect((await send(a)).status).toBe(200);
      await rx.waitFor(1, { match: (r) => r.path === "/stop-rate" });
      // A deadline far beyond the test's own limit: a stop that waited for the attempts held by
      // the rate (an hour away) would time the test out instead of answering.
      await a.server.stop({ deadlineMs: 600_000 });

      // When the server started the first attempt (its arrival at the receiver comes later).
      const first = aEvents.all("delivered").find((e) => e.message.flow?.key === "slowly")!;
      const firstStart = Math.floor(first.outcome.startedAt / 1000);

      const b = await startTestServer({ config: { dbPath: a.config.dbPath } });
      dirs.push(b.dir);
      // The hour's window survived the restart: the first delivery still counts, both others wait.
      const view = await waitUntil(async () => {
        const v = (await (await b.api("/v2/flowControl/slowly")).json()) as FlowView;
        return v.waitListSize === 2 ? v : null;
      });
      expect(view.rateCount).toBe(1);
      expect(view.ratePeriodStart).toBe(firstStart);
      expect(rx.received.filter((r) => r.path === "/stop-rate")).toHaveLength(1);
      // A new window: the next one goes, as a first attempt (waiting used no retry).
      expect((await b.api("/v2/flowControl/slowly/resetRate", { method: "POST" })).status).toBe(200);
      const [, second] = await rx.waitFor(2, { match: (r) => r.path === "/stop-rate" });
      expect(second!.headers.get("svc-retried")).toBe("0");
      await b.server.stop({ deadlineMs: 500 });
    } finally {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });
});
