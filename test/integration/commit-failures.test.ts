import { afterAll, beforeAll, expect, test } from "bun:test";
import { oneInAndRefusedPaths, whileCommitsFail } from "../helpers/commit-failures.ts";
import { expectIdleAndConsistent, waitForState } from "../helpers/inspect.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * Transactions of the group commit failing at random while messages are published, delivered,
 * retried and cancelled: a failed transaction refuses every write in it (a publish or a cancel
 * answers 503, claims and outcomes are written again), and what was acknowledged holds. On both
 * engines: a trigger fails one log entry in 60, which fails the transaction writing it.
 */

let s: TestServer;
let rx: Receiver;
/** Requests under way now, and the most at once, by the path's third part (`fifo`, `keyed`). */
const atOnce = new Map<string, number>();
const maxAtOnce = new Map<string, number>();

beforeAll(async () => {
  s = await startTestServer({ config: { retryDelayScale: 0.001 } });
  rx = await startReceiver(async (req) => {
    if (req.path.startsWith("/chaos/flaky") && Math.random() < 0.5) return new Response("not now", { status: 500 });
    // Still under way when the test cancels it.
    if (req.path.startsWith("/chaos/slow")) await Bun.sleep(30);
    const lane = req.path.split("/")[2]!;
    atOnce.set(lane, (atOnce.get(lane) ?? 0) + 1);
    maxAtOnce.set(lane, Math.max(maxAtOnce.get(lane) ?? 0, atOnce.get(lane)!));
    // Keyed and queued deliveries take a moment, so overlapping ones would be seen.
    if (lane === "fifo" || lane === "keyed") await Bun.sleep(3);
    atOnce.set(lane, atOnce.get(lane)! - 1);
    return new Response("ok");
  });
});
afterAll(async () => {
  rx.stop();
  await s.stop();
});

test("every acknowledged publish and cancel holds; nothing refused was stored; nothing is left half done", async () => {
  const acked = new Map<string, string>();
  const refused: number[] = [];
  const cancelled = new Set<string>();
  const cancel = async (id: string) => {
    const res = await s.api(`/v2/messages/${id}`, { method: "DELETE" });
    // 404: it ended already (delivered, failed, or cancelled before).
    if (res.status === 200) cancelled.add(id);
    else expect([404, 503]).toContain(res.status);
  };
  const publish = async (i: number) => {
    const path =
      i % 40 === 39
        ? `/chaos/refused/${i}`
        : i % 4 === 1
          ? `/chaos/slow/${i}`
          : i % 5 === 0
            ? `/chaos/flaky/${i}`
            : `/chaos/ok/${i}`;
    const headers: Record<string, string> = { "Svc-Retries": "2", "Svc-Retry-Delay": "10" };
    if (i % 3 === 0) headers["Svc-Delay"] = "1s";
    const res = await s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: String(i), headers });
    if (res.status === 503) return void refused.push(i);
    expect(res.status).toBe(200);
    const { messageId } = (await res.json()) as { messageId: string };
    acked.set(messageId, path);
    // Cancelled while its delivery is under way (or about to be).
    if (path.startsWith("/chaos/slow")) await cancel(messageId);
  };
  const cancelSome = () => Promise.all([...acked.keys()].filter((_, k) => k % 7 === 3).map(cancel));
  await whileCommitsFail(s, oneInAndRefusedPaths(60), async () => {
    for (let round = 0; round < 6; round++) {
      await Promise.all([...Array.from({ length: 40 }, (_, k) => publish(round * 40 + k)), cancelSome()]);
    }
  });
  // The failures happened (one publish a round at least), and transactions went through between them.
  expect(refused.length).toBeGreaterThanOrEqual(6);
  expect(acked.size).toBeGreaterThan(0);

  for (const [id, path] of acked) {
    // Cancelled: it ends there. Else delivered, or failed after its retries (the flaky paths
    // answer 500 at times): never stuck on the way (delayed ones are due a second after their publish).
    const logs = await waitForState(s, id, cancelled.has(id) ? ["CANCELED"] : ["DELIVERED", "FAILED"]);
    if (logs.at(-1)!.state === "DELIVERED") expect(rx.received.some((r) => r.path === path)).toBe(true);
    expect(logs.filter((l) => l.state === "CREATED")).toHaveLength(1);
  }
  // A refused publish stored nothing: its body never reached the receiver.
  for (const i of refused) expect(rx.received.some((r) => r.text === String(i))).toBe(false);
  await expectIdleAndConsistent(s);
}, 120_000);

