import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { waitUntil } from "../helpers/wait.ts";

const TOKEN = "crash-token";
let dir: string;
let rx: Receiver;
const arrived = new Set<string>();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svcd-crash-"));
  rx = await startReceiver(async (req) => {
    arrived.add(req.headers.get("svc-message-id") ?? "");
    await Bun.sleep(2);
    return new Response("ok");
  });
});
afterAll(() => {
  rx.stop();
  rmSync(dir, { recursive: true, force: true });
});

const start = (db: string) =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--log-level", "error"], { env: { SVC_TOKEN: TOKEN } });

/** Publishes `total` messages, `concurrency` at a time; returns the ids that got a 200. */
async function publishMany(server: ServerProcess, total: number, concurrency: number, stopWhen: () => boolean) {
  const acked: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total && !stopWhen()) {
      const i = next++;
      try {
        const res = await fetch(`${server.url}/v2/publish/${rx.url}/crash/${i}`, {
          method: "POST",
          body: `message ${i}`,
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        if (res.status === 200) acked.push(((await res.json()) as { messageId: string }).messageId);
      } catch {
        return; // the server died under us: this publish was never acknowledged
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return acked;
}

test("kill -9 during publish and delivery of 1,000 messages: every acknowledged message arrives after restart", async () => {
  const db = join(dir, "crash.sqlite");
  const server = await start(db);
  // Kill at a random point while publishing and delivering are both under way.
  const killAfter = 300 + Math.floor(Math.random() * 400);
  let killed = false;
  const killer = waitUntil(() => arrived.size >= killAfter, { timeoutMs: 30_000, intervalMs: 1 }).then(() => {
    killed = true;
    server.proc.kill("SIGKILL");
  });
  const acked = await publishMany(server, 1000, 32, () => killed);
  await killer;
  await server.proc.exited;
  expect(acked.length).toBeGreaterThan(killAfter / 2);

  const restarted = await start(db);
  try {
    const more = await publishMany(restarted, 1000 - acked.length, 32, () => false);
    const all = [...acked, ...more];
    await waitUntil(() => all.every((id) => arrived.has(id)), { timeoutMs: 30_000, what: "every acknowledged message to arrive" });
    const dlq = await fetch(`${restarted.url}/v2/dlq`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(((await dlq.json()) as { messages: unknown[] }).messages).toHaveLength(0);
  } finally {
    expect(await restarted.stop()).toBe(0);
  }
  const check = new Database(db, { readonly: true });
  expect(check.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()?.integrity_check).toBe("ok");
  expect(check.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM messages").get()?.n).toBe(0);
  check.close();
}, 90_000);

test("kill -9 while a message claimed at publish is at its receiver: its row is ACTIVE, and the restart delivers it again", async () => {
  const db = join(dir, "claimed.sqlite");
  const arrivals: string[] = [];
  let release!: () => void;
  const hung = new Promise<void>((resolve) => (release = resolve));
  // The first attempt hangs until the end of the test: the kill comes while it is under way.
  const receiver = await startReceiver(async (req, index) => {
    arrivals.push(req.headers.get("svc-message-id") ?? "");
    if (index === 1) await hung;
    return new Response("ok");
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  const publish = async (server: ServerProcess, path: string) => {
    const to = `${server.url}/v2/publish/${receiver.url}${path}`;
    const res = await fetch(to, { method: "POST", body: "x", headers: auth });
    expect(res.status).toBe(200);
    return ((await res.json()) as { messageId: string }).messageId;
  };
  try {
    const server = await start(db);
    // Once one is delivered, the dispatcher has caught up: the next one due is claimed as it is stored.
    // Its outcome must be stored before the kill too, or the restart rightly delivers it again.
    const warmUp = await publish(server, "/warm-up");
    await waitUntil(() => arrivals.length === 1, { what: "the warm-up delivered" });
    await waitUntil(async () => {
      const res = await fetch(`${server.url}/v2/logs?messageId=${warmUp}`, { headers: auth });
      return ((await res.json()) as { logs: Array<{ state: string }> }).logs[0]?.state === "DELIVERED";
    }, { what: "the warm-up's outcome stored" });
    const id = await publish(server, "/hang");
    await waitUntil(() => arrivals.length === 2, { what: "the attempt to hang at the receiver" });
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    const check = new Database(db, { readonly: true });
    const row = check.query("SELECT state, dispatch_at FROM messages WHERE id = ?").get(id);
    check.close();
    expect(row).toEqual({ state: "ACTIVE", dispatch_at: null });

    const again = await start(db);
    try {
      await waitUntil(() => arrivals.length >= 3, { what: "the message delivered again after the restart" });
      expect(arrivals.slice(1)).toEqual([id, id]);
      const logs = await waitUntil(async () => {
        const res = await fetch(`${again.url}/v2/logs?messageId=${id}`, { headers: auth });
        const body = (await res.json()) as { logs: Array<{ state: string }> };
        return body.logs[0]?.state === "DELIVERED" ? body.logs : undefined;
      }, { what: "DELIVERED in the log" });
      // Claimed at publish, claimed again after the restart, delivered once.
      expect(logs.map((l) => l.state).reverse()).toEqual(["CREATED", "ACTIVE", "ACTIVE", "DELIVERED"]);
    } finally {
      expect(await again.stop()).toBe(0);
    }
  } finally {
    release();
    receiver.stop();
  }
}, 90_000);
