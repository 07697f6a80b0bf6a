import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ConfigFile } from "../../src/config/config-file.ts";
import { advance, flush } from "../helpers/control.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

const configFile: ConfigFile = {
  accounts: [
    { email: "a@example.com", apiKey: "key-a", userId: "user-a", token: "token-a", plan: "payg" },
    { email: "b@example.com", apiKey: "key-b", userId: "user-b", token: "token-b", plan: "payg" },
  ],
};
const A = "token-a";
const B = "token-b";

/** Requests to `/slow/...` wait until released; `/fail/...` answer 500; the rest 200. */
let release: () => void = () => {};
let gate = Promise.resolve();
const hold = () => {
  gate = new Promise<void>((resolve) => (release = resolve));
};

let s: TestServer;
let rx: Receiver;

beforeAll(async () => {
  s = await startTestServer({ configFile, config: { clock: "manual" } });
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/slow")) await gate;
    if (req.path.startsWith("/fail")) return new Response("failed", { status: 500 });
    if (req.path.startsWith("/sluggish")) await Bun.sleep(150); // a receiver that takes its time
    return new Response("ok");
  });
});
afterAll(async () => {
  release();
  rx.stop();
  await s.stop();
});

async function publish(token: string, path: string, headers: Record<string, string> = {}) {
  const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: `to ${path}`, headers, token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}
const getJson = async (path: string, token: string) => (await (await s.api(path, { token })).json()) as any;
const at = (path: string) => rx.received.filter((r) => r.path === path);

