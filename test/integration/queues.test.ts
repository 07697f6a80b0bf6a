import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { account, jsonBody } from "../helpers/accounts.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";

interface QueueView {
  name: string;
  createdAt: number;
  updatedAt: number;
  parallelism: number;
  paused: boolean;
  lag: number;
}

let s: TestServer;
let rx: Receiver;
const small = account("small", { plan: "free" });
/** Deliveries in flight at the receiver right now, and the most seen at once, per path prefix. */
const inFlight = new Map<string, number>();
const maxInFlight = new Map<string, number>();
const failedOnce = new Set<string>();

beforeAll(async () => {
  s = await startTestServer({
    config: { retryDelayScale: 0.001 },
    configFile: { plans: { free: { maxQueues: 1 } }, accounts: [account("main"), small] },
  });
  rx = await startReceiver(async (req) => {
    const lane = req.path.split("/")[1]!;
    inFlight.set(lane, (inFlight.get(lane) ?? 0) + 1);
    maxInFlight.set(lane, Math.max(maxInFlight.get(lane) ?? 0, inFlight.get(lane)!));
    await Bun.sleep(lane.startsWith("slow") ? 25 : 1);
    inFlight.set(lane, inFlight.get(lane)! - 1);
    if (req.path.includes("fail-once") && !failedOnce.has(req.text)) {
      failedOnce.add(req.text);
      return new Response("try again", { status: 500 });
    }
    return new Response("ok");
  });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

const upsert = (body: Record<string, unknown>, token?: string) => s.api("/v2/queues", { ...jsonBody("POST", body), token });
const getQueue = async (name: string) => (await (await s.api(`/v2/queues/${name}`)).json()) as QueueView;
async function enqueue(queue: string, path: string, body: string, headers: Record<string, string> = {}) {
  const res = await s.api(`/v2/enqueue/${queue}/${rx.url}${path}`, { method: "POST", body, headers });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messageId: string }).messageId;
}
const bodiesAt = (path: string) => rx.received.filter((r) => r.path === path).map((r) => r.text);

