import { afterAll, beforeAll, expect, test } from "bun:test";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";

/**
 * Deduplication across nodes: two svcd processes on one PostgreSQL, each publishing the same
 * deduplication id at the same moment, store one message (the lookup and the remembered key of
 * two concurrent transactions must not both miss each other).
 */

const TOKEN = "cluster_dedup_token";
let db: string;
let nodes: ServerProcess[] = [];
let rx: Receiver;

const startNode = () =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--node-timeout", "10000", "--log-level", "warn", "--workers", "2"], {
    env: { SVC_TOKEN: TOKEN },
    timeoutMs: 30_000,
  });

const api = (i: number, path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${TOKEN}`);
  return fetch(nodes[i]!.url + path, { ...init, headers });
};

beforeAll(async () => {
  db = await freshDatabase();
  rx = await startReceiver();
  // One node first: it migrates; the other finds the schema in place.
  nodes = [await startNode()];
  nodes.push(await startNode());
}, 90_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  rx.stop();
});

test("the same deduplication id published at once on two nodes is one message", async () => {
  const ROUNDS = 30;
  for (let round = 0; round < ROUNDS; round++) {
    const url = `${rx.url}/dedup/${round}`;
    const answers = await Promise.all(
      [0, 1, 0, 1, 0, 1].map(async (i) => {
        const headers = { "Svc-Deduplication-Id": `order-${round}` };
        const res = await api(i, `/v2/publish/${url}`, { method: "POST", headers, body: "x" });
        return { status: res.status, messageId: ((await res.json()) as { messageId: string }).messageId };
      }),
    );
    // One publish stored it (200); every other one is answered with its id (202).
    expect(answers.map((a) => a.status).sort()).toEqual([200, 202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.messageId)).size).toBe(1);
    // The log has one creation: no second message was stored and answered as the first.
    const logs = await api(round % 2, `/v2/logs?url=${encodeURIComponent(url)}&state=CREATED`);
    expect(((await logs.json()) as { logs: unknown[] }).logs).toHaveLength(1);
  }
}, 120_000);
