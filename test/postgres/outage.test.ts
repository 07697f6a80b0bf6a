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
 * end, and no node presumes the other dead. A third drill cuts a connection while the commit of a
 * claim is written but not yet answered: the claim must be released, not left ACTIVE. The database
 * runs apart from the shared test server, which the other files use meanwhile. (A wait that runs
 * out is caught where the `expect` after it shows what is missing.)
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
    const atOnce = (open.get(id) ?? 0) + 1;
    if (atOnce > 1) overlapping.add(id);
    open.set(id, atOnce);
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
          const headers = { authorization: `Bearer ${TOKEN}` };
          const res = await fetch(`${n.url}/v2/publish/${rx.url}/m/${i}`, { method: "POST", body: `m${i}`, headers });
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
const inFlightOn = async (n: ServerProcess) => {
  const res = await fetch(`${n.url}/__svc/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return ((await res.json()) as { messages: { inFlight: number } }).messages.inFlight;
};
const liveCount = async () => Number((await pg.query<{ n: string }>(db, "SELECT count(*) AS n FROM messages"))[0]!.n);

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
  const allDelivered = () => acknowledged.every((id) => attempts.has(id));
  await waitUntil(allDelivered, { timeoutMs: 30_000, what: "every acknowledged message delivered" }).catch(() => {});
  expect(acknowledged.filter((id) => !attempts.has(id))).toEqual([]);
  await waitUntil(async () => (await liveCount()) === 0, { timeoutMs: 30_000, what: "no live message left" }).catch(() => {});
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

/**
 * Makes the commit of every transaction that claims a message of `path` wait for a synchronous
 * standby that never connects: the commit is written (it stands once the wait ends, however it
 * ends) but not answered, as when a connection breaks during COMMIT. Other commits are answered
 * as usual (synchronous_commit is `local` by default meanwhile).
 */
async function unansweredClaims(path: string) {
  const admin = db.replace(/\/[^/]+$/, "/postgres");
  const setSystem = async (sql: string[]) => {
    for (const statement of sql) await pg.query(admin, statement);
    await pg.query(admin, "SELECT pg_reload_conf()");
  };
  await pg.query(db, "CREATE TABLE drill (armed boolean NOT NULL)");
  await pg.query(db, "INSERT INTO drill VALUES (true)");
  await pg.query(db, `CREATE FUNCTION drill_wait() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF (SELECT armed FROM drill) THEN PERFORM set_config('synchronous_commit', 'remote_apply', true); END IF;
      RETURN NEW;
    END $$`);
  await pg.query(db, `CREATE TRIGGER drill_wait AFTER UPDATE OR INSERT ON messages FOR EACH ROW
    WHEN (NEW.state = 'ACTIVE' AND strpos(NEW.url, '${path}') > 0) EXECUTE FUNCTION drill_wait()`);
  await setSystem(["ALTER SYSTEM SET synchronous_commit = 'local'", "ALTER SYSTEM SET synchronous_standby_names = 'nobody'"]);
  return {
    /** Backends of the nodes whose commit waits for the standby now. */
    waiting: async () => (await pg.query(admin, "SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'")).length,
    async disarm() {
      await pg.query(db, "UPDATE drill SET armed = false");
      await setSystem(["ALTER SYSTEM RESET synchronous_commit", "ALTER SYSTEM RESET synchronous_standby_names"]);
    },
    async remove() {
      await pg.query(db, "DROP TABLE drill CASCADE");
      await pg.query(db, "DROP FUNCTION drill_wait() CASCADE");
    },
  };
}

test("a claim committed but never answered (its connection cut during COMMIT) is released and delivered once", async () => {
  const live = async () => (await pg.query<{ id: string }>(db, "SELECT id FROM messages")).map((r) => r.id);
  const deliveries = (i: number) => rx.received.filter((r) => r.path === `/unanswered/${i}`).length;
  await waitUntil(async () => (await allReady()) && (await live()).length === 0, { timeoutMs: 15_000, what: "both nodes ready and idle" });
  const drill = await unansweredClaims("/unanswered/");
  const answers: Array<Promise<number>> = [];
  try {
    // One message at a time until a claim's commit waits: the first, unless the new settings were
    // still on their way (that message is then delivered as usual).
    await waitUntil(async () => {
      if ((await drill.waiting()) > 0) return true;
      const i = answers.length;
      if (i === 0 || deliveries(i - 1) > 0) {
        const headers = { authorization: `Bearer ${TOKEN}` };
        const url = `${nodes[i % 2]!.url}/v2/publish/${rx.url}/unanswered/${i}`;
        answers.push(fetch(url, { method: "POST", body: `u${i}`, headers }).then((r) => r.status));
      }
      return false;
    }, { timeoutMs: 15_000, what: "a claim's commit waiting for its answer" });
    // Cut while it waits: the commit stands, its node is told it failed.
    expect(await pg.terminateConnections(db)).toBeGreaterThan(0);
  } finally {
    await drill.disarm();
  }
  const unanswered = answers.length - 1;
  // Stored whatever its publish was answered (the claim was in its publish's commit, or in a later one).
  await waitUntil(() => deliveries(unanswered) > 0, { timeoutMs: 30_000, what: "the unanswered claim's message delivered" }).catch(() => {});
  expect(deliveries(unanswered)).toBe(1);
  await waitUntil(async () => (await live()).length === 0, { timeoutMs: 30_000, what: "no live message left" }).catch(() => {});
  expect(await pg.query(db, "SELECT id, state, claimed_by FROM messages")).toEqual([]);
  expect(await Promise.all(nodes.map(inFlightOn))).toEqual([0, 0]);
  // Every message of the drill delivered exactly once, none attempted twice at once.
  expect(Array.from({ length: answers.length }, (_, i) => deliveries(i))).toEqual(answers.map(() => 1));
  expect([...overlapping]).toEqual([]);
  expect(await registered()).toBe("2");
  for (const n of nodes) expect(n.output()).not.toContain("presumed dead");
  await Promise.all(answers);
  await drill.remove();
}, 60_000);