describe("health, readiness and credentials", () => {
  test("health and ready answer without credentials (orchestrator probes); the rest of /__svc/ needs a messaging token", async () => {
    const health = await fetch(`${s.url}/__svc/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${s.url}/__svc/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
    for (const [method, path] of [["POST", "/__svc/reset"], ["POST", "/__svc/flush"], ["GET", "/__svc/clock"]]) {
      const res = await fetch(`${s.url}${path}`, { method });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: "Unauthorized" });
    }
  });
});

describe("reset", () => {
  test("wipes the caller's messages, DLQ and logs; the other account and the credentials stay", async () => {
    const seed = async (token: string, tag: string) => ({
      delivered: await publish(token, `/ok/${tag}`),
      failed: await publish(token, `/fail/${tag}`, { "Svc-Retries": "0" }),
      pending: await publish(token, `/later/${tag}`, { "Svc-Delay": "1h" }),
    });
    const a = await seed(A, "a");
    const b = await seed(B, "b");
    await flush(s.api);
    const keysBefore = await getJson("/v2/keys", A);
    for (const [token, ids] of [[A, a], [B, b]] as const) {
      expect((await getJson("/v2/dlq", token)).messages).toHaveLength(1);
      expect((await s.api(`/v2/messages/${ids.pending}`, { token })).status).toBe(200);
    }

    const res = await s.api("/__svc/reset", { method: "POST", token: A });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { reset: string; parts: string[] };
    expect(body.reset).toBe("user-a");
    expect(body.parts).toEqual(expect.arrayContaining(["messages", "logs", "dlq"]));

    // Account A is empty...
    expect((await getJson("/v2/dlq", A)).messages).toEqual([]);
    expect((await getJson("/v2/logs", A)).logs).toEqual([]);
    expect((await s.api(`/v2/messages/${a.pending}`, { token: A })).status).toBe(404);
    // ...its credentials and keys still work...
    expect(await getJson("/v2/keys", A)).toEqual(keysBefore);
    // ...and account B is untouched.
    expect((await getJson("/v2/dlq", B)).messages.map((m: any) => m.messageId)).toEqual([b.failed]);
    expect((await s.api(`/v2/messages/${b.pending}`, { token: B })).status).toBe(200);
    const bLogs = (await getJson("/v2/logs?count=1000", B)).logs.map((l: any) => l.messageId);
    expect(new Set(bLogs)).toEqual(new Set([b.delivered, b.failed, b.pending]));

    // A's wiped pending message is never delivered; B's is.
    await advance(s.api, { ms: 2 * 3600_000 }, { flush: true });
    expect(at("/later/a")).toHaveLength(0);
    expect(at("/later/b")).toHaveLength(1);
  });

  test("wipes the caller's URL Groups, schedules and queues; the other account keeps its own", async () => {
    const post = (token: string, path: string, init: RequestInit) => s.api(path, { method: "POST", token, ...init });
    for (const token of [A, B]) {
      const group = await post(token, "/v2/topics/team/endpoints", { body: JSON.stringify({ endpoints: [{ url: `${rx.url}/team` }] }), headers: { "content-type": "application/json" } });
      expect(group.status).toBe(200);
      expect((await post(token, `/v2/schedules/${rx.url}/cron`, { body: "x", headers: { "Svc-Cron": "0 * * * *" } })).status).toBe(200);
      expect((await post(token, "/v2/queues", { body: JSON.stringify({ queueName: "jobs" }), headers: { "content-type": "application/json" } })).status).toBe(200);
    }
    expect((await s.api("/__svc/reset", { method: "POST", token: A })).status).toBe(200);
    expect(await getJson("/v2/topics", A)).toEqual([]);
    expect(await getJson("/v2/schedules", A)).toEqual([]);
    expect(await getJson("/v2/queues", A)).toEqual([]);
    expect((await getJson("/v2/topics", B)).map((g: any) => g.name)).toEqual(["team"]);
    expect(await getJson("/v2/schedules", B)).toHaveLength(1);
    expect((await getJson("/v2/queues", B)).map((q: any) => q.name)).toEqual(["jobs"]);
    // A's schedule timer is gone with it: an hour later only B's schedule fires.
    await advance(s.api, { ms: 3600_000 }, { flush: true });
    expect(at("/cron")).toHaveLength(1);
    expect(at("/cron")[0]!.headers.get("svc-schedule-id")).toBe((await getJson("/v2/schedules", B))[0].scheduleId);
    await s.api("/__svc/reset", { method: "POST", token: B });
  });

  test("an attempt in flight during the reset is disowned: its late answer leaves no trace", async () => {
    hold();
    await publish(A, "/slow/inflight", { "Svc-Retries": "0" });
    await rx.waitFor(1, { match: (r) => r.path === "/slow/inflight" });
    expect((await s.api("/__svc/reset", { method: "POST", token: A })).status).toBe(200);
    release();
    await flush(s.api, { token: A });
    expect((await getJson("/v2/logs", A)).logs).toEqual([]);
    expect((await getJson("/v2/dlq", A)).messages).toEqual([]);
  });
});

describe("flush", () => {
  test("returns only after every due message and the callbacks they produced were delivered", async () => {
    const ids = await Promise.all([1, 2, 3, 4].map((n) => publish(B, `/sluggish/${n}`)));
    const withCallback = await publish(B, "/sluggish/cb", { "Svc-Callback": `${rx.url}/callback/cb` });
    await flush(s.api);
    for (const n of [1, 2, 3, 4, "cb"]) expect(at(`/sluggish/${n}`)).toHaveLength(1);
    expect(at("/callback/cb")).toHaveLength(1);
    for (const id of [...ids, withCallback]) {
      const logs = (await getJson(`/v2/logs?messageId=${id}`, B)).logs;
      expect(logs[0].state).toBe("DELIVERED");
    }
  });

  test("answers at once when nothing is due or in flight", async () => {
    await flush(s.api);
    // A 1 ms limit: a flush that waited for anything at all (a pass, a timer, its own deadline)
    // would answer 504. Idle is read before any waiting starts, so the answer does not depend on
    // how fast the machine is.
    const res = await s.api("/__svc/flush?timeout=1", { method: "POST" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ idle: true });
  });

  test("answers 504 with an error body when deliveries are still running at the timeout", async () => {
    hold();
    await publish(B, "/slow/timeout");
    await rx.waitFor(1, { match: (r) => r.path === "/slow/timeout" });
    const res = await s.api("/__svc/flush?timeout=100", { method: "POST" });
    expect(res.status).toBe(504);
    expect(((await res.json()) as { error: string }).error).toContain("100 ms");
    release();
    await flush(s.api);
    await waitUntil(async () => (await getJson("/v2/logs?state=DELIVERED", B)).logs.some((l: any) => l.url.endsWith("/slow/timeout")));
  });

  test("does not wait for messages a flow-control rate holds for a later period (they are not due)", async () => {
    const headers = { "Svc-Flow-Control-Key": "slow-lane", "Svc-Flow-Control-Value": "rate=1, period=1h" };
    for (const n of [1, 2]) await publish(B, `/lane/${n}`, headers);
    // The clock is manual: a flush that waited for /lane/2 would wait until its deadline and
    // answer 504 (flush() expects 200).
    await flush(s.api);
    expect(rx.received.filter((r) => r.path.startsWith("/lane/")).map((r) => r.path)).toEqual(["/lane/1"]);
    await advance(s.api, { ms: 3600_000 }, { flush: true });
    expect(rx.received.filter((r) => r.path.startsWith("/lane/")).map((r) => r.path)).toEqual(["/lane/1", "/lane/2"]);
  });

  test("rejects a timeout that is not a positive number of ms", async () => {
    for (const q of ["timeout=0", "timeout=abc", "timeout=9999999"]) {
      const res = await s.api(`/__svc/flush?${q}`, { method: "POST" });
      expect(res.status).toBe(400);
      expect(await res.json()).toHaveProperty("error");
    }
  });
});
