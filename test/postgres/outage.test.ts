import { afterAll, beforeAll, expect, test } from "bun:test";
import { startOwnPostgres, type OwnPostgres } from "../helpers/postgres.ts";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * PostgreSQL goes away under load, as an operator would see it: two nodes take about 100
 * publishes a second while the server is crashed (`pg_ctl stop -m immediate`) and started again,
 * then while every connection is cut three times. No node dies, so: every acknowledged message is
 * delivered, no message is ever attempted by two nodes at once, both nodes are registered at the
 * end, and no node presumes the other dead. The database runs apart from the shared test server,
 * which the other files use meanwhile.
 */

const TOKEN = "outage_test_token";
/** How long the receiver holds each delivery: attempts are in flight at every moment of the drill. */
const HOLD_MS = 200;
let pg: OwnPostgres;
let db: string;
let nodes: ServerProcess[] = [];
let rx: Receiver;
/** Attempts of each message at the receiver right now; the ids ever attempted twice at once. */
const open = new Map<string, number>();
const overlapping = new Set<string>();
const attempts = new Map<string, number>();

const startNode = () =>
  spawnServer([BUN, MAIN, "--port", "0", "--db", db, "--node-timeout", "1500", "--log-level", "warn", "--workers", "2"], {
    env: { SVC_TOKEN: TOKEN },
    timeoutMs: 30_000,
  });

beforeAll(async () => {
  pg = await startOwnPostgres();
  db = await pg.createDatabase();
  rx = await startReceiver(async (req) => {
    const id = req.headers.get("svc-message-id")!;
    const now = (open.get(id) ?? 0) + 1;
    if (now > 1) overlapping.add(id);
    open.set(id, now);
    attempts.set(id, (attempts.get(id) ?? 0) + 1);
    await Bun.sleep(HOLD_MS);
    open.set(id, open.get(id)! - 1);
    return new Response("ok");
  });
  // One node first: it migrates; the second finds the schema in place.
  nodes = [await startNode()];
  nodes.push(await startNode());
}, 60_000);

afterAll(async () => {
  await Promise.all(nodes.map((n) => n.stop()));
  rx?.stop();
  await pg?.close();
}, 30_000);

const ready = async (n: ServerProcess) => (await fetch(`${n.url}/__svc/ready`).catch(() => null))?.status === 200;
const registered = async () => (await pg.query<{ n: string }>(db, "SELECT count(*) AS n FROM cluster_nodes"))[0]!.n;

/** About 100 publishes a second, alternating between the nodes; what was acknowledged (200) is kept. */
function startLoad() {
  const acknowledged: string[] = [];
  const unavailable: Array<{ status: number; body: unknown }> = [];
  let stopped = false;
  const sent: Array<Promise<void>> = [];
  const loop = (async () => {
    for (let i = 0; !stopped; i++) {
      const n = nodes[i % 2]!;
      sent.push(
        (async () => {
          const res = await fetch(`${n.url}/v2/publish/${rx.url}/m/${i}`, { method: "POST", body: `m${i}`, headers: { authorization: `Bearer ${TOKEN}` } });
          const body = await res.json().catch(() => null);
          if (res.status === 200) acknowledged.push((body as { messageId: string }).messageId);
          else unavailable.push({ status: res.status, body });
        })(),
      );
      await Bun.sleep(10);
    }
  })();
  return {
    acknowledged,
    unavailable,
    async stop() {
      stopped = true;
      await loop;
      await Promise.all(sent);
    },
  };
}

/** Waits until `count` more deliveries reached the receiver than now: the nodes deliver again. */
const progress = (count: number) => rx.waitFor(rx.received.length + count, { timeoutMs: 30_000 });
const allReady = async () => (await Promise.all(nodes.map(ready))).every(Boolean);
const inFlightOn = async (n: ServerProcess) =>
  ((await (await fetch(`${n.url}/__svc/status`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { messages: { inFlight: number } }).messages.inFlight;

/**
 * Runs `disrupt` while about 100 publishes a second go to the two nodes, then checks what no
 * outage may change: every acknowledged message delivered exactly once (no node died, so nothing
 * is delivered again, let alone twice at once), no message left live (an ACTIVE one nobody
 * attempts is lost), both nodes registered, and neither presumed the other dead.
 */
async function underLoad(disrupt: (load: ReturnType<typeof startLoad>) => Promise<void>) {
  await waitUntil(async () => (await allReady()) && (await registered()) === "2", { timeoutMs: 15_000, what: "both nodes ready and registered" });
  const load = startLoad();
  await progress(100);
  await disrupt(load);
  await load.stop();
  const acknowledged = load.acknowledged;
  expect(acknowledged.length).toBeGreaterThan(200);
  await waitUntil(() => acknowledged.every((id) => attempts.has(id)), { timeoutMs: 30_000, what: "every acknowledged message delivered" }).catch(() => {});
  expect(acknowledged.filter((id) => !attempts.has(id))).toEqual([]);
  await waitUntil(async () => (await pg.query<{ n: string }>(db, "SELECT count(*) AS n FROM messages"))[0]!.n === "0", { timeoutMs: 30_000, what: "no live message left" }).catch(() => {});
  expect(await pg.query(db, "SELECT id, state, claimed_by FROM messages")).toEqual([]);
  expect(await Promise.all(nodes.map(inFlightOn))).toEqual([0, 0]);
  expect([...overlapping]).toEqual([]);
  expect([...attempts].filter(([, n]) => n > 1).map(([id]) => id)).toEqual([]);
  expect(await registered()).toBe("2");
  for (const n of nodes) expect(n.output()).not.toContain("presumed dead");
  return load;
}

test("PostgreSQL crashed (pg_ctl stop -m immediate) and started again under load: nothing lost, no attempt twice, no node presumed dead", async () => {
  const load = await underLoad(async (load) => {
    await pg.crash();
    // Each node calls itself not ready once its last heartbeat is older than the node timeout:
    // both heartbeats in the database are then as old as a dead node's.
    await waitUntil(async () => (await Promise.all(nodes.map(ready))).every((r) => !r), { timeoutMs: 15_000, what: "both nodes not ready" });
    await pg.start();
    await waitUntil(allReady, { timeoutMs: 15_000, what: "both nodes ready again" });
    // Long enough for a node to judge the other (the node timeout, several heartbeats): 300
    // deliveries take about 3 s at this load.
    await progress(300);
    expect(load.unavailable.length).toBeGreaterThan(0);
  });
  // While the database was down, publishes answered 503 with a JSON error.
  for (const failure of load.unavailable) {
    expect(failure.status).toBe(503);
    expect(typeof (failure.body as { error?: unknown }).error).toBe("string");
  }
}, 60_000);

test("every connection to PostgreSQL cut three times under load: no claim left behind, nothing lost, no attempt twice", async () => {
  await underLoad(async () => {
    for (let cut = 0; cut < 3; cut++) {
      expect(await pg.terminateConnections(db)).toBeGreaterThan(0);
      await progress(100);
    }
  });
}, 60_000);
