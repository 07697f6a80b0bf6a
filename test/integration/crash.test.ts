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