test("queues, flow-control keys, URL Groups, callbacks and DLQ retries keep their rules and finish", async () => {
  const json = { "content-type": "application/json" };
  const group = await s.api("/v2/topics/chaos-group/endpoints", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ endpoints: [{ url: `${rx.url}/chaos/group/a` }, { url: `${rx.url}/chaos/group/b` }] }),
  });
  expect(group.status).toBe(200);
  const acked: string[] = [];
  let refused = 0;
  /** True when acknowledged. */
  const send = async (path: string, headers: Record<string, string>, body: string) => {
    const res = await s.api(path, { method: "POST", body, headers });
    if (res.status === 503) return void refused++;
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { messageId: string } | Array<{ messageId: string }>;
    for (const a of Array.isArray(answer) ? answer : [answer]) acked.push(a.messageId);
    return true;
  };
  const queued: string[] = [];
  // Rarer failures in more, smaller rounds than above: some transactions fail, and not all of them.
  await whileCommitsFail(s, oneInAndRefusedPaths(120), async () => {
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 15 }, async (_, k) => {
          const i = round * 15 + k;
          if (k === 14) {
            await send(`/v2/publish/${rx.url}/chaos/refused/${i}`, {}, String(i));
          } else if (k % 3 === 0) {
            if (await send(`/v2/enqueue/chaos-fifo/${rx.url}/chaos/fifo`, {}, String(i))) queued.push(String(i));
          } else if (k % 3 === 1) {
            const flow = { "Svc-Flow-Control-Key": "chaos-key", "Svc-Flow-Control-Value": "parallelism=2" };
            await send(`/v2/publish/${rx.url}/chaos/keyed/${i}`, flow, String(i));
          } else if (k % 6 === 2) {
            await send("/v2/publish/chaos-group", {}, String(i));
          } else {
            const callbacks = { "Svc-Callback": `${rx.url}/chaos/callback`, "Svc-Retries": "0" };
            await send(`/v2/publish/${rx.url}/chaos/flaky/${i}`, callbacks, String(i));
          }
        }),
      );
      // Some of what failed goes again from the DLQ.
      const dlq = await s.api("/v2/dlq/retry?count=5", { method: "POST" });
      expect([201, 503]).toContain(dlq.status);
    }
  });
  expect(refused).toBeGreaterThanOrEqual(10);
  expect(acked.length).toBeGreaterThan(0);
  for (const id of acked) await waitForState(s, id, ["DELIVERED", "FAILED"]);
  await expectIdleAndConsistent(s);
  // The queue delivered each acknowledged message once, one at a time; the key never had 3 at once.
  const fifo = rx.received.filter((r) => r.path === "/chaos/fifo").map((r) => r.text);
  expect(new Set(fifo).size).toBe(fifo.length);
  expect([...fifo].sort()).toEqual([...queued].sort());
  expect(maxAtOnce.get("fifo") ?? 0).toBeLessThanOrEqual(1);
  expect(maxAtOnce.get("keyed")).toBeLessThanOrEqual(2);
}, 120_000);

test("a log entry refused in a tick of many publishes fails its own publish alone; the others are stored and delivered", async () => {
  // One CREATED entry of twenty is refused; the twenty publishes are sent at once, into one tick.
  const refusedEntry = { sqlite: "NEW.url LIKE '%/alone/refused'", postgres: "NEW.url LIKE '%/alone/refused'" };
  const paths = Array.from({ length: 20 }, (_, i) => (i === 7 ? "/alone/refused" : `/alone/kept/${i}`));
  const answers = await whileCommitsFail(s, refusedEntry, () =>
    Promise.all(paths.map((path) => s.api(`/v2/publish/${rx.url}${path}`, { method: "POST", body: path }))),
  );
  expect(answers.map((res) => res.status)).toEqual(paths.map((path) => (path.endsWith("/refused") ? 503 : 200)));
  const got = await rx.waitFor(19, { match: (r) => r.path.startsWith("/alone/") });
  expect(got.map((r) => r.path).sort()).toEqual(paths.filter((p) => !p.endsWith("/refused")).sort());
  // Each stored publish has its CREATED entry; the refused one left nothing.
  const logs = (await (await s.api("/v2/logs?state=CREATED&count=1000")).json()) as { logs: Array<{ url: string }> };
  const created = logs.logs.filter((l) => l.url.includes("/alone/")).map((l) => l.url.slice(rx.url.length));
  expect(created.sort()).toEqual(paths.filter((p) => !p.endsWith("/refused")).sort());
});
