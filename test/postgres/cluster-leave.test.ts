import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { BUN, MAIN, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { freshDatabase } from "../helpers/postgres.ts";
import { startReceiver, type Receiver } from "../helpers/receiver.ts";
import { waitUntil } from "../helpers/wait.ts";

/**
 * A node that stops cleanly tells the others as it leaves: they deliver the messages it handed
 * back and take its flow-control partitions at once. The heartbeat here is two minutes (a fifth
 * of the node timeout), far beyond the waits below: without the notification both would wait for
 * the next heartbeat (the fallback poll), and a key hashing to a free partition with them.
 */

const TOKEN = "cluster_leave_token";
const KEYS = 24;
let db: string;
let nodes: ServerProcess[] = [];
let rx: Receiver;
const holds: Array<() => void> = [];

const startNode = () =>
  spawnServer(
    [BUN, MAIN, "--port", "0", "--db", db, "--node-timeout", "600000", "--log-level", "warn", "--workers", "2"]
      .concat(["--shutdown-timeout", "200"]),
    { env: { SVC_TOKEN: TOKEN }, timeoutMs: 30_000 },
  );

beforeAll(async () => {
  db = await freshDatabase();
  // "/held" answers only once the test ends: its attempt is still in flight when its node stops.
  rx = await startReceiver(async (req) => {
    if (req.path === "/held") await new Promise<void>((resolve) => holds.push(resolve));
    return new Response("ok");
  });
  nodes = [await startNode()];
  nodes.push(await startNode());
}, 90_000);

afterAll(async () => {
  for (const release of holds) release();
  await Promise.all(nodes.map((n) => n.stop()));
  rx.stop();
});

test("a node that stops cleanly hands its in-flight messages and partitions to the others at once", async () => {
  const [leaving, staying] = nodes as [ServerProcess, ServerProcess];
  const pg = new SQL(db);
  try {
    type Owner = { node_id: string | null; n: number };
    const ownerOf = async () =>
      (await pg`SELECT node_id, count(*)::int AS n FROM cluster_partitions GROUP BY node_id`) as Owner[];
    // The first node took every partition as it joined; the second finds none free and would take
    // its share at a heartbeat of the first (which gives back what is above its share) and then of its own.
    const before = await ownerOf();
    expect(before).toHaveLength(1);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const held = await fetch(`${leaving.url}/v2/publish/${rx.url}/held`, { method: "POST", body: "h", headers: auth });
    expect(held.status).toBe(200);
    await rx.waitFor(1, { match: (r) => r.path === "/held" });
    // Past its shutdown timeout the attempt is given up and the message goes back, due now.
    expect(await leaving.stop()).toBe(0);
    await rx.waitFor(2, { match: (r) => r.path === "/held", timeoutMs: 30_000 });
    await waitUntil(
      async () => {
        const owners = await ownerOf();
        return owners.length === 1 && owners[0]!.node_id !== null && owners[0]!.node_id !== before[0]!.node_id;
      },
      { what: "every partition leased to the node that stayed", timeoutMs: 30_000 },
    );

    // Keys hashing anywhere are delivered by the node that stayed.
    await Promise.all(
      Array.from({ length: KEYS }, (_, k) =>
        fetch(`${staying.url}/v2/publish/${rx.url}/key/${k}`, {
          method: "POST",
          body: `k${k}`,
          headers: { ...auth, "Svc-Flow-Control-Key": `key-${k}`, "Svc-Flow-Control-Value": "parallelism=1" },
        }).then((res) => expect(res.status).toBe(200)),
      ),
    );
    await rx.waitFor(KEYS, { match: (r) => r.path.startsWith("/key/"), timeoutMs: 30_000 });
  } finally {
    await pg.close();
  }
}, 120_000);