describe("queues", () => {
  test("parallelism 1 delivers 20 messages in publish order, one at a time, with a slow receiver", async () => {
    expect((await upsert({ queueName: "serial", parallelism: 1 })).status).toBe(200);
    const sent = Array.from({ length: 20 }, (_, i) => String(i));
    for (const body of sent) await enqueue("serial", "/slow-serial", body);
    await rx.waitFor(20, { match: (r) => r.path === "/slow-serial" });
    expect(bodiesAt("/slow-serial")).toEqual(sent);
    expect(maxInFlight.get("slow-serial")).toBe(1);
    await waitUntil(async () => (await getQueue("serial")).lag === 0);
  });

  test("parallelism 2 never has more than 2 in flight", async () => {
    await upsert({ queueName: "pair", parallelism: 2 });
    await Promise.all(Array.from({ length: 12 }, (_, i) => enqueue("pair", "/slow-pair", String(i))));
    await rx.waitFor(12, { match: (r) => r.path === "/slow-pair" });
    expect(maxInFlight.get("slow-pair")).toBe(2);
  });

  test("a message being retried keeps its place: the next starts only after it is delivered", async () => {
    await upsert({ queueName: "retrying" });
    await enqueue("retrying", "/fail-once", "first", { "Svc-Retries": "3" });
    await enqueue("retrying", "/fail-once", "second", { "Svc-Retries": "3" });
    await rx.waitFor(4, { match: (r) => r.path === "/fail-once" });
    expect(bodiesAt("/fail-once")).toEqual(["first", "first", "second", "second"]);
  });

  test("a paused queue holds its messages (lag counts them) until it is resumed", async () => {
    await upsert({ queueName: "held", paused: true, parallelism: 2 });
    const ids = [await enqueue("held", "/held", "a"), await enqueue("held", "/held", "b"), await enqueue("held", "/held", "c")];
    const paused = await getQueue("held");
    expect(paused).toMatchObject({ name: "held", paused: true, parallelism: 2, lag: 3 });
    // Queued messages are visible as pending messages with their queue name.
    const m = (await (await s.api(`/v2/messages/${ids[0]}`)).json()) as { queueName: string };
    expect(m.queueName).toBe("held");
    expect(bodiesAt("/held")).toEqual([]);
    expect((await s.api("/v2/queues/held/resume", { method: "POST" })).status).toBe(200);
    await rx.waitFor(3, { match: (r) => r.path === "/held" });
    expect(bodiesAt("/held").sort()).toEqual(["a", "b", "c"]);
    await waitUntil(async () => (await getQueue("held")).lag === 0);
    expect((await s.api("/v2/queues/held/pause", { method: "POST" })).status).toBe(200);
    expect((await getQueue("held")).paused).toBe(true);
  });

  test("upsert, list, get; enqueue creates a missing queue; Svc-Queue-Name on publish queues too", async () => {
    await upsert({ queueName: "settings", parallelism: 3 });
    const created = await getQueue("settings");
    expect(created).toMatchObject({ name: "settings", parallelism: 3, paused: false, lag: 0 });
    expect(typeof created.createdAt).toBe("number");
    await upsert({ queueName: "settings", paused: true });
    expect(await getQueue("settings")).toMatchObject({ parallelism: 3, paused: true });

    await enqueue("made-on-the-fly", "/fly", "x");
    await rx.waitFor(1, { match: (r) => r.path === "/fly" });
    expect((await getQueue("made-on-the-fly")).parallelism).toBe(1);

    const res = await s.api(`/v2/publish/${rx.url}/by-header`, { method: "POST", body: "h", headers: { "Svc-Queue-Name": "by-header" } });
    expect(res.status).toBe(200);
    await rx.waitFor(1, { match: (r) => r.path === "/by-header" });
    const names = ((await (await s.api("/v2/queues")).json()) as QueueView[]).map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(["settings", "made-on-the-fly", "by-header", "serial"]));
  });

  test("deleting a queue cancels the messages still in it", async () => {
    await upsert({ queueName: "to-delete", paused: true });
    const id = await enqueue("to-delete", "/deleted", "never");
    expect((await s.api("/v2/queues/to-delete", { method: "DELETE" })).status).toBe(200);
    expect((await s.api("/v2/queues/to-delete")).status).toBe(404);
    expect((await s.api(`/v2/messages/${id}`)).status).toBe(404);
    const logs = (await (await s.api(`/v2/logs?messageId=${id}`)).json()) as { logs: Array<{ state: string }> };
    expect(logs.logs.map((l) => l.state)).toContain("CANCELED");
    // Idempotent: deleting it again is 200 too.
    expect((await s.api("/v2/queues/to-delete", { method: "DELETE" })).status).toBe(200);
  });

  test("bad input is 400; plan limits are 412; another account's queues are 404", async () => {
    expect((await upsert({ queueName: "bad name" })).status).toBe(400);
    expect((await upsert({ parallelism: 1 })).status).toBe(400);
    expect((await upsert({ queueName: "p0", parallelism: 0 })).status).toBe(400);
    const bad = await s.api(`/v2/enqueue/bad%20name/${rx.url}/x`, { method: "POST" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("queue name");
    expect((await s.api("/v2/enqueue/only-a-queue", { method: "POST" })).status).toBe(400);

    // free plan: parallelism at most 2; here at most 1 queue.
    const tooParallel = await upsert({ queueName: "mine", parallelism: 3 }, small.token);
    expect(tooParallel.status).toBe(412);
    expect(((await tooParallel.json()) as { error: string }).error).toContain("parallelism");
    expect((await upsert({ queueName: "mine", parallelism: 2 }, small.token)).status).toBe(200);
    expect((await upsert({ queueName: "second" }, small.token)).status).toBe(412);
    const viaEnqueue = await s.api(`/v2/enqueue/third/${rx.url}/x`, { method: "POST", token: small.token });
    expect(viaEnqueue.status).toBe(412);
    const viaHeader = await s.api(`/v2/publish/${rx.url}/x`, { method: "POST", token: small.token, headers: { "Svc-Queue-Name": "fourth" } });
    expect(viaHeader.status).toBe(412);

    expect((await s.api("/v2/queues/mine")).status).toBe(404);
    expect((await s.api("/v2/queues/mine/pause", { method: "POST" })).status).toBe(404);
    // Deleting another account's queue answers as for a missing one, and leaves it.
    expect((await s.api("/v2/queues/mine", { method: "DELETE" })).status).toBe(200);
    expect(((await (await s.api("/v2/queues")).json()) as QueueView[]).map((q) => q.name)).not.toContain("mine");
    expect((await s.api("/v2/queues/mine", { token: small.token })).status).toBe(200);
  });
});
