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

test("batches naming the same deduplication ids in opposite orders on two nodes store each once, fail nothing", async () => {
  const KEYS = ["a", "b", "c", "d"];
  for (let round = 0; round < 10; round++) {
    const url = `${rx.url}/opposite/${round}`;
    const batch = (keys: string[]) => ({
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(
        keys.map((k) => ({ destination: url, headers: { "Svc-Deduplication-Id": `${k}-${round}` }, body: k })),
      ),
    });
    const bystander = { method: "POST", body: "no deduplication" };
    const answers = await Promise.all([
      api(0, "/v2/batch", batch(KEYS)),
      api(1, "/v2/batch", batch(KEYS.toReversed())),
      api(0, `/v2/publish/${rx.url}/bystander/${round}`, bystander),
      api(1, `/v2/publish/${rx.url}/bystander/${round}`, bystander),
    ]);
    // Two ticks each locking the keys in their own order deadlocked: one of them failed whole (its
    // batch's elements and a bystander publish in it answered "storage unavailable").
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const [first, second] = (await Promise.all(answers.slice(0, 2).map((a) => a.json()))) as Array<
      Array<{ messageId: string; deduplicated?: boolean }>
    >;
    const byKey = (elements: typeof first, keys: string[]) => new Map(keys.map((k, i) => [k, elements![i]!]));
    const fromFirst = byKey(first, KEYS);
    const fromSecond = byKey(second, KEYS.toReversed());
    for (const key of KEYS) {
      const [one, other] = [fromFirst.get(key)!, fromSecond.get(key)!];
      expect(one.messageId).toBe(other.messageId);
      expect([one.deduplicated, other.deduplicated].filter(Boolean)).toHaveLength(1);
    }
    const logs = await api(round % 2, `/v2/logs?url=${encodeURIComponent(url)}&state=CREATED`);
    expect(((await logs.json()) as { logs: unknown[] }).logs).toHaveLength(KEYS.length);
  }
}, 120_000);
